// Baselines timed next to our kernels in the same process: one hook per op family, plus a copy
// of the same byte count for every memory-bound problem.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/timed.h"
#include "ops/problem.h"

namespace ocltune::bench {

// A baseline a problem can be compared with. `make` allocates and fills its own buffers (the
// problem's Evaluation keeps its operands private), so it is only called when the baseline is run.
struct BaselineSpec {
  std::string name;  // the last part of the benchmark name, e.g. "clblast"
  std::function<std::unique_ptr<Timed>(Session&)> make;
};

// A family's hook: the library baselines that apply to one of its problems (none is fine). Hooks
// read the shape from Problem::shape_json(), so they need no family's C++ types.
using BaselineHook = std::function<std::vector<BaselineSpec>(const Problem&)>;

// Every baseline of `problem`: its family's hook (GEMM: CLBlast Gemm / GemmStridedBatched), then
// "copy" when the problem is memory-bound.
std::vector<BaselineSpec> baselines_for(const Problem& problem);

}  // namespace ocltune::bench
