// ocltune::elementwise_chain as a function, and the chains other families read as a prologue
// (ocltune::reduce_prologue, ocltune::layer_norm_prologue: kernels/prologue.cl), which materialise
// the chain with it where their own kernel cannot take it.
#pragma once

#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ocltune/ocltune.h"

namespace ocltune_torch {

// step_k(... step_1(input, operand_1) ...): ops are the elementwise family's names, each step's
// operand a tensor (broadcast against the input) or, where undefined, its scalar; reversed[k] != 0
// computes op(operand, v).
at::Tensor elementwise_chain(const at::Tensor& input, const std::vector<std::string>& ops,
                             const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                             at::IntArrayRef reversed);

// A chain another family applies to its input as it reads it: the steps as elementwise_chain takes
// them, every tensor operand of the input's sizes and dtype.
struct ChainPrologue {
  const std::vector<std::string>& ops;
  const c10::List<std::optional<at::Tensor>>& operands;
  c10::ArrayRef<double> scalars;
  at::IntArrayRef reversed;

  // Raises naming `op`: no step or more than OCLTUNE_MAX_PROLOGUE_STEPS, lists of different lengths,
  // an input dtype no kernel stores, an operand of another dtype, sizes or device.
  void check(const char* op, const at::Tensor& input) const;
  // The C ABI's form; `packed` holds the operands made contiguous, alive until the call.
  ocltune_prologue c_form(std::vector<at::Tensor>& packed) const;
  // The chain's result, as eager computes it (one elementwise kernel).
  at::Tensor apply(const at::Tensor& input) const;
};

}  // namespace ocltune_torch
