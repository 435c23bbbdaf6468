// The plain elementwise generator: one launch of a kernel of plain_elementwise.cl over out and its
// inputs with any strides (casts, comparisons, integer arithmetic, masks), and the operand rules the
// ops on it share (numbers as kernel arguments, type promotion, no partial overlap with out).
#include "ocltune_torch/csrc/plain/plain_elementwise.h"

#include <string>

#include <ATen/ATen.h>

#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {

void run_plain_elementwise(const char* kernel, const at::Tensor& out, const std::vector<at::Tensor>& inputs,
                           const std::vector<const char*>& slots, at::ScalarType compute,
                           const std::vector<c10::Scalar>& scalars) {
  TORCH_INTERNAL_ASSERT(inputs.size() == slots.size());
  if (out.numel() == 0) return;
  const int device = out.device().index();
  TypeSlots types = {{"O", out.scalar_type()}, {"K", compute}, {"A", at::kBool}, {"B", at::kBool}, {"C", at::kBool}};
  std::vector<const at::Tensor*> tensors = {&out};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (auto& [slot, type] : types) {
      if (slot == slots[i]) type = inputs[i].scalar_type();
    }
    tensors.push_back(&inputs[i]);
  }
  const PlainLayout layout = plain_layout(out.sizes(), tensors);
  PlainLaunch launch(device, plain_program(device, "plain_elementwise.cl", types), kernel);
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]);
  for (std::size_t i = 0; i < inputs.size(); ++i) launch.tensor(inputs[i]).arg(layout.operands[i + 1]);
  for (const c10::Scalar& s : scalars) launch << scalar_arg(s, compute);
  launch.run(layout.shape.numel);
}

// A Python number in a binary op: a 0-dim CPU tensor.
bool is_number(const at::Tensor& t) { return t.defined() && t.is_cpu() && t.dim() == 0; }

// True when the op can run here: ocl tensors of one device (or numbers) of plain dtypes, a plain
// compute type. Raises for mixed devices as PyTorch does.
bool plain_operands(const char* op, const at::Tensor& self, const at::Tensor& other, at::ScalarType compute) {
  const at::Tensor& first = is_ocl(self) ? self : other;
  for (const at::Tensor* t : {&self, &other}) {
    if (is_ocl(*t)) {
      check_same_device(first, *t, op, t == &self ? "self" : "other");
    } else {
      TORCH_CHECK(is_number(*t), "Expected all tensors to be on the same device, but found at least two devices, ",
                  first.device(), " and ", t->device(), "! (ocltune_torch ", op,
                  ": only a 0-dim CPU tensor may be mixed with ocl)");
    }
  }
  return plain_dtype(self.scalar_type()) && plain_dtype(other.scalar_type()) && plain_dtype(compute);
}

// A tensor that does not overlap out (a copy where it does partially), so a kernel never reads what it
// has written. A full overlap (in place) is fine: each element is read before it is written.
at::Tensor unaliased(const at::Tensor& out, const at::Tensor& t) {
  if (!is_ocl(t) || !may_overlap(out, t)) return t;
  // Exactly out (in place) is fine; anything else that may share its memory is copied first.
  if (t.is_same(out) || (t.data_ptr() == out.data_ptr() && t.strides() == out.strides() && t.sizes() == out.sizes())) {
    return t;
  }
  return t.clone();
}

// out = kernel(self, other), out already has the broadcast sizes. A number as other runs
// `kernel`_scalar, a number as self the `mirrored`_scalar kernel (gt for lt, rsub for sub) on other.
void binary_into(const char* kernel, const char* mirrored, const at::Tensor& out, const at::Tensor& self,
                 const at::Tensor& other, at::ScalarType compute, const c10::Scalar& s0) {
  if (is_number(other) && is_ocl(self)) {
    run_plain_elementwise((std::string(kernel) + "_scalar").c_str(), out, {unaliased(out, self).expand(out.sizes())},
                          {"A"}, compute, {s0, other.item()});
  } else if (is_number(self) && is_ocl(other)) {
    run_plain_elementwise((std::string(mirrored) + "_scalar").c_str(), out, {unaliased(out, other).expand(out.sizes())},
                          {"A"}, compute, {s0, self.item()});
  } else {
    run_plain_elementwise(kernel, out,
                          {unaliased(out, self).expand(out.sizes()), unaliased(out, other).expand(out.sizes())},
                          {"A", "B"}, compute, {s0});
  }
}

at::Tensor binary_new(const char* kernel, const char* mirrored, const at::Tensor& self, const at::Tensor& other,
                      at::ScalarType compute, at::ScalarType result, const c10::Scalar& s0) {
  const at::Tensor& like = is_ocl(self) ? self : other;
  at::Tensor out = at::empty(at::infer_size(self.sizes(), other.sizes()), like.options().dtype(result));
  binary_into(kernel, mirrored, out, self, other, compute, s0);
  return out;
}

}  // namespace ocltune_torch
