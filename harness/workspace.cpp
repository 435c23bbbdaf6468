// Scratch device memory for ops that need intermediate buffers.
#include "harness/workspace.h"

#include "harness/error.h"

namespace ocltune {

cl::Buffer Workspace::get(std::size_t bytes, int slot) {
  std::lock_guard lock(mutex_);
  Entry& e = slots_[slot];
  if (e.bytes < bytes || e.bytes == 0) {
    try {
      e.buffer = cl::Buffer(context_, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 4));
    } catch (const cl::Error& err) {
      throw ClError(err);
    }
    e.bytes = std::max<std::size_t>(bytes, 4);
  }
  return e.buffer;
}

WorkspacePool::Lease WorkspacePool::lease() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) {
    all_.push_back(std::make_unique<Workspace>(context_));
    return Lease(*this, *all_.back());
  }
  Workspace* w = free_.back();
  free_.pop_back();
  return Lease(*this, *w);
}

void WorkspacePool::give_back(Workspace& workspace) {
  std::lock_guard lock(mutex_);
  free_.push_back(&workspace);
}

}  // namespace ocltune
