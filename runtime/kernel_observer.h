// The profiler's hook into dispatch: while an observer is set, every kernel a runtime enqueues (any
// runtime of the process) is reported with its event, its family, its configuration and the lookup
// level that chose it. Unset, dispatch pays one relaxed atomic load per op.
#pragma once

#include <atomic>

#include "harness/cl.h"
#include "runtime/adapter.h"

namespace ocltune {

struct KernelRecord {
  const char* op;          // the family ("gemm", "conv2d", ...)
  const char* kernel;      // the kernel's name in its program ("clblast" for the library)
  const char* config;      // the configuration, as to_string(Config) writes it ("" for the library)
  Level level;             // the lookup level that answered
  cl_command_queue queue;  // where it was enqueued
  cl_event event;          // borrowed: retain it to keep it past the call
};

using KernelObserver = void (*)(const KernelRecord& record, void* user);

// Sets (or, with nullptr, clears) the process's observer. The observer runs on the thread that
// dispatches, after the enqueue, and must not dispatch itself; `user` must outlive it.
void set_kernel_observer(KernelObserver observer, void* user);

namespace kernel_observer_detail {
extern std::atomic<KernelObserver> observer;
extern std::atomic<void*> user;
}  // namespace kernel_observer_detail

// The observer now, or nullptr (the one load dispatch pays when nobody observes).
inline KernelObserver kernel_observer() { return kernel_observer_detail::observer.load(std::memory_order_acquire); }
inline void* kernel_observer_user() { return kernel_observer_detail::user.load(std::memory_order_acquire); }

}  // namespace ocltune
