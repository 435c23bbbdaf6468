// mse_loss and its backward, log_sigmoid_forward and its backward (what
// binary_cross_entropy_with_logits, a CompositeExplicitAutograd op in torch 2.15, dispatches), composed
// on the device of elementwise ops and the reduce family.
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Operators.h>
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"

namespace ocltune_torch {
namespace {

namespace dm = device_math;

std::vector<std::int64_t> all_dims(const at::Tensor& t) {
  std::vector<std::int64_t> dims(static_cast<std::size_t>(t.dim()));
  for (std::int64_t i = 0; i < t.dim(); ++i) dims[static_cast<std::size_t>(i)] = i;
  return dims;
}

// The reductions of the elementwise losses: none, sum or mean over every element.
at::Tensor reduce_loss(const at::Tensor& loss, std::int64_t reduction) {
  if (reduction == at::Reduction::None) return loss;
  if (reduction == at::Reduction::Sum) return dm::sum(loss, all_dims(loss), false);
  return dm::mean(loss, all_dims(loss), false);
}

// (self - target)^2, reduced.
at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, std::int64_t reduction) {
  check_ocl(self, "mse_loss", "self");
  if (!dm::same_kernel_dtype(self.scalar_type(), {&self, &target}) || self.device() != target.device() ||
      reduction < at::Reduction::None || reduction > at::Reduction::Sum) {
    return fallback<ATEN_OP(mse_loss)>::call(self, target, reduction);
  }
  at::Tensor d = dm::binary("sub", self, target);
  dm::binary_into(d, "mul", d, d);
  return reduce_loss(d, reduction);
}

// 2 (self - target) grad_output, divided by the number of elements for the mean.
at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                             std::int64_t reduction) {
  check_ocl(self, "mse_loss_backward", "self");
  if (!dm::same_kernel_dtype(self.scalar_type(), {&grad_output, &self, &target}) || self.device() != target.device() ||
      self.device() != grad_output.device() || reduction < at::Reduction::None || reduction > at::Reduction::Sum) {
    return fallback<ATEN_OP(mse_loss_backward)>::call(grad_output, self, target, reduction);
  }
  const double numel =
      static_cast<double>(c10::multiply_integers(at::infer_size_dimvector(self.sizes(), target.sizes())));
  const double scale = reduction == at::Reduction::Mean ? 2.0 / std::max(numel, 1.0) : 2.0;
  at::Tensor g = dm::binary("sub", self, target);
  dm::with_scalar_into(g, "mul", g, scale);
  dm::binary_into(g, "mul", g, grad_output.expand(g.sizes()));
  return g;
}

// log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), which never overflows. The buffer is empty, as
// PyTorch's CUDA kernel returns it (log_sigmoid_backward below does not read it).
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  check_ocl(self, "log_sigmoid_forward", "self");
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(log_sigmoid_forward)>::call(self);
  at::Tensor t = dm::unary("abs", self);
  dm::with_scalar_into(t, "mul", t, -1.0);
  dm::unary_into(t, "exp", t);
  dm::with_scalar_into(t, "add", t, 1.0);
  dm::unary_into(t, "log", t);
  at::Tensor out = dm::with_scalar("minimum", self, 0.0);
  dm::binary_into(out, "sub", out, t);
  return {out, at::empty({0}, self.options())};
}

// d log(sigmoid(x)) / dx = sigmoid(-x).
at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& buffer) {
  check_ocl(self, "log_sigmoid_backward", "self");
  if (!dm::same_kernel_dtype(self.scalar_type(), {&grad_output, &self}) || grad_output.device() != self.device()) {
    return fallback<ATEN_OP(log_sigmoid_backward)>::call(grad_output, self, buffer);
  }
  at::Tensor g = dm::with_scalar("mul", self, -1.0);
  dm::unary_into(g, "sigmoid", g);
  dm::binary_into(g, "mul", g, grad_output);
  return g;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mse_loss", mse_loss);
  m.impl("mse_loss_backward", mse_loss_backward);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_backward", log_sigmoid_backward);
}

}  // namespace ocltune_torch
