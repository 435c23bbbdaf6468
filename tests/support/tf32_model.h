// TF32 rounding from its definition, for tests of the kernels that round operands (as cvt.rna and
// cuBLAS do): 11 significant bits, half away from zero (std::round). Infinity and NaN pass;
// subnormal inputs are not modelled (they keep fp32's fixed exponent).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ocltune::testing {

inline float tf32_model(float x) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  int e = 0;
  const double f = std::frexp(static_cast<double>(x), &e);  // |f| in [0.5, 1)
  const double r = std::ldexp(std::round(f * 2048.0), e - 11);
  if (std::abs(r) > std::numeric_limits<float>::max()) return std::copysign(std::numeric_limits<float>::infinity(), x);
  return static_cast<float>(r);
}

inline std::uint32_t float_bits(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  return u;
}

}  // namespace ocltune::testing
