// A configuration: parameter name -> integer value, with its canonical text form.
#pragma once

#include <cstdint>
#include <map>
#include <set>
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

// A sub-space: allowed values per parameter, e.g. parsed from "MWG=32|64,KWI=2". A configuration
// passes when each restricted parameter it has takes an allowed value (a parameter of another
// variant restricts nothing). parse_restriction throws ocltune::Error on bad text.
using Restriction = std::map<std::string, std::set<std::int64_t>>;
Restriction parse_restriction(std::string_view text);
bool allowed(const Config& config, const Restriction& restriction);

}  // namespace ocltune
