// Scratch device memory for ops that need intermediate buffers (multi-pass reductions, Winograd
// transforms, split-K partial sums). Grows on demand and is reused across launches.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

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

// The workspaces of one in-order queue, one per op being planned and enqueued at a time. An op's
// kernels pass data through its workspace between its first and last enqueue, and threads that
// enqueue on one queue interleave their kernels there: with one shared workspace, a split
// reduction's second pass read another thread's partial sums (issue 41). An op leases a workspace
// for its plan and enqueues and returns it after its last enqueue, so the next op to take it is
// behind those kernels on the queue. N threads dispatching at once hold N workspaces.
class WorkspacePool {
 public:
  explicit WorkspacePool(cl::Context context) : context_(std::move(context)) {}

  class Lease {
   public:
    Lease(WorkspacePool& pool, Workspace& workspace) : pool_(&pool), workspace_(&workspace) {}
    Lease(Lease&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)), workspace_(other.workspace_) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(*workspace_);
    }
    Workspace& operator*() const { return *workspace_; }

   private:
    WorkspacePool* pool_;
    Workspace* workspace_;
  };

  // A workspace no other lease holds (a new one when every one is taken).
  Lease lease();

 private:
  void give_back(Workspace& workspace);

  cl::Context context_;
  std::mutex mutex_;  // guards all_ and free_, for a push or a pop only
  std::vector<std::unique_ptr<Workspace>> all_;
  std::vector<Workspace*> free_;
};

}  // namespace ocltune
