// Seeded random numbers whose sequence is the same with every standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace ocltune {

// std::mt19937_64's output is fixed by the standard; the library's distributions are not, so the
// mappings onto ranges are our own.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t bits() { return engine_(); }
  // Uniform in [0, n) for n > 0 (multiply-shift).
  std::size_t index(std::size_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::size_t>((static_cast<u128>(engine_()) * n) >> 64);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return uniform() < p; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace ocltune
