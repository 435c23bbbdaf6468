// A search space as data: parameters with value lists and constraints, possibly a union of
// variants (e.g. one per convolution algorithm), enumerated without ever listing invalid points.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"

namespace ocltune {

struct Parameter {
  std::string name;                  // UPPER_SNAKE, the kernel macro it sets
  std::vector<std::int64_t> values;  // allowed values, in the order neighbours are defined
  std::string meaning;               // one line for --help and reports
  // Added after rows were tuned without it: a configuration that lacks it ran its first value
  // (SearchSpace::complete). A missing parameter is an error otherwise.
  bool added_later = false;
};

struct Constraint {
  std::string description;          // e.g. "MWG % WPTM == 0"
  std::vector<std::string> params;  // the parameters it reads; checked once all are assigned
  std::function<bool(const Config&)> holds;
};

class SearchSpace {
 public:
  // One cartesian product of parameters, filtered by constraints.
  struct Variant {
    std::string name;
    std::vector<Parameter> parameters;
    std::vector<Constraint> constraints;
  };

  SearchSpace() = default;
  explicit SearchSpace(std::string variant_name);

  // Builders act on the last variant.
  SearchSpace& add(std::string name, std::vector<std::int64_t> values, std::string meaning = "");
  SearchSpace& constrain(std::string description, std::vector<std::string> params,
                         std::function<bool(const Config&)> holds);

  // The union of the configurations of `parts` (their variants side by side).
  static SearchSpace unite(std::vector<SearchSpace> parts);

  const std::vector<Variant>& variants() const { return variants_; }
  // Parameters of the first variant (the whole list for a single-variant space).
  const std::vector<Parameter>& parameters() const;

  // Every valid configuration, variant by variant, in lexicographic order of the value lists.
  // Stops after `limit` configurations.
  std::vector<Config> enumerate(std::size_t limit = SIZE_MAX) const;
  // Number of points before constraints (sum over variants of the product of value counts).
  double raw_size() const;
  // Empty when `config` belongs to the space; otherwise why not (unknown or missing parameter,
  // value not declared, which constraint fails).
  std::string check(const Config& config) const;
  bool contains(const Config& config) const { return check(config).empty(); }
  // Marks parameter `name` of every variant that has it as added later (Parameter::added_later); its
  // first value must be what configurations without it ran.
  SearchSpace& added_later(const std::string& name);
  // `config` as a point of the space: itself when it belongs, else with the parameters added later
  // that it lacks set to their first value, when the result belongs. Nothing when neither belongs.
  std::optional<Config> complete(const Config& config) const;

 private:
  std::vector<Variant> variants_;
};

}  // namespace ocltune
