// Operator families: the registry the CLI, tuner, benchmarks and tests look problems up in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/problem.h"

namespace ocltune {

class OpFamily {
 public:
  virtual ~OpFamily() = default;
  virtual std::string name() const = 0;         // e.g. "gemm"; what --ops takes
  virtual std::string description() const = 0;  // one line for --help
  // Shape presets: "default" (real models), "quick" (small, for CPUs and CI), "test" (odd sizes).
  virtual ProblemList preset(const std::string& preset) const = 0;
  // One problem from a JSON object of a --shapes file; throws ocltune::Error naming the bad field.
  virtual std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const = 0;
};

// All families, in the order `--ops all` tunes them.
const std::vector<const OpFamily*>& op_families();
// nullptr when there is no family of that name (registered ones included).
const OpFamily* find_family(std::string_view name);
// Adds a family outside the built-in list: find_family, --ops NAME and shapes files see it, --ops all
// does not. Test support registers its own families this way, before any lookup; not thread-safe.
void register_family(const OpFamily& family);
std::vector<std::string> family_names();

// The preset names every family understands.
std::vector<std::string> preset_names();

// Problems from a --shapes JSON file: a list of objects, each with "op" naming the family (and
// optionally "recorded", which runtime/dispatch_record.h writes and is ignored here).
// Only those of the families in `ops` are returned. Throws ocltune::Error on bad input.
ProblemList problems_from_json(const nlohmann::json& list, const std::vector<std::string>& ops);

}  // namespace ocltune
