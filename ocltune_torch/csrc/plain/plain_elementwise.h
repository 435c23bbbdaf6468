// The plain elementwise generator (plain/kernels/plain_elementwise.cl): one launch over out and its inputs
// with any strides, and the operand rules the ops on it share. The ops themselves are in ops/
// (comparison_ops.cpp, elementwise_ops.cpp, ...); casts in device/copy.cpp.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// out = kernel(inputs...) of plain_elementwise.cl: out and every input have out's sizes (expand
// them), `slots` name the inputs' type slots in order ("A", "B", "C"), K is the compute type, and
// `scalars` follow the tensors (in K's value type).
void run_plain_elementwise(const char* kernel, const at::Tensor& out, const std::vector<at::Tensor>& inputs,
                           const std::vector<const char*>& slots, at::ScalarType compute,
                           const std::vector<c10::Scalar>& scalars);

// A Python number in a binary op: a 0-dim CPU tensor.
bool is_number(const at::Tensor& t);

// True when a binary op can run on plain kernels: ocl tensors of one device (or numbers) of plain
// dtypes, a plain compute type. Raises for mixed devices as PyTorch does.
bool plain_operands(const char* op, const at::Tensor& self, const at::Tensor& other, at::ScalarType compute);

// t, or a copy of it where it partially overlaps out, so a kernel never reads what it has written (a
// full overlap, in place, is fine: each element is read before it is written).
at::Tensor unaliased(const at::Tensor& out, const at::Tensor& t);

// out = kernel(self, other), out already has the broadcast sizes. A number as other runs
// `kernel`_scalar, a number as self the `mirrored`_scalar kernel (gt for lt, rsub for sub) on other.
void binary_into(const char* kernel, const char* mirrored, const at::Tensor& out, const at::Tensor& self,
                 const at::Tensor& other, at::ScalarType compute, const c10::Scalar& s0);

// binary_into a new tensor of the broadcast sizes and dtype `result`.
at::Tensor binary_new(const char* kernel, const char* mirrored, const at::Tensor& self, const at::Tensor& other,
                      at::ScalarType compute, at::ScalarType result, const c10::Scalar& s0 = 0);

}  // namespace ocltune_torch
