// Device ceilings measured by microbenchmarks: copy bandwidth and peak fp32 FMA rate. Every
// memory-bound result is shown as a fraction of the first, compute-bound ones of the second.
#pragma once

#include "harness/timing.h"

namespace ocltune {

class Session;

struct Ceiling {
  double value = 0;  // GB/s or GFLOP/s, from the median time
  TimingStats stats;
};

// clEnqueueCopyBuffer of a large buffer (1 GiB on GPUs, less where the device allows less);
// bytes = read + write.
Ceiling measure_copy_bandwidth(Session& session);

// A kernel of independent FMA chains (kernels/peak.cl); 2 FLOP per FMA per lane.
Ceiling measure_peak_gflops(Session& session);

// Tensor-core input types, numbered as kernels/storage.cl's DTYPE of the storage they serve.
enum class MmaInputs { kTf32 = 0, kFp16 = 1, kBf16 = 2 };

// Independent mma.sync chains (kernels/peak_mma.cl): m16n8k8 on TF32 (2048 FLOP per warp and mma)
// or m16n8k16 on fp16/bf16 (4096). The ceiling of the tensor-core kernels. Only where the device
// satisfies nvidia_mma_tf32(); value 0 elsewhere.
Ceiling measure_mma_peak_gflops(Session& session, MmaInputs inputs);
inline Ceiling measure_mma_tf32_peak_gflops(Session& session) {
  return measure_mma_peak_gflops(session, MmaInputs::kTf32);
}

}  // namespace ocltune
