// CLBlast as the GEMM baseline: clblast::Gemm, or GemmStridedBatched for batched shapes.
#pragma once

#include "bench/baselines.h"
#include "ops/gemm/gemm.h"

namespace ocltune::bench {

// The GEMM family's baseline hook: one "clblast" baseline for every GEMM problem.
std::vector<BaselineSpec> clblast_gemm_baselines(const Problem& problem);

// CLBlast on packed operands of `shape` filled with random data; verified on a sample of outputs
// that covers every row and column against a float64 reference, timed whole (bench/operation_timer.h).
std::unique_ptr<Timed> make_clblast_gemm(Session& session, const GemmShape& shape);

}  // namespace ocltune::bench
