// What the ops share: argument checks, a tensor's buffer and offset, dtype codes, merged layouts.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ocltune/ocltune.h"
#include "ocltune_torch/csrc/device/allocator.h"

namespace ocltune_torch {

constexpr c10::DeviceType kOcl = c10::DeviceType::PrivateUse1;

inline bool is_ocl(const at::Tensor& t) { return t.defined() && t.device().type() == kOcl; }

// Raises unless t is an ocl tensor; `op` and `arg` name it in the message.
void check_ocl(const at::Tensor& t, const char* op, const char* arg);
// Raises unless t is on the same ocl device as `first` (PyTorch's wording for mixed devices).
void check_same_device(const at::Tensor& first, const at::Tensor& t, const char* op, const char* arg);

// The ocltune_dtype of a scalar type the kernels compute in (fp32, fp16, bf16), else nullopt.
std::optional<int> ocltune_dtype_of(at::ScalarType type);
inline bool kernel_dtype(at::ScalarType type) { return ocltune_dtype_of(type).has_value(); }

// Where the first element of t lives (t must have elements): its buffer and byte offset.
BufferRef buffer_of(const at::Tensor& t);
// The buffer and element offset of t's first element, as the C ABI takes it.
ocltune_tensor cl_tensor_of(const at::Tensor& t);

// Elements from the first to the last one of t, inclusive (non-negative strides; t has elements).
std::int64_t span_elements(at::IntArrayRef sizes, at::IntArrayRef strides);

// Dims of one shape seen by several tensors, with dims of size 1 dropped and adjacent dims merged
// where every tensor allows it (stride[i] == stride[i + 1] * size[i + 1]). At least one dim.
struct MergedLayout {
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<std::int64_t>> strides;  // one list per tensor, in the order given
};
MergedLayout merge_dims(at::IntArrayRef sizes, const std::vector<std::vector<std::int64_t>>& strides);

// Row-major strides of sizes.
std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& sizes);

// A strided C ABI operand: `sizes` with `strides` (both at most OCLTUNE_MAX_DIMS long) on `tensor`.
ocltune_operand strided_operand(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                                ocltune_tensor tensor);

}  // namespace ocltune_torch
