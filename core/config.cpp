// A configuration: parameter name -> integer value, with its canonical text form.
#include "core/config.h"

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/error.h"

namespace ocltune {
namespace {

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

std::string to_string(const Config& config) {
  std::string out;
  for (const auto& [name, value] : config) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", name, value);
  }
  return out;
}

Config parse_config(std::string_view text) {
  Config config;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw Error(fmt::format("configuration item '{}' is not NAME=VALUE", item));
    const std::string_view name = item.substr(0, eq);
    const std::string_view value_text = item.substr(eq + 1);
    if (!valid_name(name)) throw Error(fmt::format("bad parameter name '{}'", name));
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc() || end != value_text.data() + value_text.size() || value_text.empty()) {
      throw Error(fmt::format("parameter {} has a non-integer value '{}'", name, value_text));
    }
    if (!config.emplace(std::string(name), value).second) throw Error(fmt::format("parameter {} appears twice", name));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) throw Error("configuration ends with ','");
  }
  return config;
}

nlohmann::json to_json(const Config& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : config) j[name] = value;
  return j;
}

Config config_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw Error("configuration JSON is not an object");
  Config config;
  for (const auto& [name, value] : json.items()) {
    if (!valid_name(name)) throw Error(fmt::format("bad parameter name '{}'", name.substr(0, 64)));
    if (!value.is_number_integer()) throw Error(fmt::format("parameter {} is not an integer", name));
    config[name] = value.get<std::int64_t>();
  }
  return config;
}

std::int64_t value_or(const Config& config, const std::string& name, std::int64_t fallback) {
  auto it = config.find(name);
  return it == config.end() ? fallback : it->second;
}

Restriction parse_restriction(std::string_view text) {
  Restriction restriction;
  // Reuses parse_config on each alternative: "MWG=32|64" -> MWG=32 and MWG=64.
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw Error(fmt::format("restriction '{}' is not NAME=V1|V2|...", item));
    const std::string name(item.substr(0, eq));
    std::string_view values = item.substr(eq + 1);
    while (true) {
      const std::size_t bar = values.find('|');
      const Config one = parse_config(fmt::format("{}={}", name, values.substr(0, bar)));
      restriction[name].insert(one.begin()->second);
      if (bar == std::string_view::npos) break;
      values.remove_prefix(bar + 1);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return restriction;
}

bool allowed(const Config& config, const Restriction& restriction) {
  for (const auto& [name, values] : restriction) {
    auto it = config.find(name);
    if (it != config.end() && !values.count(it->second)) return false;
  }
  return true;
}

}  // namespace ocltune
