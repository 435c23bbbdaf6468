// Pinned host memory for pin_memory() and DataLoader(pin_memory=True): OpenCL buffers allocated in
// host memory and mapped, cached for reuse, each kept until the asynchronous copies using it are done.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Allocator.h>

#include "ocltune/ocltune.h"

namespace ocltune_torch {

// The allocator of pinned CPU memory the hooks give PyTorch.
c10::Allocator* pinned_allocator();

// Whether `ptr` lies inside pinned memory in use (what Tensor.is_pinned() asks).
bool is_pinned_ptr(const void* ptr);

// Enqueues dst = src without waiting, when src is pinned memory holding exactly dst's dense layout
// (same dtype, sizes and strides): the copy's event is recorded on src's block, which is not reused
// before the copy has read it. False, with nothing enqueued, for anything else.
bool enqueue_write_from_pinned(const at::Tensor& dst, const at::Tensor& src);

// Releases the cached pinned blocks that no copy still uses (torch.ocl.empty_cache()).
void release_cached_pinned_memory();

}  // namespace ocltune_torch
