// Event-based timing: warm-up, repeated runs until the spread settles, robust statistics.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "harness/cl.h"
#include "harness/launch.h"

namespace ocltune {

struct TimingStats {
  double median_ns = 0;
  double min_ns = 0;
  double max_ns = 0;
  double mean_ns = 0;
  // Robust relative spread: 1.4826 * median absolute deviation / median (a relative standard
  // deviation that one outlier, e.g. a context switch, cannot inflate).
  double spread = 0;
  int samples = 0;
  bool cut_short = false;  // stopped after the first batch: already far slower than abandon_above_ns
};

struct TimingPolicy {
  int warmup = 2;     // untimed runs first (caches, clocks, lazy driver work)
  int min_runs = 5;   // timed runs in the first batch
  int max_runs = 40;  // cap on timed runs
  double target_spread = 0.03;
  double max_seconds = 2.0;  // stop adding batches after this much measured device time
  // Stop after the first batch when its fastest run is slower than this (a hopeless candidate).
  double abandon_above_ns = std::numeric_limits<double>::infinity();
};

// Statistics of a set of samples (nanoseconds); empty input gives zeros.
TimingStats summarize(std::vector<double> samples_ns);

// Time from the earliest start to the latest end over the events of one execution of an op.
double event_span_ns(const std::vector<cl::Event>& events);

// One kernel of a plan, over repeated runs of the whole plan: medians of its own duration and of
// the gap between the previous kernel's end (or, for the first, nothing) and its start.
struct KernelTiming {
  std::string name;
  double median_ns = 0;
  double gap_ns = 0;
};

// Runs `plan` `runs` times after a warm-up and times each of its kernels (the queue must have
// profiling enabled). Where a plan's span exceeds the sum of its kernels, the gaps say why.
std::vector<KernelTiming> time_kernels(cl::CommandQueue& queue, const PreparedPlan& plan, int runs);

// Times `plan` on `queue` (which must have profiling enabled) following `policy`.
TimingStats time_plan(cl::CommandQueue& queue, const PreparedPlan& plan, const TimingPolicy& policy);

}  // namespace ocltune
