// Host-side conversions for 16-bit storage types (IEEE half and bfloat16).
#include "harness/half.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace ocltune {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: value = mantissa * 2^-24.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  if (std::isnan(f)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  const float a = std::fabs(f);
  if (a >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to Inf
  if (a < 0x1.0p-14f) {
    // Subnormal range: quantise to multiples of 2^-24 with round-to-nearest-even.
    const float q = std::nearbyint(a * 0x1.0p24f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));
  }
  const std::uint32_t ax = std::bit_cast<std::uint32_t>(a);
  std::uint32_t exponent = (ax >> 23) - 112;
  std::uint32_t mantissa = ax & 0x7fffffu;
  const std::uint32_t round_bits = mantissa & 0x1fffu;
  mantissa >>= 13;
  if (round_bits > 0x1000u || (round_bits == 0x1000u && (mantissa & 1u))) {
    if (++mantissa == 0x400u) {
      mantissa = 0;
      ++exponent;
    }
  }
  return static_cast<std::uint16_t>(sign | (exponent << 10) | mantissa);
}

float bf16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if (std::isnan(f)) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

std::vector<float> widen_half(std::span<const std::uint16_t> data) {
  std::vector<float> out(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) out[i] = half_to_float(data[i]);
  return out;
}

std::vector<float> widen_bf16(std::span<const std::uint16_t> data) {
  std::vector<float> out(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) out[i] = bf16_to_float(data[i]);
  return out;
}

double unit_roundoff(const char* dtype) {
  if (std::strcmp(dtype, "fp16") == 0) return 0x1.0p-11;
  if (std::strcmp(dtype, "bf16") == 0) return 0x1.0p-8;
  return 0x1.0p-24;
}

}  // namespace ocltune
