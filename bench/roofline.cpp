// The roofline model: the fastest time a problem can take given the device's measured ceilings.
#include "bench/roofline.h"

#include <algorithm>

namespace ocltune::bench {

Ceilings Ceilings::for_math(const std::string& math) const {
  Ceilings c = *this;
  if (math == "tf32" && tf32_gflops > 0) c.peak_gflops = tf32_gflops;
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
