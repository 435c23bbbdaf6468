// Lookup of the OpenCL C sources under kernels/, embedded at build time.
#include "harness/kernel_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/embedded_file.h"
#include "harness/error.h"

namespace ocltune {

extern const EmbeddedFile kKernelFiles[];
extern const std::size_t kKernelFilesCount;

namespace {
std::vector<EmbeddedFile>& registered_files() {
  static std::vector<EmbeddedFile> files;
  return files;
}

const EmbeddedFile* find_file(std::string_view name) {
  for (std::size_t i = 0; i < kKernelFilesCount; ++i) {
    if (kKernelFiles[i].name == name) return &kKernelFiles[i];
  }
  for (const EmbeddedFile& f : registered_files()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}
}  // namespace

std::string_view kernel_file(std::string_view name) {
  if (const EmbeddedFile* f = find_file(name)) return f->text;
  throw Error(fmt::format("no kernel file '{}' (embedded: {})", name, fmt::join(kernel_file_names(), ", ")));
}

std::vector<std::string> kernel_file_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kKernelFilesCount; ++i) names.emplace_back(kKernelFiles[i].name);
  for (const EmbeddedFile& f : registered_files()) names.emplace_back(f.name);
  return names;
}

void register_kernel_files(const EmbeddedFile* files, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (find_file(files[i].name)) throw Error(fmt::format("kernel file '{}' is already embedded", files[i].name));
    registered_files().push_back(files[i]);
  }
}

}  // namespace ocltune
