// Scratch device memory for ops that need intermediate buffers (multi-pass reductions, Winograd
// transforms, split-K partial sums). Grows on demand and is reused across launches.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>

#include "harness/cl.h"

namespace ocltune {

class Workspace {
 public:
  explicit Workspace(cl::Context context) : context_(std::move(context)) {}

  // A buffer of at least `bytes` for slot `slot` (different slots never alias). The contents are
  // undefined; a buffer stays valid until the next request for the same slot with a larger size.
  cl::Buffer get(std::size_t bytes, int slot = 0);

 private:
  struct Entry {
    cl::Buffer buffer;
    std::size_t bytes = 0;
  };
  cl::Context context_;
  std::mutex mutex_;
  std::map<int, Entry> slots_;
};

}  // namespace ocltune
