// Stable, platform-independent hashing for cache keys and device keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ocltune {

// FNV-1a, 64 bits: stable across hosts and runs (std::hash is not).
std::uint64_t fnv1a64(std::string_view data, std::uint64_t seed = 0xcbf29ce484222325ULL);

// 16 lowercase hex digits of fnv1a64(data).
std::string hash_hex(std::string_view data);

}  // namespace ocltune
