// The elementwise family behind the backend's elementwise ops: layouts, one C ABI call per op, and the
// unary/binary/in-place patterns the op files share (elementwise_ops.cpp, activation_ops.cpp, ...).
//
// Results keep the memory layout of a dense self (as PyTorch's TensorIterator does), else they are
// contiguous. The kernels compute in fp32 and store fp32, fp16 or bf16; other dtypes, and operands
// whose dtypes differ from the result's (the family has no casts), go to the caller's fallback.
#pragma once

#include <optional>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>

#include "ocltune_torch/csrc/device/tensor_util.h"

namespace ocltune_torch {

std::vector<std::int64_t> to_vector(at::IntArrayRef a);

// Dims in the memory order of a dense output, its inputs' strides against them, merged. nullopt when
// more than 4 dims remain or there are more elements than the kernels index.
std::optional<MergedLayout> kernel_layout(const at::Tensor& out, const std::vector<const at::Tensor*>& inputs);

// out = op(a) or op(a, b | scalar), every tensor with out's sizes (inputs expanded), out dense.
void enqueue(const char* what, const char* op, const MergedLayout& layout, const at::Tensor& out, const at::Tensor& a,
             const at::Tensor* b, float scalar, bool reversed);

// A new result for inputs of these sizes: the layout of a dense `like` of the same sizes, else packed.
at::Tensor new_result(const at::Tensor& like, at::IntArrayRef sizes, at::ScalarType dtype);

// What a binary op computes: op(a, b) for two tensors, op(a, scalar) or, reversed, op(scalar, a).
struct Binary {
  at::Tensor a;
  std::optional<at::Tensor> b;
  float scalar = 0.0f;
  bool reversed = false;
  at::ScalarType dtype = at::kFloat;
  std::vector<std::int64_t> sizes;
};

// nullopt: the op runs through the fallback. `alpha` scales other (add, sub), 1 for the others.
std::optional<Binary> plan_binary(const char* op, const at::Tensor& self, const at::Tensor& other, double alpha);
// op(self, number): nullopt when self is not a kernel dtype or the number is not a finite float.
std::optional<Binary> plan_scalar(const char* op, const at::Tensor& self, double number, bool reversed = false);

// Runs the plan into out (dense, with p.sizes); false when the kernel cannot take the layout.
bool run_binary(const char* op, const char* kernel_op, const Binary& p, const at::Tensor& out);

template <class Fallback>
at::Tensor run_planned(const char* op, const char* kernel_op, const std::optional<Binary>& p, Fallback fallback_op) {
  if (!p) return fallback_op();
  at::Tensor out = new_result(p->a, p->sizes, p->dtype);
  if (!run_binary(op, kernel_op, *p, out)) return fallback_op();
  return out;
}

// In place into self (dense self directly, else through a packed result copied back). A result type
// other than self's (half += float) is computed in the result type and cast into self, as
// TensorIterator does, where that cast is allowed.
template <class Fallback>
at::Tensor& run_planned_(const char* op, const char* kernel_op, at::Tensor& self, const std::optional<Binary>& p,
                         Fallback fallback_op) {
  if (!p || p->reversed) return fallback_op();
  TORCH_CHECK(at::canCast(p->dtype, self.scalar_type()), "result type ", p->dtype,
              " can't be cast to the desired output type ", self.scalar_type());
  TORCH_CHECK(p->sizes == to_vector(self.sizes()), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", at::IntArrayRef(p->sizes));
  const bool same_type = p->dtype == self.scalar_type();
  if (same_type && self.is_non_overlapping_and_dense() && run_binary(op, kernel_op, *p, self)) return self;
  at::Tensor out = at::empty(p->sizes, self.options().dtype(p->dtype));
  if (!run_binary(op, kernel_op, *p, out)) return fallback_op();
  return self.copy_(out);
}

template <class Fallback>
at::Tensor binary(const char* op, const char* kernel_op, const at::Tensor& self, const at::Tensor& other, double alpha,
                  Fallback fallback_op) {
  return run_planned(op, kernel_op, plan_binary(op, self, other, alpha), fallback_op);
}

template <class Fallback>
at::Tensor& binary_(const char* op, const char* kernel_op, at::Tensor& self, const at::Tensor& other, double alpha,
                    Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (is_ocl(other) && other.numel() > 0 && self.numel() > 0) at::assert_no_partial_overlap(self, other);
  return run_planned_(op, kernel_op, self, plan_binary(op, self, other, alpha), fallback_op);
}

// out = op(self) on the family's unary kernel `kernel_op`, out dense with self's sizes and dtype (the
// UnaryInto of op_forms.h). False when the family cannot take the dtype or layout.
bool unary_into(const char* op, const char* kernel_op, const at::Tensor& out, const at::Tensor& self);

// op(self), a new result or in place.
template <class Fallback>
at::Tensor unary(const char* op, const char* kernel_op, const at::Tensor& self, Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (!kernel_dtype(self.scalar_type())) return fallback_op();
  at::Tensor out = new_result(self, self.sizes(), self.scalar_type());
  if (out.numel() == 0) return out;
  if (!unary_into(op, kernel_op, out, self)) return fallback_op();
  return out;
}

template <class Fallback>
at::Tensor& unary_(const char* op, const char* kernel_op, at::Tensor& self, Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (!kernel_dtype(self.scalar_type())) return fallback_op();
  if (self.numel() == 0) return self;
  if (self.is_non_overlapping_and_dense() && unary_into(op, kernel_op, self, self)) return self;
  return fallback_op();  // a view with gaps (or more than 4 merged dims): not written in place yet
}

}  // namespace ocltune_torch
