// The profiler: a Kineto plugin that puts ocl kernels into torch.profiler traces. While a session
// records, the runtime's kernel observer (every family kernel, with its configuration and lookup
// level) and the plain-kernel launcher hand over each kernel's event with the correlation id of the
// aten op running on that thread; when the trace is processed, each event's device start and end,
// moved onto the host's clock, become a kernel activity linked to that op. PyTorch then counts
// the kernels' time as the op's device time (key_averages) and draws them on a device track.
#include "ocltune_torch/csrc/device/profiler.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// Kineto's plugin interface is compiled into libtorch_cpu; its headers are guarded by USE_KINETO.
#ifndef USE_KINETO
#define USE_KINETO 1
#endif
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <output_base.h>
#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#define OCLTUNE_TORCH_PRIVATEUSE1_PROFILER_REGISTRY 1
#endif

#include "ocltune_torch/csrc/device/device.h"

namespace ocltune_torch {
namespace {

using libkineto::ActivityType;

// One kernel as launched: everything but its times, which its event holds until the trace is read.
struct KernelSample {
  int device = -1;  // -1: find it from the queue when processing
  cl_command_queue queue = nullptr;
  std::string family, kernel, config, level;
  cl_event event = nullptr;       // retained
  std::uint64_t correlation = 0;  // the aten op's (0: launched outside any profiled op)
  std::int32_t thread = 0;
};

// The correlation ids Kineto pushes as aten ops start on this thread; the innermost is the op that
// launches what this thread enqueues.
thread_local std::vector<std::uint64_t> tls_correlation;

std::int32_t this_thread_id() { return static_cast<std::int32_t>(pthread_self() & 0x7fffffff); }

// What the active session (at most one) records; the launch paths see only the flag.
std::atomic<bool> g_observing{false};
std::mutex g_mutex;
std::vector<KernelSample> g_samples;

void add_sample(KernelSample s) {
  s.correlation = tls_correlation.empty() ? 0 : tls_correlation.back();
  s.thread = this_thread_id();
  clRetainEvent(s.event);
  std::lock_guard lock(g_mutex);
  g_samples.push_back(std::move(s));
}

void observe_family_kernel(const ocltune_kernel_record* r, void* /*user*/) {
  if (!g_observing.load(std::memory_order_relaxed) || !r->event) return;
  add_sample({.queue = r->queue,
              .family = r->op,
              .kernel = r->kernel,
              .config = r->config,
              .level = ocltune_level_name(r->level),
              .event = r->event});
}

std::int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// host ns = device ns + offset, from a marker's end on the device's queue and the host's clock just
// after it finished (so kernels may appear a few microseconds late, never early). 0 on a failure.
std::int64_t device_to_host_offset(int device) {
  cl_command_queue queue = device_queue(device);
  std::int64_t best = 0;
  bool found = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    cl_event marker = nullptr;
    if (clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker) != CL_SUCCESS) return 0;
    const bool done = clWaitForEvents(1, &marker) == CL_SUCCESS;
    const std::int64_t host = host_now_ns();
    cl_ulong end = 0;
    const bool timed =
        done && clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) == CL_SUCCESS;
    clReleaseEvent(marker);
    if (!timed) continue;
    const std::int64_t offset = host - static_cast<std::int64_t>(end);
    if (!found || offset < best) best = offset;  // the smallest: the least host latency after the marker
    found = true;
  }
  return best;
}

int device_of_queue(cl_command_queue queue) {
  for (int i = 0; i < device_count(); ++i) {
    if (device_runtime_created(i) && device_queue(i) == queue) return i;
  }
  return -1;
}

class OclProfilerSession : public libkineto::IActivityProfilerSession {
 public:
  explicit OclProfilerSession(bool kernels) : kernels_(kernels) {}
  ~OclProfilerSession() override {
    stop();
    for (KernelSample& s : samples_) clReleaseEvent(s.event);
  }

  void start() override {
    if (!kernels_) return;
    {
      std::lock_guard lock(g_mutex);
      for (KernelSample& s : g_samples) clReleaseEvent(s.event);
      g_samples.clear();
    }
    ocltune_set_kernel_observer(observe_family_kernel, nullptr);
    g_observing.store(true, std::memory_order_release);
    recording_ = true;
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    if (!recording_) return;
    g_observing.store(false, std::memory_order_release);
    ocltune_set_kernel_observer(nullptr, nullptr);
    std::lock_guard lock(g_mutex);
    samples_.insert(samples_.end(), g_samples.begin(), g_samples.end());
    g_samples.clear();
    recording_ = false;
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  void pushCorrelationId(uint64_t id) override { tls_correlation.push_back(id); }
  void popCorrelationId() override {
    if (!tls_correlation.empty()) tls_correlation.pop_back();
  }

  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override { processTrace(logger, nullptr, 0, 0); }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked,
                    int64_t /*start_time*/, int64_t /*end_time*/) override {
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(device_count()), 0);
    std::vector<bool> calibrated(offsets.size(), false);
    std::int64_t next_id = 1;
    for (KernelSample& s : samples_) {
      if (s.device < 0) s.device = device_of_queue(s.queue);
      if (s.device < 0 || static_cast<std::size_t>(s.device) >= offsets.size()) continue;
      cl_ulong start = 0, end = 0;
      if (clWaitForEvents(1, &s.event) != CL_SUCCESS ||
          clGetEventProfilingInfo(s.event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) != CL_SUCCESS ||
          clGetEventProfilingInfo(s.event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) != CL_SUCCESS) {
        errors_.push_back("ocltune: no profiling times for kernel " + s.kernel);
        continue;
      }
      const auto d = static_cast<std::size_t>(s.device);
      if (!calibrated[d]) {
        offsets[d] = device_to_host_offset(s.device);
        calibrated[d] = true;
      }
      devices_.insert(s.device);
      const ActivityType type = s.family == "memcpy"   ? ActivityType::GPU_MEMCPY
                                : s.family == "memset" ? ActivityType::GPU_MEMSET
                                                       : ActivityType::CONCURRENT_KERNEL;
      buffer_.emplace_activity(buffer_.span, type, s.kernel);
      libkineto::GenericTraceActivity& a = *buffer_.activities.back();
      a.startTime = static_cast<std::int64_t>(start) + offsets[d];
      a.endTime = static_cast<std::int64_t>(end) + offsets[d];
      a.device = s.device;
      a.resource = 0;  // the device's one in-order queue
      a.threadId = s.thread;
      a.id = static_cast<std::int32_t>(next_id++);
      a.flow.id = static_cast<std::uint32_t>(s.correlation);
      a.flow.type = libkineto::kLinkAsyncCpuGpu;
      a.flow.start = false;
      a.linked = s.correlation != 0 && linked ? linked(static_cast<std::int32_t>(s.correlation)) : nullptr;
      a.addMetadataQuoted("family", s.family);
      a.addMetadataQuoted("config", s.config);
      a.addMetadataQuoted("level", s.level);
      a.addMetadataQuoted("device",
                          std::to_string(s.device));  // (addMetadata formats with fmt, which torch does not export)
      a.addMetadataQuoted("correlation", std::to_string(s.correlation));
      ++buffer_.gpuOpCount;
      a.log(logger);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    const int device = devices_.empty() ? 0 : *devices_.begin();
    return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{
        device, device, "ocl:" + std::to_string(device), device_count() > device ? device_name(device) : "ocl"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> out;
    for (const int d : devices_) out.push_back({0, 0, d, "queue"});
    return out;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::make_unique<libkineto::CpuTraceBuffer>(std::move(buffer_));
  }

 private:
  bool kernels_;
  bool recording_ = false;
  std::vector<KernelSample> samples_;
  std::vector<std::string> errors_;
  std::set<int> devices_;
  libkineto::CpuTraceBuffer buffer_;
};

class OclActivityProfiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config& /*config*/) override {
    return std::make_unique<OclProfilerSession>(types.count(ActivityType::CONCURRENT_KERNEL) > 0);
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t /*ts_ms*/, int64_t /*duration_ms*/,
                                                                 const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "ocltune";
  std::set<ActivityType> activities_ = {ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                        ActivityType::GPU_MEMSET};
};

#ifdef OCLTUNE_TORCH_PRIVATEUSE1_PROFILER_REGISTRY
REGISTER_PRIVATEUSE1_PROFILER(OclActivityProfiler);
#else
// A torch without PyTorch's PrivateUse1 profiler registry: Kineto's own plugin list.
const bool registered = [] {
  libkineto::api().registerProfilerFactory([] { return std::make_unique<OclActivityProfiler>(); });
  return true;
}();
#endif

}  // namespace

bool kernels_observed() noexcept { return g_observing.load(std::memory_order_relaxed); }

void observe_plain_kernel(int device, const char* kernel, cl_event event) {
  if (!g_observing.load(std::memory_order_relaxed) || !event) return;
  add_sample({.device = device, .family = "plain", .kernel = kernel, .config = "", .level = "plain", .event = event});
}

void TransferEvent::report(int device, const char* what, std::size_t bytes) {
  if (!event_ || !g_observing.load(std::memory_order_relaxed)) return;
  add_sample({.device = device,
              .family = std::string(what).rfind("Memset", 0) == 0 ? "memset" : "memcpy",
              .kernel = what,
              .config = std::to_string(bytes) + " bytes",
              .level = "transfer",
              .event = event_});
}

}  // namespace ocltune_torch
