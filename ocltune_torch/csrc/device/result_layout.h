// The layout of a new element-wise result, as PyTorch's TensorIterator gives it: compiled graphs
// (torch.compile) view results as the meta functions, which run TensorIterator, lay them out, so a
// result laid out otherwise can break a later view; in eager it is what CPU and CUDA return.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// The strides TensorIterator gives the result of `sizes` (the broadcast of the operands' sizes) of an
// element-wise op on `operands` (undefined ones are skipped; a 0-dim number takes no part): the
// operands' common dense layout where they all have the result's sizes and one layout, else the
// dimensions ordered by the operands' strides, the first operand with a strict order deciding each pair.
std::vector<std::int64_t> elementwise_result_strides(at::IntArrayRef sizes,
                                                     const std::vector<const at::Tensor*>& operands);

// A new tensor of `sizes` and `options` laid out so.
at::Tensor new_elementwise_result(at::IntArrayRef sizes, const at::TensorOptions& options,
                                  const std::vector<const at::Tensor*>& operands);

// `result` (of the operands' broadcast sizes) as the new result TensorIterator would give: itself where
// laid out so, else a copy that is. For composites whose intermediate copies lose the layout (16-bit
// operands computed on float32 copies, a product then a sum).
at::Tensor in_elementwise_layout(const at::Tensor& result, const std::vector<const at::Tensor*>& operands);

}  // namespace ocltune_torch
