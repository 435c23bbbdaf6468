// fill_ and zero_: clEnqueueFillBuffer with the value's bytes, through a packed temporary for gaps.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/copy.h"
#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/profiler.h"
#include "ocltune_torch/csrc/device/tensor_util.h"

namespace ocltune_torch {
namespace {

// Fills the numel elements from t's first one: t is dense, so they are exactly its elements.
void fill_dense(const at::Tensor& t, const at::Tensor& pattern) {
  const BufferRef to = buffer_of(t);
  const std::size_t item = t.element_size();
  const std::size_t bytes = static_cast<std::size_t>(t.numel()) * item;
  TransferEvent event;
  check_cl(clEnqueueFillBuffer(device_queue(t.device().index()), to.buffer, pattern.const_data_ptr(), item, to.offset,
                               bytes, 0, nullptr, event.slot()),
           "clEnqueueFillBuffer");
  event.report(t.device().index(), "Memset", bytes);
}

at::Tensor& fill_scalar(at::Tensor& self, const at::Scalar& value) {
  check_ocl(self, "fill_", "self");
  if (self.numel() == 0) return self;
  // Filling is idempotent, so an expanded self is filled as PyTorch's CPU and CUDA kernels fill it: each
  // memory location once, through the view with every zero-stride dimension cut to one element.
  if (at::has_internal_overlap(self) == at::MemOverlap::Yes) {
    at::Tensor unique = self;
    for (std::int64_t d = 0; d < self.dim(); ++d) {
      if (self.stride(d) == 0) unique = unique.narrow(d, 0, 1);
    }
    if (!unique.is_same(self)) {
      fill_scalar(unique, value);
      return self;
    }
  }
  at::assert_no_internal_overlap(self);
  // The value converted to self's dtype on the host, as PyTorch converts it.
  const at::Tensor pattern = at::scalar_tensor(value, self.options().device(at::kCPU));
  if (self.is_non_overlapping_and_dense()) {
    fill_dense(self, pattern);
  } else {
    at::Tensor packed = at::empty(self.sizes(), self.options());
    fill_dense(packed, pattern);
    copy_on_device(self, packed);
  }
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
  return fill_scalar(self, value.item());
}

at::Tensor& zero(at::Tensor& self) { return fill_scalar(self, 0); }

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("fill_.Scalar", fill_scalar);
  m.impl("fill_.Tensor", fill_tensor);
  m.impl("zero_", zero);
}

}  // namespace ocltune_torch
