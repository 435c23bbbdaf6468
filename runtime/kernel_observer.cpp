// The profiler's hook into dispatch.
#include "runtime/kernel_observer.h"

namespace ocltune {

namespace kernel_observer_detail {
std::atomic<KernelObserver> observer{nullptr};
std::atomic<void*> user{nullptr};
}  // namespace kernel_observer_detail

void set_kernel_observer(KernelObserver observer, void* user) {
  // The user pointer first: a dispatch that sees the new observer then sees its user.
  if (observer) kernel_observer_detail::user.store(user, std::memory_order_release);
  kernel_observer_detail::observer.store(observer, std::memory_order_release);
}

}  // namespace ocltune
