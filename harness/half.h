// Host-side conversions for 16-bit storage types (IEEE half and bfloat16), matching what kernels
// do with vload_half/vstore_half (round to nearest even) and bf16 bit shifts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ocltune {

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);  // round to nearest even; overflow to Inf; NaN stays NaN
float bf16_to_float(std::uint16_t b);
std::uint16_t float_to_bf16(float f);  // round to nearest even; NaN stays NaN

// Bitwise-exact widening of a whole buffer, for verification of 16-bit outputs.
std::vector<float> widen_half(std::span<const std::uint16_t> data);
std::vector<float> widen_bf16(std::span<const std::uint16_t> data);

// Unit roundoff of a storage type: 2^-24 (fp32), 2^-11 (fp16), 2^-8 (bf16).
double unit_roundoff(const char* dtype);

}  // namespace ocltune
