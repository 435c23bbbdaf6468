// Helpers shared by the suites.
#include "tests/test_session.h"

#include <unistd.h>

#include <filesystem>

namespace ocltune::testing {

std::string temp_path(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ocltune-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  fs::remove(p);
  fs::remove(p.string() + "-wal");
  fs::remove(p.string() + "-shm");
  return p.string();
}

}  // namespace ocltune::testing
