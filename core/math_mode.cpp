// Names of the arithmetic modes (core/math_mode.h).
#include "core/math_mode.h"

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {

const char* math_name(MathMode math) { return math == MathMode::kTf32 ? "tf32" : "exact"; }

MathMode parse_math(const std::string& name) {
  if (name == "exact") return MathMode::kExact;
  if (name == "tf32") return MathMode::kTf32;
  throw Error(fmt::format("math '{}' is not \"exact\" or \"tf32\"", name.substr(0, 32)));
}

}  // namespace ocltune
