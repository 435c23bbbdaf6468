// Lookup of the OpenCL C sources under kernels/, embedded at build time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ocltune {

// The text of kernels/<name>; throws ocltune::Error naming the known files if there is none.
std::string_view kernel_file(std::string_view name);
std::vector<std::string> kernel_file_names();

// Adds OpenCL C sources embedded outside kernels/ (test support registers its kernels this way,
// before any lookup); a name that exists already is an error. Not thread-safe.
struct EmbeddedFile;
void register_kernel_files(const EmbeddedFile* files, std::size_t count);

}  // namespace ocltune
