#include "ocltune_torch/csrc/device/result_layout.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include <ATen/ATen.h>

namespace ocltune_torch {
namespace {

std::vector<std::int64_t> row_major(at::IntArrayRef sizes) {
  std::vector<std::int64_t> strides(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<std::int64_t>(sizes[i], 1);
  return strides;
}

// TensorIterator's fast setup (compute_fast_setup_type): every operand of the result's sizes, and all
// contiguous, all channels-last, or all dense with equal strides. Empty where it does not apply.
std::vector<std::int64_t> fast_setup_strides(at::IntArrayRef sizes, const std::vector<const at::Tensor*>& operands) {
  bool contiguous = true, channels_last = true, dense = true;
  for (const at::Tensor* t : operands) {
    if (t->sizes() != sizes) return {};  // broadcasting, or a 0-dim number beside tensors
    contiguous &= t->is_contiguous();
    channels_last &= t->is_contiguous(at::MemoryFormat::ChannelsLast);
    dense &= t->is_non_overlapping_and_dense();
  }
  if (contiguous) return row_major(sizes);
  if (channels_last) return c10::get_channels_last_strides_2d(sizes);
  if (!dense) return {};
  for (const at::Tensor* t : operands) {
    if (t->strides() != operands.front()->strides()) return {};
  }
  return operands.front()->strides().vec();
}

}  // namespace

std::vector<std::int64_t> elementwise_result_strides(at::IntArrayRef sizes,
                                                     const std::vector<const at::Tensor*>& given) {
  std::vector<const at::Tensor*> operands;
  for (const at::Tensor* t : given) {
    if (t != nullptr && t->defined()) operands.push_back(t);
  }
  const auto ndim = static_cast<std::int64_t>(sizes.size());
  if (ndim == 0) return {};
  if (!operands.empty()) {
    std::vector<std::int64_t> fast = fast_setup_strides(sizes, operands);
    if (!fast.empty()) return fast;
  }
  // compute_strides: each operand's strides aligned to the result's dims, 0 where it broadcasts.
  std::vector<std::vector<std::int64_t>> strides;
  for (const at::Tensor* t : operands) {
    std::vector<std::int64_t> s(static_cast<std::size_t>(ndim), 0);
    const std::int64_t offset = ndim - t->dim();
    for (std::int64_t i = 0; i < t->dim(); ++i) {
      s[static_cast<std::size_t>(offset + i)] = t->size(i) == 1 && sizes[offset + i] != 1 ? 0 : t->stride(i);
    }
    strides.push_back(std::move(s));
  }
  // reorder_dimensions: perm[0] the fastest-moving dim; 1 when dim0 should come after dim1, -1 before,
  // 0 when no operand decides.
  auto should_swap = [&](std::int64_t dim0, std::int64_t dim1) {
    for (const std::vector<std::int64_t>& s : strides) {
      const std::int64_t stride0 = s[static_cast<std::size_t>(dim0)], stride1 = s[static_cast<std::size_t>(dim1)];
      if (stride0 == 0 || stride1 == 0) continue;
      if (stride0 < stride1) return -1;
      if (stride0 > stride1) return 1;
      if (sizes[dim0] > sizes[dim1]) return 1;  // equal strides: the smaller size first
    }
    return 0;
  };
  std::vector<std::int64_t> perm(static_cast<std::size_t>(ndim));
  std::iota(perm.rbegin(), perm.rend(), 0);
  for (std::int64_t i = 1; i < ndim; ++i) {
    std::int64_t dim1 = i;
    for (std::int64_t dim0 = i - 1; dim0 >= 0; --dim0) {
      const int comparison = should_swap(perm[static_cast<std::size_t>(dim0)], perm[static_cast<std::size_t>(dim1)]);
      if (comparison > 0) {
        std::swap(perm[static_cast<std::size_t>(dim0)], perm[static_cast<std::size_t>(dim1)]);
        dim1 = dim0;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  // The result dense in that order (allocate_or_resize_outputs): row-major where the order is.
  bool row_major_order = true;
  for (std::int64_t j = 0; j < ndim; ++j) row_major_order &= perm[static_cast<std::size_t>(j)] == ndim - j - 1;
  if (row_major_order) return row_major(sizes);
  std::vector<std::int64_t> result(static_cast<std::size_t>(ndim));
  std::int64_t stride = 1;
  for (std::int64_t d : perm) {
    result[static_cast<std::size_t>(d)] = stride;
    stride *= sizes[d];
  }
  return result;
}

at::Tensor new_elementwise_result(at::IntArrayRef sizes, const at::TensorOptions& options,
                                  const std::vector<const at::Tensor*>& operands) {
  return at::empty_strided(sizes, elementwise_result_strides(sizes, operands), options);
}

at::Tensor in_elementwise_layout(const at::Tensor& result, const std::vector<const at::Tensor*>& operands) {
  const std::vector<std::int64_t> strides = elementwise_result_strides(result.sizes(), operands);
  if (result.numel() <= 1 || result.strides() == at::IntArrayRef(strides)) return result;
  return at::empty_strided(result.sizes(), strides, result.options()).copy_(result);
}

}  // namespace ocltune_torch
