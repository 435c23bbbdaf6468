// What the ops share: argument checks, a tensor's buffer and offset, dtype codes, merged layouts.
#include "ocltune_torch/csrc/device/tensor_util.h"

#include <c10/util/Exception.h>

namespace ocltune_torch {

void check_ocl(const at::Tensor& t, const char* op, const char* arg) {
  TORCH_CHECK(t.defined(), "ocltune_torch: ", op, ": ", arg, " is undefined");
  TORCH_CHECK(is_ocl(t), "ocltune_torch: ", op, ": expected ", arg, " on an ocl device, got ", t.device());
}

void check_same_device(const at::Tensor& first, const at::Tensor& t, const char* op, const char* arg) {
  TORCH_CHECK(t.device() == first.device(),
              "Expected all tensors to be on the same device, but found at least two devices, ", first.device(),
              " and ", t.device(), "! (when checking argument ", arg, " of ocltune_torch ", op, ")");
}

std::optional<int> ocltune_dtype_of(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return OCLTUNE_DTYPE_FP32;
    case at::kHalf: return OCLTUNE_DTYPE_FP16;
    case at::kBFloat16: return OCLTUNE_DTYPE_BF16;
    default: return std::nullopt;
  }
}

BufferRef buffer_of(const at::Tensor& t) {
  TORCH_INTERNAL_ASSERT(t.numel() > 0, "ocltune_torch: the buffer of an empty tensor");
  return resolve(t.const_data_ptr());
}

ocltune_tensor cl_tensor_of(const at::Tensor& t) {
  const BufferRef b = buffer_of(t);
  const std::size_t item = t.element_size();
  TORCH_CHECK(b.offset % item == 0, "ocltune_torch: a tensor of ", t.scalar_type(), " at byte offset ", b.offset,
              " is not aligned to its element size");
  return ocltune_tensor{b.buffer, static_cast<std::int64_t>(b.offset / item)};
}

std::int64_t span_elements(at::IntArrayRef sizes, at::IntArrayRef strides) {
  std::int64_t last = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    TORCH_INTERNAL_ASSERT(strides[i] >= 0, "ocltune_torch: negative strides are not supported");
    last += (sizes[i] - 1) * strides[i];
  }
  return last + 1;
}

MergedLayout merge_dims(at::IntArrayRef sizes, const std::vector<std::vector<std::int64_t>>& strides) {
  MergedLayout out;
  out.strides.resize(strides.size());
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !out.sizes.empty();
    for (std::size_t t = 0; merge && t < strides.size(); ++t) {
      merge = out.strides[t].back() == strides[t][d] * sizes[d];
    }
    if (merge) {
      out.sizes.back() *= sizes[d];
      for (std::size_t t = 0; t < strides.size(); ++t) out.strides[t].back() = strides[t][d];
    } else {
      out.sizes.push_back(sizes[d]);
      for (std::size_t t = 0; t < strides.size(); ++t) out.strides[t].push_back(strides[t][d]);
    }
  }
  if (out.sizes.empty()) {
    out.sizes.push_back(1);
    for (auto& s : out.strides) s.push_back(1);
  }
  return out;
}

std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

ocltune_operand strided_operand(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                                ocltune_tensor tensor) {
  TORCH_INTERNAL_ASSERT(sizes.size() <= OCLTUNE_MAX_DIMS && sizes.size() == strides.size());
  ocltune_operand o{};
  o.ndims = static_cast<int>(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    o.dims[i] = sizes[i];
    o.strides[i] = strides[i];
  }
  o.strided = 1;
  o.tensor = tensor;
  return o;
}

}  // namespace ocltune_torch
