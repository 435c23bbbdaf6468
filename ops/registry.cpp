// The registry of operator families: what `--ops` accepts and the order `--ops all` tunes them.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/error.h"
#include "ops/conv2d/conv2d_problem.h"
#include "ops/elementwise/elementwise_problem.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"
#include "ops/norm/norm_problem.h"
#include "ops/pool/pool_problem.h"
#include "ops/reduce/reduce_problem.h"
#include "ops/softmax/softmax_problem.h"

namespace ocltune {

const std::vector<const OpFamily*>& op_families() {
  static const std::vector<const OpFamily*> families = {
      &gemm_family(), &conv2d_family(), &reduce_family(),      &softmax_family(),
      &norm_family(), &pool_family(),   &elementwise_family(),
  };
  return families;
}

namespace {
std::vector<const OpFamily*>& registered_families() {
  static std::vector<const OpFamily*> families;
  return families;
}
}  // namespace

const OpFamily* find_family(std::string_view name) {
  for (const OpFamily* f : op_families()) {
    if (f->name() == name) return f;
  }
  for (const OpFamily* f : registered_families()) {
    if (f->name() == name) return f;
  }
  return nullptr;
}

void register_family(const OpFamily& family) {
  if (find_family(family.name())) throw Error(fmt::format("op family '{}' is already registered", family.name()));
  registered_families().push_back(&family);
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const OpFamily* f : op_families()) names.push_back(f->name());
  return names;
}

std::vector<std::string> preset_names() { return {"default", "quick", "test"}; }

ProblemList problems_from_json(const nlohmann::json& list, const std::vector<std::string>& ops) {
  if (!list.is_array()) throw Error("a shapes file must hold a JSON list of shape objects");
  ProblemList problems;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& shape = list[i];
    if (!shape.is_object() || !shape.contains("op") || !shape["op"].is_string()) {
      throw Error(fmt::format("shape #{} has no \"op\" string", i));
    }
    const std::string op = shape["op"].get<std::string>();
    const OpFamily* family = find_family(op);
    if (!family) {
      throw Error(
          fmt::format("shape #{}: unknown op '{}' (known: {})", i, op.substr(0, 64), fmt::join(family_names(), ", ")));
    }
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) continue;
    try {
      // "recorded" is what a runtime's record of dispatched problems adds (the level that answered,
      // the calls): information for people, not part of the shape.
      if (shape.contains("recorded")) {
        nlohmann::json plain = shape;
        plain.erase("recorded");
        problems.push_back(family->from_json(plain));
        continue;
      }
      problems.push_back(family->from_json(shape));
    } catch (const Error& e) {
      throw Error(fmt::format("shape #{} ({}): {}", i, op, e.what()));
    }
  }
  return problems;
}

}  // namespace ocltune
