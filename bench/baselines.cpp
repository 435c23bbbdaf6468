// Baselines timed next to our kernels in the same process: the hook table per op family.
#include "bench/baselines.h"

#include <map>

#include "bench/clblast_gemm.h"
#include "bench/copy_baseline.h"

namespace ocltune::bench {
namespace {

// One entry per family with a library baseline. A family merged later adds its hook here, e.g.
// conv2d -> clblast::Convgemm for the shapes it supports.
const std::map<std::string, BaselineHook>& hooks() {
  static const std::map<std::string, BaselineHook> table = {{"gemm", clblast_gemm_baselines}};
  return table;
}

}  // namespace

std::vector<BaselineSpec> baselines_for(const Problem& problem) {
  std::vector<BaselineSpec> specs;
  if (auto it = hooks().find(problem.op()); it != hooks().end()) specs = it->second(problem);
  if (problem.memory_bound()) specs.push_back(copy_baseline(problem));
  return specs;
}

}  // namespace ocltune::bench
