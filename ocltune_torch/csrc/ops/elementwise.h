// The backend's one elementwise generator. Every unary and binary elementwise op (arithmetic, math,
// activations and their backward ops, comparisons, logical and bitwise ops) names its kernels in an
// ElementwiseOp and goes through the entries below, which hold the operand rules once: devices (an
// ocl tensor, or a number: a 0-dim CPU tensor such as Python's `x + 2`), type promotion
// (at::result_type), broadcasting, numbers as kernel arguments, the result's layout (a dense self's,
// as TensorIterator keeps it, else packed) and outputs that are views with gaps or overlap an input.
// Each call runs on one of the two kernel systems:
// - the tuned elementwise family (ocltune_elementwise, through the C ABI) where the op is one of the
//   family's and the result type one of its dtypes (fp32, fp16, bf16): it computes in fp32 and reads
//   one dtype, so an operand of another float dtype is converted on the device first, as TensorIterator
//   computes a mixed op in the common type;
// - the plain kernel of plain/kernels/plain_elementwise.cl otherwise (integer and bool dtypes, and ops
//   the family has no kernel for, comparisons into bool), every plain dtype, any strides, its own casts.
// A call neither takes returns false (or nullopt), out untouched, and the caller falls back to the CPU.
// The functional, in-place and out= forms of an op are op_forms.h's, on these entries.
#pragma once

#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ocltune_torch/csrc/device/tensor_util.h"

namespace ocltune_torch {

// What an elementwise op computes, by the name of its kernel in each system (nullptr: none there).
struct ElementwiseOp {
  const char* name;              // the aten op, for messages
  const char* family = nullptr;  // the elementwise family's op (ocltune_elementwise_args::op)
  const char* plain = nullptr;   // plain_elementwise.cl's kernel; a number as other runs `plain`_scalar
  // The plain kernel that computes op(number, x) with x as its operand, `plain_reversed`_scalar: gt for
  // lt, rsub for sub. nullptr: a number first has no plain kernel.
  const char* plain_reversed = nullptr;
  // A family op's plain kernel for a float64 compute type, which the families lack (where the device
  // has cl_khr_fp64); no number-first form. nullptr: float64 falls back.
  const char* plain_float64 = nullptr;
  bool bool_result = false;  // comparisons: bool results, computed in the promoted type
  bool integral = false;     // bitwise ops: floating operands are PyTorch's error, raised by the fallback
  // Op-specific refusals PyTorch raises before computing (sub with a bool, a float alpha with
  // integers), from the operands' dtypes (a number: its 0-dim tensor's) and the result's.
  void (*check)(at::ScalarType self, at::ScalarType other, at::ScalarType result, const c10::Scalar& alpha) = nullptr;
};

// The dtype op(self, other) produces: bool for comparisons, else the promoted type.
at::ScalarType elementwise_result_type(const ElementwiseOp& op, const at::Tensor& self, const at::Tensor& other);

// out = op(self). out is an ocl tensor of self's sizes (any strides, no internal overlap) whose dtype
// the result casts to; it may be self. False where neither kernel system takes the call.
bool elementwise_into(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self);
// out = op(self, other), other scaled by alpha (add, sub), both broadcast to out's sizes; out as above,
// and it may be self or other (in place).
bool elementwise_into(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                      const c10::Scalar& alpha = 1);
// out = op(self, number), or op(number, self) when reversed, the number a parameter of the op
// (leaky_relu's slope, pow's exponent, div(1, x)): the result has self's dtype. The family's ops only;
// the number must be finite in fp32.
bool elementwise_scalar_into(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self, double number,
                             bool reversed = false);

// The same as new results (the layout of a dense self of the result's sizes, else packed); nullopt
// where neither kernel system takes the call.
std::optional<at::Tensor> elementwise(const ElementwiseOp& op, const at::Tensor& self);
std::optional<at::Tensor> elementwise(const ElementwiseOp& op, const at::Tensor& self, const at::Tensor& other,
                                      const c10::Scalar& alpha = 1);
std::optional<at::Tensor> elementwise_scalar(const ElementwiseOp& op, const at::Tensor& self, double number,
                                             bool reversed = false);

// The elementwise family's view of out and its inputs (each with out's sizes, out dense): dims in out's
// memory order, merged. nullopt when more than 4 dims remain or there are more elements than the
// kernels index. Also the layout of the fused chains (fused_elementwise_ops.cpp).
std::optional<MergedLayout> family_layout(const at::Tensor& out, const std::vector<const at::Tensor*>& inputs);

// The operand rules, for the ternary ops that launch plain_elementwise.cl themselves (where, clamp,
// masked_fill_ in comparison_ops.cpp): a number is a 0-dim CPU tensor (Python's `x + 2`), and an input
// that partially overlaps out is read from a copy, so a kernel never reads what it has written (a full
// overlap, in place, is fine: each element is read before it is written).
bool is_number(const at::Tensor& t);
at::Tensor unaliased(const at::Tensor& out, const at::Tensor& t);

// The result, or the fallback's where neither kernel system took the call.
template <class Fallback>
at::Tensor or_fallback(std::optional<at::Tensor> result, Fallback fallback_op) {
  return result ? *std::move(result) : fallback_op();
}

}  // namespace ocltune_torch
