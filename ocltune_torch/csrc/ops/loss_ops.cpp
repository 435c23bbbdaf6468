// mse_loss and smooth_l1_loss and their backward ops, log_sigmoid_forward and its backward (what
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

// |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta for d = self - target (the loss of detection models'
// box regression), reduced; the branches as the CPU's kernel writes them, so values are its own.
at::Tensor smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, std::int64_t reduction, double beta) {
  check_ocl(self, "smooth_l1_loss", "self");
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (!dm::same_kernel_dtype(self.scalar_type(), {&self, &target}) || self.device() != target.device() ||
      reduction < at::Reduction::None || reduction > at::Reduction::Sum) {
    return fallback<ATEN_OP(smooth_l1_loss)>::call(self, target, reduction, beta);
  }
  const at::Tensor z = dm::unary("abs", dm::binary("sub", self, target));
  if (beta == 0) return reduce_loss(z, reduction);  // the L1 loss, as PyTorch takes it
  at::Tensor quadratic = dm::with_scalar("mul", z, 0.5);
  dm::binary_into(quadratic, "mul", quadratic, z);
  dm::with_scalar_into(quadratic, "div", quadratic, beta);
  const at::Tensor linear = dm::with_scalar("sub", z, 0.5 * beta);
  return reduce_loss(at::where(at::lt(z, beta), quadratic, linear), reduction);
}

// d <= -beta ? -g : d >= beta ? g : d g / beta, with g = grad_output (over the number of elements for
// the mean): the CPU's branches, so beta = 0 gives -g at d = 0 as there.
at::Tensor smooth_l1_loss_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                                   std::int64_t reduction, double beta) {
  check_ocl(self, "smooth_l1_loss_backward", "self");
  if (!dm::same_kernel_dtype(self.scalar_type(), {&grad_output, &self, &target}) || self.device() != target.device() ||
      self.device() != grad_output.device() || reduction < at::Reduction::None || reduction > at::Reduction::Sum) {
    return fallback<ATEN_OP(smooth_l1_loss_backward)>::call(grad_output, self, target, reduction, beta);
  }
  const at::Tensor d = dm::binary("sub", self, target);
  const double numel = static_cast<double>(d.numel());
  const double norm = reduction == at::Reduction::Mean ? 1.0 / std::max(numel, 1.0) : 1.0;
  const at::Tensor g = grad_output.expand(d.sizes());
  const at::Tensor above = dm::with_scalar("mul", g, norm);
  const at::Tensor below = dm::with_scalar("mul", g, -norm);
  at::Tensor inside = dm::with_scalar("mul", d, norm);
  dm::binary_into(inside, "mul", inside, g);
  if (beta > 0) dm::with_scalar_into(inside, "div", inside, beta);
  return at::where(at::le(d, -beta), below, at::where(at::ge(d, beta), above, inside));
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
  m.impl("smooth_l1_loss", smooth_l1_loss);
  m.impl("smooth_l1_loss_backward", smooth_l1_loss_backward);
  m.impl("log_sigmoid_forward", log_sigmoid_forward);
  m.impl("log_sigmoid_backward", log_sigmoid_backward);
}

}  // namespace ocltune_torch
