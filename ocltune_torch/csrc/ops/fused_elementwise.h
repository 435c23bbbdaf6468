// ocltune::elementwise_chain as a function, for the fused ops that materialise a chain where their
// own kernel cannot take it (a reduction's prologue on a layout the family does not read).
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace ocltune_torch {

// step_k(... step_1(input, operand_1) ...): ops are the elementwise family's names, each step's
// operand a tensor (broadcast against the input) or, where undefined, its scalar; reversed[k] != 0
// computes op(operand, v).
at::Tensor elementwise_chain(const at::Tensor& input, const std::vector<std::string>& ops,
                             const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                             at::IntArrayRef reversed);

}  // namespace ocltune_torch
