// Pinned host memory: buffers created with CL_MEM_ALLOC_HOST_PTR and mapped once, handed to PyTorch
// as CPU memory.
//
// Why OpenCL's buffers and not malloc: on GPUs the driver page-locks CL_MEM_ALLOC_HOST_PTR memory, so
// a write from its mapped pointer is a DMA that runs while the host goes on (NVIDIA's OpenCL
// documentation recommends exactly this for fast transfers); from ordinary memory the driver stages
// through a pinned buffer of its own. On a CPU device (PoCL) both are a memcpy and the gain is only
// that non_blocking copies from it do not wait: the same code serves both.
//
// Like CUDA's caching host allocator: sizes are rounded to powers of two and a freed block is kept
// for the next request of its size, but only reused once every copy recorded on it has completed
// (its events), so freeing the source of a copy still in flight never lets new data overwrite it.
// Mapping uses a queue of its own per device: on the device's in-order queue a blocking map would
// wait for every op enqueued before it.
#include "ocltune_torch/csrc/device/pinned.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <c10/util/Exception.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/tensor_util.h"

namespace ocltune_torch {
namespace {

constexpr std::size_t kMinBlock = 512;

struct PinnedBlock {
  int device = 0;
  cl_mem buffer = nullptr;
  void* host = nullptr;
  std::size_t size = 0;
  std::vector<cl_event> pending;  // copies reading or writing it, not known to be complete
};

std::size_t round_up_pow2(std::size_t n) {
  std::size_t size = kMinBlock;
  while (size < n) size <<= 1;
  return size;
}

// Drops the events that have completed (or failed: either way nothing reads the block any more).
void prune(PinnedBlock& b) {
  std::vector<cl_event> left;
  for (cl_event e : b.pending) {
    cl_int status = CL_QUEUED;
    const cl_int err = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
    if (err != CL_SUCCESS || status == CL_COMPLETE || status < 0) {
      clReleaseEvent(e);
    } else {
      left.push_back(e);
    }
  }
  b.pending = std::move(left);
}

class PinnedAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t n) override {
    const c10::Device cpu(c10::DeviceType::CPU);
    if (n == 0) return c10::DataPtr(nullptr, cpu);
    const int device = current_device();
    PinnedBlock* block = take_cached(device, round_up_pow2(n));
    if (!block) block = create(device, round_up_pow2(n));
    std::lock_guard<std::mutex> lock(mutex_);
    live_[reinterpret_cast<std::uintptr_t>(block->host)] = block;
    return c10::DataPtr(block->host, block, &PinnedAllocator::free_block, cpu);
  }

  // Freeing needs the block (its buffer and events), not only the pointer.
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }

  // The live block holding [ptr, ptr + bytes), or nullptr.
  PinnedBlock* find(const void* ptr, std::size_t bytes) {
    const auto address = reinterpret_cast<std::uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.upper_bound(address);
    if (it == live_.begin()) return nullptr;
    --it;
    PinnedBlock* b = it->second;
    return address + std::max<std::size_t>(bytes, 1) <= it->first + b->size ? b : nullptr;
  }

  // Takes ownership of `event`: `block` is not reused before it completes.
  void record(PinnedBlock* block, cl_event event) {
    std::lock_guard<std::mutex> lock(mutex_);
    prune(*block);
    block->pending.push_back(event);
  }

  void release_cached() {
    std::vector<PinnedBlock*> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [key, b] : cached_) blocks.push_back(b);
      cached_.clear();
    }
    for (PinnedBlock* b : blocks) destroy(b);
  }

 private:
  static void free_block(void* ctx);

  PinnedBlock* take_cached(int device, std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [first, last] = cached_.equal_range({device, size});
    for (auto it = first; it != last; ++it) {
      PinnedBlock* b = it->second;
      prune(*b);
      if (!b->pending.empty()) continue;  // a copy may still read it
      cached_.erase(it);
      return b;
    }
    return nullptr;
  }

  PinnedBlock* create(int device, std::size_t size) {
    cl_int err = CL_SUCCESS;
    cl_mem buffer =
        clCreateBuffer(device_context(device), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, nullptr, &err);
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY || err == CL_OUT_OF_RESOURCES ||
        err == CL_INVALID_BUFFER_SIZE) {
      release_cached();  // what the cache holds may make room
      buffer = clCreateBuffer(device_context(device), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, nullptr, &err);
    }
    if (err != CL_SUCCESS) {
      C10_THROW_ERROR(OutOfMemoryError,
                      c10::str("ocltune_torch: cannot allocate ", size, " bytes of pinned host memory for ocl:", device,
                               ": ", cl_error_name(err), " (", err, ")"));
    }
    void* host = clEnqueueMapBuffer(map_queue(device), buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, nullptr,
                                    nullptr, &err);
    if (err != CL_SUCCESS) {
      clReleaseMemObject(buffer);
      check_cl(err, "clEnqueueMapBuffer");
    }
    return new PinnedBlock{device, buffer, host, size, {}};
  }

  void destroy(PinnedBlock* b) {
    if (!b->pending.empty()) clWaitForEvents(static_cast<cl_uint>(b->pending.size()), b->pending.data());
    for (cl_event e : b->pending) clReleaseEvent(e);
    // The driver keeps the buffer until the unmap is done.
    clEnqueueUnmapMemObject(map_queue(b->device), b->buffer, b->host, 0, nullptr, nullptr);
    clReleaseMemObject(b->buffer);
    delete b;
  }

  cl_command_queue map_queue(int device) {
    std::lock_guard<std::mutex> lock(queues_mutex_);
    if (queues_.empty()) queues_.resize(static_cast<std::size_t>(device_count()), nullptr);
    cl_command_queue& q = queues_.at(static_cast<std::size_t>(device));
    if (!q) {
      cl_int err = CL_SUCCESS;
      q = clCreateCommandQueue(device_context(device), device_runtime(device).device(), 0, &err);
      check_cl(err, "clCreateCommandQueue");
    }
    return q;
  }

  void give_back(PinnedBlock* b) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.erase(reinterpret_cast<std::uintptr_t>(b->host));
    cached_.insert({{b->device, b->size}, b});
  }

  std::mutex mutex_;                                                 // live_, cached_ and every block's pending events
  std::map<std::uintptr_t, PinnedBlock*> live_;                      // by host address
  std::multimap<std::pair<int, std::size_t>, PinnedBlock*> cached_;  // free, by (device, size)
  std::mutex queues_mutex_;
  std::vector<cl_command_queue> queues_;  // one per device, for mapping; never released
};

// Never destroyed: pinned tensors freed during interpreter shutdown still come back here.
PinnedAllocator& instance() {
  static PinnedAllocator* allocator = new PinnedAllocator();
  return *allocator;
}

void PinnedAllocator::free_block(void* ctx) { instance().give_back(static_cast<PinnedBlock*>(ctx)); }

}  // namespace

c10::Allocator* pinned_allocator() { return &instance(); }

bool is_pinned_ptr(const void* ptr) { return ptr && instance().find(ptr, 0) != nullptr; }

bool enqueue_write_from_pinned(const at::Tensor& dst, const at::Tensor& src) {
  if (!is_ocl(dst) || !src.is_cpu() || dst.numel() == 0 || src.scalar_type() != dst.scalar_type() ||
      src.sizes() != dst.sizes() || src.strides() != dst.strides() || !dst.is_non_overlapping_and_dense() ||
      src.is_conj() || src.is_neg()) {
    return false;
  }
  // Two dense tensors of equal sizes and strides hold the same bytes from their data pointers on.
  const std::size_t bytes = static_cast<std::size_t>(dst.numel()) * dst.element_size();
  PinnedBlock* block = instance().find(src.const_data_ptr(), bytes);
  if (!block) return false;
  const BufferRef to = buffer_of(dst);
  cl_event event = nullptr;
  check_cl(clEnqueueWriteBuffer(device_queue(dst.device().index()), to.buffer, CL_FALSE, to.offset, bytes,
                                src.const_data_ptr(), 0, nullptr, &event),
           "clEnqueueWriteBuffer");
  instance().record(block, event);
  return true;
}

void release_cached_pinned_memory() { instance().release_cached(); }

TORCH_LIBRARY_FRAGMENT(ocltune, m) { m.def("empty_pinned_cache() -> ()", &release_cached_pinned_memory); }

}  // namespace ocltune_torch
