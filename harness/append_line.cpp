#include "harness/append_line.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

namespace ocltune {

bool append_line(const std::string& path, const std::string& line) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string text = line + "\n";
  const ssize_t written = ::write(fd, text.data(), text.size());
  ::close(fd);
  return written == static_cast<ssize_t>(text.size());
}

}  // namespace ocltune
