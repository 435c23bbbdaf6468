// The runtime's hot path: decision-cache lookup, a kernel set per thread, arguments, enqueue.
// A cache hit hashes a few integers, takes a shared lock, counts the call (one relaxed atomic
// increment), and sets only the arguments that changed (buffers always: a released buffer's handle
// may be reused by a new one).
#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/error.h"
#include "runtime/entry.h"
#include "runtime/kernel_observer.h"
#include "runtime/runtime.h"

namespace ocltune {

std::size_t ShapeCodeHash::operator()(const ShapeCode& c) const noexcept {
  std::uint64_t h = reinterpret_cast<std::uintptr_t>(c.adapter) * 0x9e3779b97f4a7c15ULL;
  for (std::uint32_t i = 0; i < c.size; ++i) {
    h ^= static_cast<std::uint64_t>(c.dims[i]) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return static_cast<std::size_t>(h);
}

RawArgs raw_args(const KernelLaunch& launch) {
  RawArgs out;
  for (const KernelArg& arg : launch.args) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, cl::Buffer>) {
            out.push(RawArg::mem(v()));
          } else if constexpr (std::is_same_v<T, LocalMemory>) {
            out.push(RawArg::local(v.bytes));
          } else {
            out.push(RawArg::value(v));
          }
        },
        arg);
  }
  return out;
}

Runtime::Entry::Slot& Runtime::Entry::acquire() {
  for (;;) {
    const std::size_t n = slot_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i) {
      Slot& s = *slots[i];
      if (!s.busy.load(std::memory_order_relaxed) && !s.busy.exchange(true, std::memory_order_acquire)) return s;
    }
    {
      std::lock_guard lock(slots_mutex);
      const std::size_t m = slot_count.load(std::memory_order_relaxed);
      if (m < kSlots) {
        auto slot = std::make_unique<Slot>();
        slot->busy.store(true, std::memory_order_relaxed);
        try {
          for (const Step& step : steps) slot->kernels.emplace_back(step.program, step.kernel.c_str());
        } catch (const cl::Error& e) {
          throw ClError(e);
        }
        slot->last.resize(steps.size());
        Slot& s = *slot;
        slots[m] = std::move(slot);
        slot_count.store(m + 1, std::memory_order_release);
        return s;
      }
    }
    std::this_thread::yield();
  }
}

namespace {

bool out_of_order(cl_command_queue queue) {
  cl_command_queue_properties properties = 0;
  const cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr);
  if (err != CL_SUCCESS) throw ClError("clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)", err);
  return (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
}

}  // namespace

Runtime::Entry& Runtime::entry(const ShapeCode& code) {
  {
    std::shared_lock lock(entries_mutex_);
    auto it = entries_.find(code);
    if (it != entries_.end()) return *it->second;
  }
  std::unique_lock lock(entries_mutex_);
  auto& e = entries_[code];
  if (!e) e = std::make_unique<Entry>();
  return *e;
}

Runtime::Entry& Runtime::ready_entry(const DispatchAdapter& adapter, const ShapeCode& code, const void* call,
                                     cl_command_queue queue) {
  Entry* e = &entry(code);
  if (!e->ready.load(std::memory_order_acquire)) resolve(*e, adapter, call, queue);
  // Fast start: `upgrade` was set before `ready`, and never changes after.
  if (e->upgrade && e->upgrade->done.load(std::memory_order_acquire)) e = &upgrade(code, *e, adapter, call, queue);
  return *e;
}

Runtime::Entry& Runtime::upgrade(const ShapeCode& code, Entry& provisional, const DispatchAdapter& adapter,
                                 const void* call, cl_command_queue queue) {
  std::lock_guard once(provisional.resolve_mutex);  // one thread resolves the replacement
  {
    std::shared_lock lock(entries_mutex_);
    const auto it = entries_.find(code);
    if (it != entries_.end() && it->second.get() != &provisional) {  // replaced already, or reload()ed
      Entry& current = *it->second;
      if (!current.ready.load(std::memory_order_acquire)) resolve(current, adapter, call, queue, false);
      return current;
    }
  }
  // The prepared configuration's programs are built and its check remembered: this resolution is
  // quick, and takes the same candidate unless the background refused it (blocked).
  auto fresh = std::make_unique<Entry>();
  resolve(*fresh, adapter, call, queue, false, provisional.upgrade->ready ? &*provisional.upgrade->ready : nullptr);
  std::unique_lock lock(entries_mutex_);
  std::unique_ptr<Entry>& slot = entries_[code];
  if (slot.get() == &provisional) {
    retired_.push_back(std::move(slot));  // threads dispatching through it finish undisturbed
    ++upgrades_;
  } else if (slot) {  // reload() dropped the provisional entry meanwhile: keep the newer one
    retired_.push_back(std::move(fresh));
    return *slot;
  }
  slot = std::move(fresh);
  return *slot;
}

Decision Runtime::decide(const DispatchAdapter& adapter, const ShapeCode& code, const void* call) {
  return ready_entry(adapter, code, call, session_.queue()()).decision;
}

Dispatch Runtime::dispatch(const DispatchAdapter& adapter, const ShapeCode& code, const void* call,
                           cl_command_queue queue, const DispatchOptions& options) {
  Entry& e = ready_entry(adapter, code, call, queue);
  e.calls.fetch_add(1, std::memory_order_relaxed);
  const KernelObserver observer = kernel_observer();
  if (e.library) {
    DispatchOptions library = options;
    library.events = options.events || observer;
    Dispatch d = adapter.library_enqueue(call, queue, library);
    d.level = Level::kLibrary;
    if (observer && d.count > 0) {
      const std::string op = adapter.op();
      observer({op.c_str(), "clblast", "", Level::kLibrary, queue, d.events[d.count - 1]()}, kernel_observer_user());
    }
    if (!options.events) {  // the caller asked for none: drop the one the observer saw
      d.events = {};
      d.count = 0;
    }
    return d;
  }

  const std::size_t steps = e.steps.size();
  // Arguments on the stack for the usual plans; the rare longer plan (never fast) on the heap.
  RawArgs stack_args[kMaxSteps];
  std::vector<RawArgs> heap_args(steps > kMaxSteps ? steps : 0);
  RawArgs* args = steps > kMaxSteps ? heap_args.data() : stack_args;
  // A planned op holds its workspace from its plan to its last enqueue (threads enqueuing on one
  // queue interleave their kernels: issue 41), and its plan, whose buffers its raw arguments name.
  std::optional<WorkspacePool::Lease> lease;
  std::optional<LaunchPlan> plan;
  if (!e.fast || !adapter.fast_args(call, e.plan_args, std::span<RawArgs>(args, steps))) {
    lease.emplace(workspaces(queue).lease());
    plan.emplace(adapter.plan(call, e.decision.config, **lease));
    if (plan->kernels.size() != steps)
      throw Error(fmt::format("op {}: the plan changed its number of kernels", adapter.op()));
    for (std::size_t i = 0; i < steps; ++i) {
      const KernelLaunch& launch = plan->kernels[i];
      const Entry::Step& step = e.steps[i];
      // The resolved kernels run every later call of the shape; only their arguments and work sizes
      // may differ (below). A plan that would run other kernels means the shape code misses a field
      // that changes the plan: refused, never run with the wrong kernel.
      if (launch.kernel != step.kernel || launch.program.files != step.files ||
          launch.program.defines != step.defines || launch.program.options != step.options) {
        throw Error(
            fmt::format("op {}: this call's plan runs kernel {} where its shape's resolved plan runs {} (a "
                        "field of the call that changes the plan is missing from the shape code)",
                        adapter.op(), launch.kernel, step.kernel));
      }
      args[i] = raw_args(launch);
    }
  }

  Dispatch out;
  out.level = e.decision.level;
  Entry::Slot& slot = e.acquire();
  struct Release {
    Entry::Slot& slot;
    ~Release() { Entry::release(slot); }
  } release{slot};
  // Kernels of one op are chained by events only on an out-of-order queue: an in-order queue runs
  // each after the one before already, and every event and wait costs the driver work per kernel
  // (decision 0047).
  const bool chain = steps > 1 && out_of_order(queue);
  cl_event previous = nullptr;
  for (std::size_t i = 0; i < steps; ++i) {
    const Entry::Step& step = e.steps[i];
    cl_kernel kernel = slot.kernels[i]();
    RawArgs& last = slot.last[i];
    const RawArgs& now = args[i];
    for (std::uint32_t j = 0; j < now.count; ++j) {
      const RawArg& a = now.args[j];
      if (a.kind != RawArg::kMem && j < last.count && a == last.args[j]) continue;
      const cl_int err = clSetKernelArg(kernel, j, a.size, a.kind == RawArg::kLocal ? nullptr : a.bytes);
      if (err != CL_SUCCESS) {
        last.count = 0;
        throw ClError(fmt::format("clSetKernelArg({} argument {})", step.kernel, j), err);
      }
    }
    last.count = now.count;
    std::copy_n(now.args.begin(), now.count, last.args.begin());

    const bool first = i == 0;
    const cl_uint waits = first ? static_cast<cl_uint>(options.wait.size()) : (chain && previous ? 1u : 0u);
    const cl_event* wait_list = first ? (options.wait.empty() ? nullptr : options.wait.data())
                                      : (waits > 0 ? &previous : nullptr);  // a list of none must be null
    const bool want_event = options.events || (chain && i + 1 < steps) || observer;
    cl_event event = nullptr;
    // A planned call launches its plan's work sizes: they may depend on more than the shape code
    // holds (a 16-bit GEMM widens a single A for every batch entry where stride_a is 0, all of them
    // otherwise; resolving the shape with the one and running the other left entries unwidened).
    const KernelLaunch* planned = plan ? &plan->kernels[i] : nullptr;
    const cl_uint dims = planned ? static_cast<cl_uint>(planned->global.dimensions()) : step.dims;
    const std::size_t* global = planned ? planned->global.get() : step.global.data();
    const std::size_t* local = planned ? (planned->local.dimensions() == 0 ? nullptr : planned->local.get())
                                       : (step.driver_local ? nullptr : step.local.data());
    const cl_int err = clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, waits, wait_list,
                                              want_event ? &event : nullptr);
    if (!first && previous && !options.events) clReleaseEvent(previous);
    if (err != CL_SUCCESS) throw ClError(fmt::format("clEnqueueNDRangeKernel({})", step.kernel), err);
    if (observer) {
      const std::string op = adapter.op(), config = to_string(e.decision.config);
      observer({op.c_str(), step.kernel.c_str(), config.c_str(), e.decision.level, queue, event},
               kernel_observer_user());
    }
    // A plan longer than kMaxSteps keeps its last kernel's event in the last slot: the kernels are
    // chained (or in order on their queue), so that event completes after all of them.
    const std::size_t at = std::min(i, kMaxSteps - 1);
    if (options.events) out.events[at] = cl::Event(event, false);
    previous = event;
    out.count = static_cast<std::uint32_t>(at + 1);
  }
  // The last kernel's event exists unasked only for an observer, which retained what it keeps.
  if (!options.events && previous) clReleaseEvent(previous);
  return out;
}

}  // namespace ocltune
