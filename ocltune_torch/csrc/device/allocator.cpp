// The caching allocator of ocl memory: cl_mem segments split into blocks, fake device addresses.
//
// Like CUDA's caching allocator: requests are rounded to 512 bytes; requests up to 1 MiB come from
// a small pool of 2 MiB segments, larger ones from a large pool (20 MiB segments below 10 MiB, else
// the size rounded to 2 MiB); a free block is found best-fit, split, and merged with its free
// neighbours when it returns. Blocks are reused without waiting for the device, which is safe
// because every op of a device is enqueued on the one in-order queue of its runtime.
#include "ocltune_torch/csrc/device/allocator.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

// torch.accelerator's memory functions (memory_allocated, memory_stats, empty_cache, ...) ask the
// device's allocator for c10::DeviceAllocator's interface, and hit an internal assert when it is a
// plain c10::Allocator. Built against torch 2.15 (CI's), the allocator implements that interface;
// the GPU host's torch 2.11 keeps the plain one until its interface is checked there.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 15)
#define OCLTUNE_TORCH_DEVICE_ALLOCATOR 1
#include <c10/core/CachingDeviceAllocator.h>
#else
#define OCLTUNE_TORCH_DEVICE_ALLOCATOR 0
#endif

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"

namespace ocltune_torch {
namespace {

constexpr std::size_t kAlignment = 512;           // every block starts and ends on 512 bytes
constexpr std::size_t kSmallRequest = 1 << 20;    // requests up to 1 MiB come from the small pool
constexpr std::size_t kSmallSegment = 2 << 20;    // segments of the small pool
constexpr std::size_t kMediumRequest = 10 << 20;  // large-pool requests below 10 MiB share 20 MiB segments
constexpr std::size_t kMediumSegment = 20 << 20;
constexpr std::size_t kLargeRounding = 2 << 20;  // larger requests get a segment of their size rounded to 2 MiB
constexpr std::uintptr_t kFirstAddress = std::uintptr_t{1} << 40;

struct Segment {
  int device = 0;
  bool small = false;
  cl_mem buffer = nullptr;
  std::uintptr_t base = 0;  // its fake address range is [base, base + size)
  std::size_t size = 0;
};

struct Block {
  Segment* segment = nullptr;
  std::size_t offset = 0;  // bytes from the start of the segment
  std::size_t size = 0;
  bool allocated = false;
  Block* prev = nullptr;  // neighbours in the segment, by address
  Block* next = nullptr;
  std::uintptr_t address() const { return segment->base + offset; }
};

// Free blocks by (size, address): lower_bound finds the best fit, the lowest address among equals.
using Pool = std::map<std::pair<std::size_t, std::uintptr_t>, Block*>;

std::pair<std::size_t, std::uintptr_t> key_of(const Block* b) { return {b->size, b->address()}; }

struct DeviceState {
  Pool small_pool;
  Pool large_pool;
  MemoryStats stats;
  Pool& pool(bool small) { return small ? small_pool : large_pool; }
};

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

std::string format_bytes(std::uint64_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char text[64];
  if (u == 0) {
    std::snprintf(text, sizeof(text), "%llu bytes", static_cast<unsigned long long>(n));
  } else {
    std::snprintf(text, sizeof(text), "%.2f %s", v, units[u]);
  }
  return text;
}

bool is_out_of_memory(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY ||
         err == CL_INVALID_BUFFER_SIZE;
}

#if OCLTUNE_TORCH_DEVICE_ALLOCATOR
using AllocatorInterface = c10::DeviceAllocator;
#else
using AllocatorInterface = c10::Allocator;
#endif

class CachingAllocator final : public AllocatorInterface {
 public:
  c10::DataPtr allocate(std::size_t n) override {
    const int device = current_device();
    check_device_index(device);
    const c10::Device where(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
    if (n == 0) return c10::DataPtr(nullptr, where);
    Block* block = malloc_block(device, n);
    return c10::DataPtr(reinterpret_cast<void*>(block->address()), block, &CachingAllocator::delete_block, where);
  }

  // Our data pointers are not host pointers and need their context to be freed.
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    if (count == 0) return;
    const BufferRef to = resolve(dest);
    const BufferRef from = resolve(src);
    TORCH_CHECK(to.device == from.device, "ocltune_torch: copy_data between ocl:", from.device, " and ocl:", to.device);
    check_cl(clEnqueueCopyBuffer(device_queue(to.device), from.buffer, to.buffer, from.offset, to.offset, count, 0,
                                 nullptr, nullptr),
             "clEnqueueCopyBuffer");
  }

  BufferRef resolve_address(std::uintptr_t address) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = segments_.upper_bound(address);
    TORCH_CHECK(it != segments_.begin(), "ocltune_torch: ", reinterpret_cast<void*>(address),
                " is not the address of ocl memory");
    --it;
    const Segment* s = it->second;
    TORCH_CHECK(address < s->base + s->size, "ocltune_torch: ", reinterpret_cast<void*>(address),
                " is not the address of ocl memory (freed, or outside its allocation)");
    const std::size_t offset = address - s->base;
    return {s->buffer, offset, s->size - offset, s->device};
  }

  MemoryStats stats(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return state(device).stats;
  }

  void reset_peak(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats& s = state(device).stats;
    s.max_allocated = s.allocated;
    s.max_reserved = s.reserved;
  }

  void empty_cache(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    release_cached(device);
  }

  void reset_device_calls(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats& s = state(device).stats;
    s.device_allocs = 0;
    s.device_frees = 0;
  }

#if OCLTUNE_TORCH_DEVICE_ALLOCATOR
  // c10::DeviceAllocator, for torch.accelerator. The statistics we keep fill the aggregate entries
  // of CUDA's layout (what torch.accelerator.memory_allocated and friends read); the per-pool
  // entries and the counters we do not keep stay 0.
  bool initialized() override { return true; }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override {
    for (int d = 0; d < device_count(); ++d) empty_cache(d);
  }

  // One in-order queue per device: a block freed by one op is only reused by ops enqueued after it.
  void recordStream(const c10::DataPtr& /*ptr*/, c10::Stream /*stream*/) override {}

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    check_device_index(device);
    const MemoryStats m = stats(device);
    c10::CachingDeviceAllocator::DeviceStats out;
    constexpr auto all = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    out.allocated_bytes[all].current = out.active_bytes[all].current = m.allocated;
    out.allocated_bytes[all].peak = out.active_bytes[all].peak = m.max_allocated;
    out.reserved_bytes[all].current = m.reserved;
    out.reserved_bytes[all].peak = m.max_reserved;
    out.segment[all].current = m.segments;
    out.num_device_alloc = m.device_allocs;
    out.num_device_free = m.device_frees;
    return out;
  }

  void resetAccumulatedStats(c10::DeviceIndex device) override {
    check_device_index(device);
    reset_device_calls(device);
  }

  void resetPeakStats(c10::DeviceIndex device) override {
    check_device_index(device);
    reset_peak(device);
  }
#endif

 private:
  static void delete_block(void* ctx);

  DeviceState& state(int device) {
    if (devices_.empty()) devices_.resize(static_cast<std::size_t>(std::max(device_count(), 1)));
    return devices_.at(static_cast<std::size_t>(device));
  }

  Block* malloc_block(int device, std::size_t n) {
    const std::size_t size = round_up(n, kAlignment);
    TORCH_CHECK(size >= n, "ocltune_torch: cannot allocate ", n, " bytes");
    // Outside the lock: the first allocation of a device creates its runtime.
    const DeviceLimits& limits = device_limits(device);
    cl_context context = device_context(device);
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceState& s = state(device);
    const bool small = size <= kSmallRequest;
    Pool& pool = s.pool(small);
    Block* block = nullptr;
    auto it = pool.lower_bound({size, 0});
    if (it != pool.end()) {
      block = it->second;
      pool.erase(it);
    } else {
      block = new_segment(device, context, limits, size, small, s);
    }
    split(block, size, pool, small);
    block->allocated = true;
    s.stats.allocated += static_cast<std::int64_t>(block->size);
    s.stats.max_allocated = std::max(s.stats.max_allocated, s.stats.allocated);
    return block;
  }

  // A new segment holding one free block, not in any pool. Out of memory (the driver's, or the
  // device's size) releases the cached segments and tries once more, with the exact size.
  Block* new_segment(int device, cl_context context, const DeviceLimits& limits, std::size_t size, bool small,
                     DeviceState& s) {
    if (size > limits.max_alloc_bytes) out_of_memory(device, size, limits, s, "more than the largest allocation");
    std::size_t segment_size = small                   ? kSmallSegment
                               : size < kMediumRequest ? kMediumSegment
                                                       : round_up(size, kLargeRounding);
    if (segment_size > limits.max_alloc_bytes) segment_size = size;
    cl_mem buffer = nullptr;
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0) {
        release_cached(device);
        segment_size = size;
      }
      const bool fits = static_cast<std::uint64_t>(s.stats.reserved) + segment_size <= limits.global_mem_bytes;
      if (!fits) {
        if (attempt == 0) continue;
        out_of_memory(device, size, limits, s, "more than the device memory left");
      }
      cl_int err = CL_SUCCESS;
      buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, segment_size, nullptr, &err);
      if (err == CL_SUCCESS) break;
      if (!is_out_of_memory(err)) check_cl(err, "clCreateBuffer");
      if (attempt > 0) out_of_memory(device, size, limits, s, cl_error_name(err));
    }
    auto* segment = new Segment{device, small, buffer, next_address_, segment_size};
    // A gap between ranges, so that no address one past the end of a segment is inside the next.
    next_address_ += round_up(segment_size, kAlignment) + kAlignment;
    segments_[segment->base] = segment;
    s.stats.reserved += static_cast<std::int64_t>(segment_size);
    s.stats.max_reserved = std::max(s.stats.max_reserved, s.stats.reserved);
    ++s.stats.segments;
    ++s.stats.device_allocs;
    return new Block{segment, 0, segment_size};
  }

  [[noreturn]] void out_of_memory(int device, std::size_t size, const DeviceLimits& limits, const DeviceState& s,
                                  const char* why) {
    C10_THROW_ERROR(
        OutOfMemoryError,
        c10::str("ocltune_torch: ocl:", device, " is out of memory: tried to allocate ", format_bytes(size), " (", why,
                 "); the device has ", format_bytes(limits.global_mem_bytes),
                 " (CL_DEVICE_GLOBAL_MEM_SIZE), its largest allocation is ", format_bytes(limits.max_alloc_bytes),
                 " (CL_DEVICE_MAX_MEM_ALLOC_SIZE); ", format_bytes(static_cast<std::uint64_t>(s.stats.allocated)),
                 " allocated by PyTorch, ", format_bytes(static_cast<std::uint64_t>(s.stats.reserved)), " reserved"));
  }

  // Keeps `size` bytes of a free block and returns the rest to the pool. Large blocks are split only
  // when more than 1 MiB is left, so that the large pool does not fill up with small pieces.
  static void split(Block* block, std::size_t size, Pool& pool, bool small) {
    const std::size_t remaining = block->size - size;
    if (small ? remaining < kAlignment : remaining <= kSmallRequest) return;
    auto* rest = new Block{block->segment, block->offset + size, remaining};
    rest->prev = block;
    rest->next = block->next;
    if (block->next) block->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool[key_of(rest)] = rest;
  }

  void free_block(Block* block) {
    std::lock_guard<std::mutex> lock(mutex_);
    DeviceState& s = state(block->segment->device);
    s.stats.allocated -= static_cast<std::int64_t>(block->size);
    block->allocated = false;
    Pool& pool = s.pool(block->segment->small);
    if (Block* prev = block->prev; prev && !prev->allocated) {
      pool.erase(key_of(prev));
      prev->size += block->size;
      prev->next = block->next;
      if (block->next) block->next->prev = prev;
      delete block;
      block = prev;
    }
    if (Block* next = block->next; next && !next->allocated) {
      pool.erase(key_of(next));
      block->size += next->size;
      block->next = next->next;
      if (next->next) next->next->prev = block;
      delete next;
    }
    pool[key_of(block)] = block;
  }

  // Releases the segments of `device` whose one block is free. The driver keeps a released buffer
  // alive until the commands enqueued on it have finished.
  void release_cached(int device) {
    DeviceState& s = state(device);
    for (Pool* pool : {&s.small_pool, &s.large_pool}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* b = it->second;
        if (b->prev || b->next) {
          ++it;
          continue;
        }
        Segment* segment = b->segment;
        clReleaseMemObject(segment->buffer);
        segments_.erase(segment->base);
        s.stats.reserved -= static_cast<std::int64_t>(segment->size);
        --s.stats.segments;
        ++s.stats.device_frees;
        delete segment;
        delete b;
        it = pool->erase(it);
      }
    }
  }

  std::mutex mutex_;
  std::map<std::uintptr_t, Segment*> segments_;  // by base address, to resolve any pointer inside one
  std::vector<DeviceState> devices_;
  std::uintptr_t next_address_ = kFirstAddress;
};

// Never destroyed: storages freed during interpreter shutdown still return their blocks here.
CachingAllocator& instance() {
  static CachingAllocator* allocator = new CachingAllocator();
  return *allocator;
}

void CachingAllocator::delete_block(void* ctx) { instance().free_block(static_cast<Block*>(ctx)); }

[[maybe_unused]] const bool registered = [] {
  c10::SetAllocator(c10::DeviceType::PrivateUse1, &instance());
  return true;
}();

}  // namespace

BufferRef resolve(const void* ptr) { return instance().resolve_address(reinterpret_cast<std::uintptr_t>(ptr)); }

MemoryStats memory_stats(int device) {
  check_device_index(device);
  return instance().stats(device);
}

void reset_peak_memory_stats(int device) {
  check_device_index(device);
  instance().reset_peak(device);
}

void empty_cache(int device) {
  check_device_index(device);
  instance().empty_cache(device);
}

c10::Allocator* ocl_allocator() { return &instance(); }

void resize_storage_bytes(const c10::Storage& storage, std::size_t new_bytes) {
  TORCH_CHECK(storage.resizable(), "ocltune_torch: trying to resize storage that is not resizable");
  const std::size_t old_bytes = storage.nbytes();
  const void* old_data = storage.data();
  c10::DeviceGuard guard(storage.device());
  c10::DataPtr fresh = instance().allocate(new_bytes);
  const std::size_t keep = std::min(old_bytes, new_bytes);
  if (keep > 0 && old_data) instance().copy_data(fresh.get(), old_data, keep);
  storage.set_data_ptr_noswap(std::move(fresh));
  storage.set_nbytes(new_bytes);
}

}  // namespace ocltune_torch
