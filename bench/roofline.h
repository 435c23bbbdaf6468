// The roofline model: the fastest time a problem can take given the device's measured ceilings.
#pragma once

#include <string>

namespace ocltune::bench {

struct Ceilings {
  double peak_gflops = 0;  // fp32 FMA microbenchmark
  double copy_gbs = 0;     // clEnqueueCopyBuffer, read + write bytes
  double tf32_gflops = 0;  // TF32 mma.sync microbenchmark where the device has tensor cores, else 0
  double fp16_gflops = 0;  // the same with fp16 inputs (m16n8k16), else 0
  double bf16_gflops = 0;  // the same with bf16 inputs, else 0

  // The ceilings a problem whose matrix units take `inputs` (Problem::matrix_inputs(): "tf32",
  // "fp16", "bf16", or "" for none) is placed against: the tensor-core rate of those inputs where
  // one was measured (against the fp32 FMA peak such results would read as several times 100%),
  // otherwise the FMA peak.
  Ceilings for_inputs(const std::string& inputs) const;
};

// max(flops / peak, bytes / bandwidth): compute time at the FMA peak or traffic time at copy
// bandwidth, whichever is longer. GFLOP/s = FLOP/ns, so the result is in nanoseconds; zero when a
// ceiling is unknown.
double roofline_bound_ns(const Ceilings& ceilings, double flops, double bytes);

// Fraction of the roofline bound that `measured_ns` reaches (1 = on the roof).
double roofline_fraction(const Ceilings& ceilings, double flops, double bytes, double measured_ns);

}  // namespace ocltune::bench
