// Dispatch overhead of the runtime on a decision-cache hit, against a bare clEnqueueNDRangeKernel of
// the same kernel with the same arguments, both timed in this process; prints medians and ratios.
// ocltune_gemm is the same call through the C ABI (libocltune.so), the path ocltune_torch takes.
//   build/bench/dispatch_bench [--benchmark_repetitions=N]   (device: $OCLTUNE_BENCH_DEVICE, default 0)
#include <chrono>
#include <cstdlib>
#include <map>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "harness/error.h"
#include "harness/session.h"
#include "ocltune/ocltune.h"
#include "runtime/gemm.h"
#include "runtime/runtime.h"

namespace ocltune {
namespace {

// Commands are held back by a user event and released between batches, so that the device's worker
// threads (on a CPU device, the same cores) do not run kernels while enqueue calls are timed.
constexpr int kBatch = 256;

struct Setup {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Session> session;  // same context: builds the bare kernel
  cl::CommandQueue queue;
  cl::Buffer a, b, c;
  GemmCall call;
  PreparedPlan bare;               // the runtime's configuration, arguments already set
  ocltune_runtime capi = nullptr;  // a runtime of libocltune.so on the same context and device
  ocltune_gemm_args capi_args{};
};

Setup& setup() {
  static Setup s = [] {
    Setup x;
    const char* env = std::getenv("OCLTUNE_BENCH_DEVICE");
    RuntimeOptions options;
    options.use_system_db = options.use_user_db = false;
    x.runtime = Runtime::for_device_index(env ? std::atoi(env) : 0, options);
    const cl::Context& context = x.runtime->context();
    x.session = std::make_unique<Session>(x.runtime->device(), context);
    x.queue = cl::CommandQueue(context, x.runtime->device().device);
    const GemmShape shape{.m = 16, .n = 16, .k = 16};
    x.a = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * 16 * 4);
    x.b = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * 16 * 4);
    x.c = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * 16 * 4);
    x.call = {.shape = shape};
    x.call.packed();
    x.call.a = x.a();
    x.call.b = x.b();
    x.call.c = x.c();
    const Decision d = ops::gemm_decision(*x.runtime, x.call);
    Workspace workspace(context);
    x.bare = prepare(*x.session, gemm_plan(shape, packed_operands(shape, x.a, x.b, x.c), d.config, workspace));
    ops::gemm(*x.runtime, x.queue(), x.call);  // warm: the entry and one kernel set exist
    ocltune_options capi_options;
    ocltune_options_init(&capi_options);
    capi_options.use_system_db = capi_options.use_user_db = 0;
    if (ocltune_runtime_create(context(), x.runtime->device().device(), &capi_options, &x.capi) != OCLTUNE_SUCCESS) {
      throw Error(std::string("ocltune_runtime_create: ") + ocltune_last_error());
    }
    ocltune_gemm_args_init(&x.capi_args, 0, 0, 16, 16, 16, 1, x.a(), x.b(), x.c());
    if (ocltune_gemm(x.capi, x.queue(), &x.capi_args, 0, nullptr, nullptr, nullptr) != OCLTUNE_SUCCESS) {
      throw Error(std::string("ocltune_gemm: ") + ocltune_last_error());
    }
    x.queue.finish();
    return x;
  }();
  return s;
}

// Times `enqueue(wait_list)` per iteration; the gate and the drain are outside the timing.
template <typename Enqueue>
void run_gated(benchmark::State& state, Enqueue&& enqueue) {
  Setup& s = setup();
  cl::UserEvent gate(s.runtime->context());
  cl_event wait[] = {gate()};
  int n = 0;
  for (auto _ : state) {
    enqueue(wait);
    if (++n == kBatch) {
      state.PauseTiming();
      gate.setStatus(CL_COMPLETE);
      s.queue.finish();
      gate = cl::UserEvent(s.runtime->context());
      wait[0] = gate();
      n = 0;
      state.ResumeTiming();
    }
  }
  gate.setStatus(CL_COMPLETE);
  s.queue.finish();
}

void BM_BareEnqueue(benchmark::State& state) {
  Setup& s = setup();
  const auto& step = s.bare.steps[0];
  run_gated(state, [&](cl_event* wait) {
    cl_event event;
    clEnqueueNDRangeKernel(s.queue(), step.kernel(), step.global.dimensions(), nullptr, step.global.get(),
                           step.local.get(), 1, wait, &event);
    clReleaseEvent(event);
  });
}

// What a hand-written dispatcher does at least: set the buffer arguments, then enqueue.
void BM_BareSetBuffersAndEnqueue(benchmark::State& state) {
  Setup& s = setup();
  const auto& step = s.bare.steps[0];
  cl_mem a = s.a(), b = s.b(), c = s.c();
  run_gated(state, [&](cl_event* wait) {
    clSetKernelArg(step.kernel(), 5, sizeof(cl_mem), &a);
    clSetKernelArg(step.kernel(), 9, sizeof(cl_mem), &b);
    clSetKernelArg(step.kernel(), 13, sizeof(cl_mem), &c);
    cl_event event;
    clEnqueueNDRangeKernel(s.queue(), step.kernel(), step.global.dimensions(), nullptr, step.global.get(),
                           step.local.get(), 1, wait, &event);
    clReleaseEvent(event);
  });
}

void BM_RuntimeGemm(benchmark::State& state) {
  Setup& s = setup();
  run_gated(state, [&](cl_event* wait) {
    DispatchOptions options;
    options.wait = std::span<const cl_event>(wait, 1);
    benchmark::DoNotOptimize(ops::gemm(*s.runtime, s.queue(), s.call, options));
  });
}

// The same call through the C ABI: conversion and checks of ocltune_gemm, then ops::gemm.
void BM_CapiGemm(benchmark::State& state) {
  Setup& s = setup();
  run_gated(state, [&](cl_event* wait) {
    benchmark::DoNotOptimize(ocltune_gemm(s.capi, s.queue(), &s.capi_args, 1, wait, nullptr, nullptr));
  });
}

// One check of the call alone (sizes, layout, a clGetMemObjectInfo per buffer): what the C ABI paid
// twice per call before each path checked once (docs/decisions/0053).
void BM_CheckGemmCall(benchmark::State& state) {
  Setup& s = setup();
  for (auto _ : state) check_gemm_call(s.call);
}

// The three calls in every iteration, in rotating order, each timed on its own: the differences are
// paired, so the load of a shared machine (which moves all of them) cancels better than between runs.
void BM_PairedDifference(benchmark::State& state) {
  Setup& s = setup();
  const auto& step = s.bare.steps[0];
  double bare_ns = 0, runtime_ns = 0, capi_ns = 0;
  int first = 0;
  run_gated(state, [&](cl_event* wait) {
    const auto timed = [](double& total, auto&& call) {
      const auto t0 = std::chrono::steady_clock::now();
      call();
      total += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    };
    const auto call = [&](int which) {
      if (which == 0) {
        timed(bare_ns, [&] {
          cl_event event;
          clEnqueueNDRangeKernel(s.queue(), step.kernel(), step.global.dimensions(), nullptr, step.global.get(),
                                 step.local.get(), 1, wait, &event);
          clReleaseEvent(event);
        });
      } else if (which == 1) {
        timed(runtime_ns, [&] {
          DispatchOptions options;
          options.wait = std::span<const cl_event>(wait, 1);
          benchmark::DoNotOptimize(ops::gemm(*s.runtime, s.queue(), s.call, options));
        });
      } else {
        timed(capi_ns, [&] {
          benchmark::DoNotOptimize(ocltune_gemm(s.capi, s.queue(), &s.capi_args, 1, wait, nullptr, nullptr));
        });
      }
    };
    first = (first + 1) % 3;
    for (int i = 0; i < 3; ++i) call((first + i) % 3);
  });
  const double n = static_cast<double>(state.iterations());
  state.counters["bare_ns"] = bare_ns / n;
  state.counters["gemm_ns"] = runtime_ns / n;
  state.counters["capi_ns"] = capi_ns / n;
  state.counters["extra_ns"] = (runtime_ns - bare_ns) / n;
  state.counters["capi_extra_ns"] = (capi_ns - bare_ns) / n;
}

BENCHMARK(BM_BareEnqueue)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_BareSetBuffersAndEnqueue)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_RuntimeGemm)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_CapiGemm)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_CheckGemmCall)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_PairedDifference)->Unit(benchmark::kNanosecond);

// Collects the median of each benchmark's repetitions for the summary.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Aggregate || r.aggregate_name != "median") continue;
      medians_[r.run_name.function_name] = r.GetAdjustedRealTime();
      for (const auto& [name, counter] : r.counters) medians_[r.run_name.function_name + "." + name] = counter.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& medians() const { return medians_; }

 private:
  std::map<std::string, double> medians_;
};

}  // namespace
}  // namespace ocltune

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=10";
  bool has_repetitions = false;
  for (int i = 1; i < argc; ++i) has_repetitions |= std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
  if (!has_repetitions) args.push_back(repetitions.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  ocltune::MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& m = reporter.medians();
  const auto get = [&](const char* name) {
    auto it = m.find(name);
    return it == m.end() ? 0.0 : it->second;
  };
  const double bare = get("BM_BareEnqueue"), bare_args = get("BM_BareSetBuffersAndEnqueue"), rt = get("BM_RuntimeGemm");
  const double capi = get("BM_CapiGemm");
  const double check = get("BM_CheckGemmCall");
  if (bare > 0 && rt > 0) {
    fmt::print("\ndevice: {}\n", ocltune::setup().runtime->device().name);
    fmt::print("median ns per call: bare enqueue {:.0f}, set 3 buffers + enqueue {:.0f}, ops::gemm {:.0f}\n", bare,
               bare_args, rt);
    fmt::print("ops::gemm vs bare enqueue: {:+.2f} us extra per call ({:.2f}x)\n", (rt - bare) * 1e-3, rt / bare);
    if (check > 0) fmt::print("one check_gemm_call: {:.0f} ns\n", check);
    if (capi > 0) {
      fmt::print("ocltune_gemm (C ABI) {:.0f} ns: {:+.2f} us over ops::gemm, {:+.2f} us over bare enqueue\n", capi,
                 (capi - rt) * 1e-3, (capi - bare) * 1e-3);
    }
    if (bare_args > 0) {
      fmt::print("ops::gemm vs set buffers + enqueue: {:+.2f} us extra per call ({:.2f}x)\n", (rt - bare_args) * 1e-3,
                 rt / bare_args);
    }
    const double paired_bare = get("BM_PairedDifference.bare_ns"), paired_rt = get("BM_PairedDifference.gemm_ns");
    if (paired_bare > 0) {
      fmt::print("paired in one loop: bare {:.0f} ns, ops::gemm {:.0f} ns: {:+.2f} us extra per call ({:.2f}x)\n",
                 paired_bare, paired_rt, get("BM_PairedDifference.extra_ns") * 1e-3, paired_rt / paired_bare);
      const double paired_capi = get("BM_PairedDifference.capi_ns");
      fmt::print("paired in one loop: ocltune_gemm (C ABI) {:.0f} ns: {:+.2f} us extra per call ({:.2f}x)\n",
                 paired_capi, get("BM_PairedDifference.capi_extra_ns") * 1e-3, paired_capi / paired_bare);
    }
  }
  benchmark::Shutdown();
  return 0;
}
