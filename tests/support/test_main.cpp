// main() of every GoogleTest suite: test-only families join the registry before any test runs.
#include <gtest/gtest.h>

#include "tests/support/selftest.h"

int main(int argc, char** argv) {
  ocltune::register_selftest_family();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
