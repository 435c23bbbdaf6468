// Checked reading of shape fields from untrusted JSON: every failure names the field.
#include "core/shape_fields.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {

std::int64_t int_field(const nlohmann::json& shape, const char* name, std::int64_t lo, std::int64_t hi) {
  if (!shape.is_object() || !shape.contains(name)) throw Error(fmt::format("shape field '{}' is missing", name));
  const nlohmann::json& v = shape.at(name);
  if (!v.is_number_integer()) throw Error(fmt::format("shape field '{}' must be an integer", name));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
    throw Error(fmt::format("shape field '{}' = {} is outside [{}, {}]", name, v.get<std::uint64_t>(), lo, hi));
  }
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) throw Error(fmt::format("shape field '{}' = {} is outside [{}, {}]", name, x, lo, hi));
  return x;
}

std::int64_t int_field(const nlohmann::json& shape, const char* name, std::int64_t lo, std::int64_t hi,
                       std::int64_t fallback) {
  if (!shape.is_object() || !shape.contains(name)) return fallback;
  return int_field(shape, name, lo, hi);
}

bool bool_field(const nlohmann::json& shape, const char* name, bool fallback) {
  if (!shape.is_object() || !shape.contains(name)) return fallback;
  const nlohmann::json& v = shape.at(name);
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1))
    return v.get<std::int64_t>() == 1;
  throw Error(fmt::format("shape field '{}' must be true or false", name));
}

double number_field(const nlohmann::json& shape, const char* name, double fallback) {
  if (!shape.is_object() || !shape.contains(name)) return fallback;
  const nlohmann::json& v = shape.at(name);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw Error(fmt::format("shape field '{}' must be a finite number", name));
  return v.get<double>();
}

float float_field(const nlohmann::json& shape, const char* name, float fallback) {
  const double v = number_field(shape, name, fallback);
  if (std::abs(v) > static_cast<double>(std::numeric_limits<float>::max())) {
    throw Error(fmt::format("shape field '{}' = {} is beyond the range of a float", name, v));
  }
  return static_cast<float>(v);
}

std::string string_field(const nlohmann::json& shape, const char* name, const std::string& fallback) {
  if (!shape.is_object() || !shape.contains(name)) return fallback;
  const nlohmann::json& v = shape.at(name);
  if (!v.is_string()) throw Error(fmt::format("shape field '{}' must be a string", name));
  return v.get<std::string>();
}

void check_known_fields(const nlohmann::json& shape, std::initializer_list<const char*> known) {
  if (!shape.is_object()) throw Error("a shape must be a JSON object");
  for (const auto& item : shape.items()) {
    const std::string& key = item.key();
    if (key == "op") continue;
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      std::string known_list;
      for (const char* k : known) known_list += std::string(known_list.empty() ? "" : ", ") + k;
      throw Error(fmt::format("unknown shape field '{}' (known: {})", key.substr(0, 64), known_list));
    }
  }
}

}  // namespace ocltune
