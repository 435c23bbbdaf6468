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

}  // namespace ocltune
