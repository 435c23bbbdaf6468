// Lookup of the OpenCL C sources under kernels/, embedded at build time.
#include "harness/kernel_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/embedded_file.h"
#include "harness/error.h"

namespace ocltune {

extern const EmbeddedFile kKernelFiles[];
extern const std::size_t kKernelFilesCount;

std::string_view kernel_file(std::string_view name) {
  for (std::size_t i = 0; i < kKernelFilesCount; ++i) {
    if (kKernelFiles[i].name == name) return kKernelFiles[i].text;
  }
  throw Error(fmt::format("no kernel file '{}' (embedded: {})", name, fmt::join(kernel_file_names(), ", ")));
}

std::vector<std::string> kernel_file_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kKernelFilesCount; ++i) names.emplace_back(kKernelFiles[i].name);
  return names;
}

}  // namespace ocltune
