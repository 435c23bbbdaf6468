// Stable, platform-independent hashing for cache keys and device keys.
#include "harness/hash.h"

#include <fmt/format.h>

namespace ocltune {

std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hash_hex(std::string_view data) { return fmt::format("{:016x}", fnv1a64(data)); }

}  // namespace ocltune
