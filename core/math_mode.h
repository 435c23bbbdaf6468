// The arithmetic mode of a problem: exact fp32 FMA, or matrix units with TF32 inputs where the
// device has them (PyTorch's allow_tf32). A database key of its own; text only at the boundaries.
#pragma once

#include <string>

namespace ocltune {

enum class MathMode { kExact = 0, kTf32 = 1 };

const char* math_name(MathMode math);          // "exact", "tf32": the database's math column
MathMode parse_math(const std::string& name);  // throws ocltune::Error naming the known modes

}  // namespace ocltune
