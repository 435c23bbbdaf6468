// A search space as data: parameters with value lists and constraints, possibly a union of
// variants (e.g. one per convolution algorithm), enumerated without ever listing invalid points.
#include "core/space.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {
namespace {

// Constraints grouped by the depth (parameter position) at which all their inputs are assigned.
std::vector<std::vector<const Constraint*>> constraints_by_depth(const SearchSpace::Variant& v) {
  std::vector<std::vector<const Constraint*>> by_depth(v.parameters.size());
  for (const Constraint& c : v.constraints) {
    std::size_t depth = 0;
    for (const std::string& name : c.params) {
      auto it =
          std::find_if(v.parameters.begin(), v.parameters.end(), [&](const Parameter& p) { return p.name == name; });
      if (it == v.parameters.end())
        throw Error(fmt::format("constraint '{}' reads unknown parameter {}", c.description, name));
      depth = std::max(depth, static_cast<std::size_t>(it - v.parameters.begin()));
    }
    if (!by_depth.empty()) by_depth[depth].push_back(&c);
  }
  return by_depth;
}

void enumerate_variant(const SearchSpace::Variant& v, const std::vector<std::vector<const Constraint*>>& by_depth,
                       std::size_t depth, Config& config, std::vector<Config>& out, std::size_t limit) {
  if (out.size() >= limit) return;
  if (depth == v.parameters.size()) {
    out.push_back(config);
    return;
  }
  const Parameter& p = v.parameters[depth];
  for (std::int64_t value : p.values) {
    config[p.name] = value;
    bool ok = true;
    for (const Constraint* c : by_depth[depth]) {
      if (!c->holds(config)) {
        ok = false;
        break;
      }
    }
    if (ok) enumerate_variant(v, by_depth, depth + 1, config, out, limit);
    if (out.size() >= limit) break;
  }
  config.erase(p.name);
}

std::string check_variant(const SearchSpace::Variant& v, const Config& config) {
  if (config.size() != v.parameters.size()) {
    for (const auto& [name, value] : config) {
      if (std::none_of(v.parameters.begin(), v.parameters.end(), [&](const Parameter& p) { return p.name == name; })) {
        return fmt::format("unknown parameter {}", name);
      }
    }
  }
  for (const Parameter& p : v.parameters) {
    auto it = config.find(p.name);
    if (it == config.end()) return fmt::format("missing parameter {}", p.name);
    if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) {
      return fmt::format("{}={} is not one of the declared values", p.name, it->second);
    }
  }
  for (const Constraint& c : v.constraints) {
    if (!c.holds(config)) return fmt::format("constraint '{}' does not hold", c.description);
  }
  return {};
}

}  // namespace

SearchSpace::SearchSpace(std::string variant_name) { variants_.push_back({std::move(variant_name), {}, {}}); }

SearchSpace& SearchSpace::add(std::string name, std::vector<std::int64_t> values, std::string meaning) {
  if (variants_.empty()) variants_.push_back({"default", {}, {}});
  if (values.empty()) throw Error(fmt::format("parameter {} has no values", name));
  variants_.back().parameters.push_back({std::move(name), std::move(values), std::move(meaning)});
  return *this;
}

SearchSpace& SearchSpace::constrain(std::string description, std::vector<std::string> params,
                                    std::function<bool(const Config&)> holds) {
  if (variants_.empty()) variants_.push_back({"default", {}, {}});
  variants_.back().constraints.push_back({std::move(description), std::move(params), std::move(holds)});
  return *this;
}

SearchSpace SearchSpace::unite(std::vector<SearchSpace> parts) {
  SearchSpace all;
  for (SearchSpace& part : parts) {
    for (Variant& v : part.variants_) all.variants_.push_back(std::move(v));
  }
  return all;
}

const std::vector<Parameter>& SearchSpace::parameters() const {
  static const std::vector<Parameter> kNone;
  return variants_.empty() ? kNone : variants_.front().parameters;
}

std::vector<Config> SearchSpace::enumerate(std::size_t limit) const {
  std::vector<Config> out;
  for (const Variant& v : variants_) {
    Config config;
    enumerate_variant(v, constraints_by_depth(v), 0, config, out, limit);
  }
  return out;
}

double SearchSpace::raw_size() const {
  double total = 0;
  for (const Variant& v : variants_) {
    double product = 1;
    for (const Parameter& p : v.parameters) product *= static_cast<double>(p.values.size());
    total += product;
  }
  return total;
}

std::string SearchSpace::check(const Config& config) const {
  if (variants_.empty()) return "the search space is empty";
  std::string first_reason;
  for (const Variant& v : variants_) {
    std::string reason = check_variant(v, config);
    if (reason.empty()) return {};
    // Report the reason from the variant whose parameter names match, when there is one.
    const bool same_names = config.size() == v.parameters.size() &&
                            std::all_of(v.parameters.begin(), v.parameters.end(),
                                        [&](const Parameter& p) { return config.count(p.name) != 0; });
    if (same_names || first_reason.empty()) first_reason = variants_.size() > 1 ? v.name + ": " + reason : reason;
    if (same_names) return first_reason;
  }
  return first_reason;
}

SearchSpace& SearchSpace::added_later(const std::string& name) {
  for (Variant& v : variants_) {
    for (Parameter& p : v.parameters) {
      if (p.name == name) p.added_later = true;
    }
  }
  return *this;
}

std::optional<Config> SearchSpace::complete(const Config& config) const {
  if (contains(config)) return config;
  for (const Variant& v : variants_) {
    Config filled = config;
    for (const Parameter& p : v.parameters) {
      if (p.added_later && !filled.count(p.name) && !p.values.empty()) filled[p.name] = p.values.front();
    }
    if (filled.size() != config.size() && check_variant(v, filled).empty()) return filled;
  }
  return std::nullopt;
}

}  // namespace ocltune
