// The lookup chain's candidates (runtime/lookup.h), moved here from the runtime's cold path.
#include "runtime/lookup.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "runtime/candidate_order.h"

namespace ocltune {

std::string describe(const TunedEntry& e) {
  return fmt::format("{} database {}: device {}, shape {}, math {}", e.layer, e.path, e.device_key, e.shape_key,
                     e.math);
}

std::vector<Candidate> lookup_candidates(const Problem& problem, const LookupContext& c) {
  const std::string op = problem.op(), dtype = dtype_name(problem.dtype()), math = math_name(problem.math()),
                    key = problem.shape_key();
  const SearchSpace space = problem.space(c.device);
  // One candidate per level: the first usable configuration that level has. A tf32 call may run
  // what an exact call runs (exact arithmetic is within TF32's permission), so the rows of both math
  // modes compete at each level: of two rows of this very shape the one recorded faster, of the
  // nearest ones the nearer (tf32 on a tie). Without that, a tf32 call of a shape tuned only in exact
  // mode ran a built-in configuration where the exact call ran its tuned row (docs/decisions/0048).
  // A problem's rows as the lookup reads them: its dtype and key, and each math mode whose rows it may
  // run with the shape as those rows describe it (an exact row's shape names no math).
  struct RowsOf {
    std::string dtype, key;
    std::vector<std::pair<std::string, ShapeInfo>> maths;
  };
  const auto rows_of = [&](const Problem& p) {
    RowsOf r{dtype_name(p.dtype()), p.shape_key(), {}};
    const nlohmann::json p_shape = p.lookup_json();
    r.maths.emplace_back(math, shape_info(p_shape));
    if (p.math() == MathMode::kTf32) {
      nlohmann::json exact_shape = p_shape;
      exact_shape.erase("math");
      r.maths.emplace_back(math_name(MathMode::kExact), shape_info(exact_shape));
    }
    return r;
  };
  // The fastest usable row of this very shape among `r`'s math modes.
  const auto exact_row = [&](const RowsOf& r) {
    const TunedEntry* best = nullptr;
    for (const auto& m : r.maths) {
      const TunedEntry* row = c.table.exact(op, r.dtype, m.first, r.key);
      if (row && space.contains(row->config) && (!best || row->median_ns < best->median_ns)) best = row;
    }
    return best;
  };
  std::vector<Candidate> candidates;
  const RowsOf own = rows_of(problem);
  const TunedEntry* exact = exact_row(own);
  // A row of this shape in the call's own math mode (tf32: tuned with tensor cores).
  const TunedEntry* own_math = c.table.exact(op, dtype, math, key);
  const bool own_math_row = own_math && space.contains(own_math->config);
  if (exact) candidates.push_back({Level::kExact, exact->config, describe(*exact)});
  // The nearest usable row of `r` in any of its math modes, on this device, then on its class.
  const auto add_nearest = [&](const RowsOf& r, const std::string& source_prefix) {
    for (const bool same_device : {true, false}) {
      std::optional<std::pair<double, const TunedEntry*>> nearest;
      for (const auto& [m, m_shape] : r.maths) {
        for (const auto& [distance, tuned] :
             c.table.nearest(op, r.dtype, m, r.key, m_shape, same_device, c.max_nearest_distance)) {
          if (!space.contains(tuned->config) || (c.blocked && c.blocked(tuned->config))) continue;
          if (!nearest || distance < nearest->first) nearest = {distance, tuned};
          break;
        }
      }
      if (nearest) {
        candidates.push_back({same_device ? Level::kNearest : Level::kClass, nearest->second->config,
                              source_prefix + describe(*nearest->second), nearest->first});
      }
    }
  };
  // Problems whose configurations run this one unchanged (Problem::equivalent_problems: conv2d's
  // other epilogues, and fp32 for 16-bit storage). Their rows come after the call's own at each
  // level, checked at first dispatch like any borrowed row: of this dtype, the exact rows of the
  // equivalent shapes before the nearest of any shape (the configuration does not depend on the
  // epilogue: torch.compile's fused convolutions ran built-in configurations where eager's plain
  // ones had tuned rows); then the fp32 rows, exact before nearest (an autocast step ran every
  // convolution on a built-in configuration, measured on an H100 at 0.07-0.34 of cuDNN per layer
  // direction, where fp32 had tuned rows).
  std::vector<std::pair<RowsOf, std::string>> same_dtype, other_dtype;
  for (const auto& equivalent : problem.equivalent_problems()) {
    const bool same = equivalent->dtype() == problem.dtype();
    (same ? same_dtype : other_dtype)
        .emplace_back(rows_of(*equivalent),
                      same ? "equivalent shape's " : std::string(dtype_name(equivalent->dtype())) + " ");
  }
  const auto add_exact_of = [&](const std::vector<std::pair<RowsOf, std::string>>& group) {
    for (const auto& [r, prefix] : group) {
      if (const TunedEntry* row = exact_row(r)) {
        candidates.push_back({Level::kNearest, row->config, prefix + describe(*row), 0.0});
      }
    }
  };
  add_exact_of(same_dtype);
  add_nearest(own, "");
  for (const auto& [r, prefix] : same_dtype) add_nearest(r, prefix);
  add_exact_of(other_dtype);
  for (const auto& [r, prefix] : other_dtype) add_nearest(r, prefix);
  if (!c.library.empty()) {
    candidates.push_back({Level::kLibrary, {}, c.library});
  } else {
    candidates.push_back({Level::kBuiltin, problem.default_config(c.device), "built-in configuration"});
  }
  // TF32 allowed where there are TF32 units means tensor cores, as with cuBLAS and cuDNN: a
  // tensor-core configuration (a tf32 row's, or the built-in of a tf32 GEMM) before any that runs
  // on the FMA units, which an exact-math row of the shape would otherwise be (measured on the
  // H200: 4096x768x3072 ran its exact row at 0.17 of cuBLAS TF32). Where this very shape has a
  // tf32 row, the exact level's pick keeps the head, be it that row or the shape's exact row
  // recorded faster: that was measured (the tf32 tuning searched the tensor-core configurations).
  // 16-bit storage likewise, in either math mode: cuDNN and cuBLAS run fp16 and bf16 on tensor cores,
  // and a 16-bit convolution's built-in runs there (the implicit GEMM of conv2d_igemm_mma.cl) where
  // the fp32 rows it borrows compute on the FMA units. Measured in one command on an H100
  // (2026-12-07, resnet50 training, batch 32, autocast bf16): 41.72 ms with the tensor-core built-ins
  // first against 62.30 ms with the borrowed fp32 rows first (cuda 18.59 and 19.17 ms).
  if ((problem.math() == MathMode::kTf32 || problem.dtype() != DType::kFp32) && c.tf32_units) {
    const bool measured_first = own_math_row && !candidates.empty() && candidates.front().level == Level::kExact;
    matrix_units_first(candidates, measured_first,
                       [&](const Candidate& k) { return !k.config.empty() && problem.uses_matrix_units(k.config); });
  }

  return candidates;
}

}  // namespace ocltune
