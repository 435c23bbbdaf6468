// A configuration: parameter name -> integer value, with its canonical text form.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ocltune {

using Config = std::map<std::string, std::int64_t>;

// "KWG=16,MWG=64,..." with names sorted: the key for caches, the database and reports.
std::string to_string(const Config& config);

// Inverse of to_string. Throws ocltune::Error on anything that is not NAME=INT[,NAME=INT...]
// with names of [A-Z0-9_] and no repeats.
Config parse_config(std::string_view text);

nlohmann::json to_json(const Config& config);
// Accepts only an object of integer values (no floats, strings, nesting); throws ocltune::Error.
Config config_from_json(const nlohmann::json& json);

// Value of a parameter, or `fallback` when the configuration does not have it.
std::int64_t value_or(const Config& config, const std::string& name, std::int64_t fallback);

}  // namespace ocltune
