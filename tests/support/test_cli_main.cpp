// ocltune_test_cli: the ocltune command line with the test-only selftest family registered, for
// the CLI and robustness suites (a worker it spawns with --isolate is this binary too).
#include "cli/commands.h"
#include "tests/support/selftest.h"

int main(int argc, char** argv) {
  ocltune::register_selftest_family();
  return ocltune::cli_main(argc, argv);
}
