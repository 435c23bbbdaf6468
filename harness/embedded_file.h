// A text file compiled into the binary by cmake/EmbedFiles.cmake.
#pragma once

#include <cstddef>
#include <string_view>

namespace ocltune {

struct EmbeddedFile {
  const char* name;       // file name without directory, e.g. "gemm.cl"
  std::string_view text;  // exact file contents
};

}  // namespace ocltune
