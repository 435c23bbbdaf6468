// torch.amp.GradScaler's two device ops, composed of the backend's elementwise and reduction kernels:
// _amp_foreach_non_finite_check_and_unscale_ (every gradient times inv_scale, found_inf set to 1 when
// any is inf or NaN) and _amp_update_scale_ (CUDA's rule: back off after an overflow, grow after
// growth_interval clean steps if the grown scale is finite). They ran on the CPU through the
// fallback, which copied every gradient to the host and back on each step. Arguments the
// composition cannot take (gradients of other dtypes or devices) still go there.
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"

namespace ocltune_torch {
namespace {

bool on_device_float(const at::Tensor& t, const at::Device& device) {
  return t.defined() && t.device() == device &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

bool one_float(const at::Tensor& t, const at::Device& device) {
  return t.defined() && t.device() == device && t.scalar_type() == at::kFloat && t.numel() == 1;
}

void non_finite_check_and_unscale(at::TensorList grads, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  const at::Device device = found_inf.device();
  bool composable = one_float(found_inf, device) && one_float(inv_scale, device);
  for (const at::Tensor& g : grads) composable = composable && on_device_float(g, device);
  if (!composable) {
    fallback<ATEN_OP(_amp_foreach_non_finite_check_and_unscale_)>::call(grads, found_inf, inv_scale);
    return;
  }
  const at::Tensor scale = inv_scale.reshape({});
  // Each gradient unscaled in place, and whether it holds inf or NaN afterwards (as CUDA checks);
  // found_inf is written once, from all of them.
  std::vector<at::Tensor> bad;
  for (const at::Tensor& grad : grads) {
    if (grad.numel() == 0) continue;
    at::Tensor g = grad;  // the list's tensors are written in place
    g.mul_(scale);
    bad.push_back(at::logical_not(at::isfinite(g)).any());
  }
  if (bad.empty()) return;
  const at::Tensor any_bad = at::stack(bad).any().to(at::kFloat).reshape(found_inf.sizes());
  found_inf.copy_(at::maximum(found_inf, any_bad));
}

at::Tensor& update_scale(at::Tensor& scale, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                         double growth_factor, double backoff_factor, int64_t growth_interval) {
  const at::Device device = scale.device();
  if (!one_float(scale, device) || !one_float(found_inf, device) || growth_tracker.device() != device ||
      growth_tracker.scalar_type() != at::kInt || growth_tracker.numel() != 1) {
    return fallback<ATEN_OP(_amp_update_scale_)>::call(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                                                       growth_interval);
  }
  const at::Tensor overflow = found_inf.gt(0);
  const at::Tensor successful = growth_tracker.add(1);
  const at::Tensor grown = scale.mul(growth_factor);
  const at::Tensor due = successful.eq(growth_interval);
  const at::Tensor grow = at::logical_and(due, at::isfinite(grown));
  const at::Tensor reset = at::logical_or(overflow, due);
  const at::Tensor new_scale = at::where(overflow, scale.mul(backoff_factor), at::where(grow, grown, scale));
  const at::Tensor new_tracker = at::where(reset, at::zeros_like(successful), successful);
  scale.copy_(new_scale);
  growth_tracker.copy_(new_tracker);
  return scale;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", non_finite_check_and_unscale);
  m.impl("_amp_update_scale_", update_scale);
}

}  // namespace
}  // namespace ocltune_torch
