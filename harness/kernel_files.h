// Lookup of the OpenCL C sources under kernels/, embedded at build time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ocltune {

// The text of kernels/<name>; throws ocltune::Error naming the known files if there is none.
std::string_view kernel_file(std::string_view name);
std::vector<std::string> kernel_file_names();

}  // namespace ocltune
