// Event-based timing: warm-up, repeated runs until the spread settles, robust statistics.
#include "harness/timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness/error.h"

namespace ocltune {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

TimingStats summarize(std::vector<double> samples_ns) {
  TimingStats s;
  if (samples_ns.empty()) return s;
  s.samples = static_cast<int>(samples_ns.size());
  s.median_ns = median_of(samples_ns);
  s.min_ns = *std::min_element(samples_ns.begin(), samples_ns.end());
  s.max_ns = *std::max_element(samples_ns.begin(), samples_ns.end());
  s.mean_ns = std::accumulate(samples_ns.begin(), samples_ns.end(), 0.0) / static_cast<double>(samples_ns.size());
  std::vector<double> deviations;
  deviations.reserve(samples_ns.size());
  for (double x : samples_ns) deviations.push_back(std::abs(x - s.median_ns));
  s.spread = s.median_ns > 0 ? 1.4826 * median_of(std::move(deviations)) / s.median_ns : 0;
  return s;
}

double event_span_ns(const std::vector<cl::Event>& events) {
  cl_ulong first_start = std::numeric_limits<cl_ulong>::max();
  cl_ulong last_end = 0;
  try {
    for (const cl::Event& e : events) {
      first_start = std::min(first_start, e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      last_end = std::max(last_end, e.getProfilingInfo<CL_PROFILING_COMMAND_END>());
    }
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  return last_end > first_start ? static_cast<double>(last_end - first_start) : 0.0;
}

TimingStats time_plan(cl::CommandQueue& queue, const PreparedPlan& plan, const TimingPolicy& policy) {
  try {
    for (int i = 0; i < policy.warmup; ++i) enqueue(queue, plan);
    queue.finish();
    std::vector<double> samples;
    double measured_ns = 0;
    bool first_batch = true;
    while (true) {
      // Enqueue a batch back to back, then read all events: one host synchronisation per batch.
      const int batch = first_batch ? policy.min_runs : std::max(1, policy.min_runs / 2);
      std::vector<std::vector<cl::Event>> runs;
      for (int i = 0; i < batch && static_cast<int>(samples.size() + runs.size()) < policy.max_runs; ++i) {
        runs.push_back(enqueue(queue, plan));
      }
      queue.finish();
      for (const auto& events : runs) {
        samples.push_back(event_span_ns(events));
        measured_ns += samples.back();
      }
      TimingStats stats = summarize(samples);
      if (first_batch && stats.min_ns > policy.abandon_above_ns) {
        stats.cut_short = true;
        return stats;
      }
      first_batch = false;
      const bool settled = stats.spread <= policy.target_spread;
      const bool capped = stats.samples >= policy.max_runs || measured_ns * 1e-9 >= policy.max_seconds;
      if (settled || capped || runs.empty()) return stats;
    }
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

std::vector<KernelTiming> time_kernels(cl::CommandQueue& queue, const PreparedPlan& plan, int runs) {
  try {
    for (int i = 0; i < 2; ++i) enqueue(queue, plan);
    queue.finish();
    const std::size_t n = plan.steps.size();
    std::vector<std::vector<double>> durations(n), gaps(n);
    for (int run = 0; run < runs; ++run) {
      const std::vector<cl::Event> events = enqueue(queue, plan);
      queue.finish();
      cl_ulong previous_end = 0;
      for (std::size_t k = 0; k < n && k < events.size(); ++k) {
        const cl_ulong start = events[k].getProfilingInfo<CL_PROFILING_COMMAND_START>();
        const cl_ulong end = events[k].getProfilingInfo<CL_PROFILING_COMMAND_END>();
        durations[k].push_back(end > start ? static_cast<double>(end - start) : 0.0);
        gaps[k].push_back(k > 0 && start > previous_end ? static_cast<double>(start - previous_end) : 0.0);
        previous_end = end;
      }
    }
    std::vector<KernelTiming> out;
    for (std::size_t k = 0; k < n; ++k) {
      out.push_back({.name = plan.steps[k].kernel.getInfo<CL_KERNEL_FUNCTION_NAME>(),
                     .median_ns = median_of(durations[k]),
                     .gap_ns = median_of(gaps[k])});
    }
    return out;
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

}  // namespace ocltune
