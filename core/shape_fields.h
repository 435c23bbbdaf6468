// Checked reading of shape fields from untrusted JSON: every failure names the field.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ocltune {

// Largest value any shape dimension may take: kernels index with 32-bit ints.
inline constexpr std::int64_t kMaxDimension = (std::int64_t{1} << 31) - 1;

// Integer field `name` of `shape` in [lo, hi]; `fallback` when absent (throws if absent and no
// fallback). Throws ocltune::Error for a non-integer or out-of-range value.
std::int64_t int_field(const nlohmann::json& shape, const char* name, std::int64_t lo, std::int64_t hi);
std::int64_t int_field(const nlohmann::json& shape, const char* name, std::int64_t lo, std::int64_t hi,
                       std::int64_t fallback);
bool bool_field(const nlohmann::json& shape, const char* name, bool fallback);
double number_field(const nlohmann::json& shape, const char* name, double fallback);
// A number that fits a float (what kernels take): a larger one would become infinite and could not
// be written back to JSON.
float float_field(const nlohmann::json& shape, const char* name, float fallback);
std::string string_field(const nlohmann::json& shape, const char* name, const std::string& fallback);

// Throws unless `shape` is an object whose keys are all in `known` ("op" is always allowed).
void check_known_fields(const nlohmann::json& shape, std::initializer_list<const char*> known);

}  // namespace ocltune
