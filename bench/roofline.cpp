// The roofline model: the fastest time a problem can take given the device's measured ceilings.
#include "bench/roofline.h"

#include <algorithm>

namespace ocltune::bench {

Ceilings Ceilings::for_inputs(const std::string& inputs) const {
  Ceilings c = *this;
  const double rate = inputs == "tf32"   ? tf32_gflops
                      : inputs == "fp16" ? fp16_gflops
                      : inputs == "bf16" ? bf16_gflops
                                         : 0;
  if (rate > 0) c.peak_gflops = rate;
  return c;
}

double roofline_bound_ns(const Ceilings& ceilings, double flops, double bytes) {
  if (ceilings.peak_gflops <= 0 || ceilings.copy_gbs <= 0) return 0;
  return std::max(flops / ceilings.peak_gflops, bytes / ceilings.copy_gbs);
}

double roofline_fraction(const Ceilings& ceilings, double flops, double bytes, double measured_ns) {
  if (measured_ns <= 0) return 0;
  return roofline_bound_ns(ceilings, flops, bytes) / measured_ns;
}

}  // namespace ocltune::bench
