// The caching allocator of ocl memory: cl_mem segments split into blocks, fake device addresses.
#pragma once

#include <cstddef>
#include <cstdint>

#include <c10/core/Allocator.h>
#include <c10/core/Storage.h>

#include "ocltune/ocltune.h"

namespace ocltune_torch {

// What a data pointer of an ocl tensor stands for. Data pointers are fake addresses (the first
// segment starts at 1 << 40), one range per segment, so PyTorch's pointer arithmetic on views
// (data_ptr + storage_offset * itemsize) stays inside the range of the segment.
struct BufferRef {
  cl_mem buffer = nullptr;
  std::size_t offset = 0;     // bytes from the start of the buffer
  std::size_t available = 0;  // bytes from offset to the end of the buffer
  int device = 0;
};
// Raises for a pointer that is inside no live segment.
BufferRef resolve(const void* ptr);

struct MemoryStats {
  std::int64_t allocated = 0;      // bytes of blocks in use (rounded to 512 bytes)
  std::int64_t max_allocated = 0;  // peak of allocated since the start or the last reset
  std::int64_t reserved = 0;       // bytes of cl_mem segments held, in use or cached
  std::int64_t max_reserved = 0;
  std::int64_t segments = 0;
  // clCreateBuffer / clReleaseMemObject calls since the start (CUDA's num_device_alloc and
  // num_device_free): a steady-state training step makes none.
  std::int64_t device_allocs = 0;
  std::int64_t device_frees = 0;
};
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
// Releases every segment of the device with no block in use.
void empty_cache(int device);

// The allocator registered for PrivateUse1.
c10::Allocator* ocl_allocator();

// Grows or shrinks a storage: a new block, the old bytes copied on the device (resize_, set_,
// untyped_storage().resize_()).
void resize_storage_bytes(const c10::Storage& storage, std::size_t new_bytes);

}  // namespace ocltune_torch
