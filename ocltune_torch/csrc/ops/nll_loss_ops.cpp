// nll_loss_forward / nll_loss_backward and nll_loss2d (so F.cross_entropy and F.nll_loss run on the
// device) with class weights, ignore_index and the three reductions.
//
// The pick of input[i, target[i]] is a gather by the int64 target: composed of the backend's data
// movement ops (gather, scatter, ne, where) instead of a kernel of its own, with the arithmetic and
// the sums through ocltune's elementwise and reduce families. nll_loss2d is nll_loss on the
// [N * H * W, C] view of its input.
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"

namespace ocltune_torch {
namespace {

namespace dm = device_math;

at::Tensor defined_or_empty(const std::optional<at::Tensor>& t) { return t && t->defined() ? *t : at::Tensor(); }

// Whether the composition takes these arguments: 1-D [C] or 2-D [N, C] input of a kernel dtype, an
// int64 target of [] or [N], a weight of [C] in the input's dtype, a known reduction.
bool takes(const at::Tensor& input, const at::Tensor& target, const at::Tensor& weight, std::int64_t reduction) {
  if (!kernel_dtype(input.scalar_type()) || (input.dim() != 1 && input.dim() != 2)) return false;
  if (!is_ocl(target) || target.device() != input.device() || target.scalar_type() != at::kLong) return false;
  if (target.dim() != input.dim() - 1 || (input.dim() == 2 && target.size(0) != input.size(0))) return false;
  if (weight.defined() && (!is_ocl(weight) || weight.device() != input.device() ||
                           weight.scalar_type() != input.scalar_type() || weight.numel() != input.size(-1))) {
    return false;
  }
  return reduction >= at::Reduction::None && reduction <= at::Reduction::Sum && input.size(-1) > 0;
}

// Per sample: the target with ignored entries as class 0 (a valid index) and the weight of each
// sample (weight[target], 0 where ignored), as [N] (input 2-D) or [] tensors.
struct Picked {
  at::Tensor index;   // int64, [N, 1] or [1]
  at::Tensor weight;  // input's dtype, [N] or []
};

Picked pick(const at::Tensor& input, const at::Tensor& target, const at::Tensor& weight, std::int64_t ignore_index) {
  const at::Tensor valid = target.ne(ignore_index);
  const at::Tensor safe = at::where(valid, target, at::zeros_like(target));
  const at::Tensor class_weight = weight.defined() ? weight.gather(0, safe.reshape({-1})).view(target.sizes())
                                                   : at::ones_like(target, input.options());
  return {safe.unsqueeze(-1), at::where(valid, class_weight, at::zeros_like(class_weight))};
}

std::tuple<at::Tensor, at::Tensor> nll_forward(const at::Tensor& self, const at::Tensor& target,
                                               const std::optional<at::Tensor>& weight_opt, std::int64_t reduction,
                                               std::int64_t ignore_index) {
  check_ocl(self, "nll_loss_forward", "self");
  const at::Tensor weight = defined_or_empty(weight_opt);
  if (!takes(self, target, weight, reduction)) {
    return fallback<ATEN_OP(nll_loss_forward)>::call(self, target, weight_opt, reduction, ignore_index);
  }
  const Picked p = pick(self, target, weight, ignore_index);
  // -input[i, target[i]] * w[i]; out-of-range targets raise in the gather.
  at::Tensor loss = self.gather(-1, p.index).squeeze(-1);
  loss = dm::binary("mul", loss, p.weight);
  dm::with_scalar_into(loss, "mul", loss, -1.0);
  if (reduction == at::Reduction::None) return {loss, at::zeros({}, self.options())};
  const std::vector<std::int64_t> all = self.dim() == 2 ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{};
  const at::Tensor total_weight = all.empty() ? p.weight.clone() : dm::sum(p.weight, all, false);
  at::Tensor out = all.empty() ? loss : dm::sum(loss, all, false);
  // The mean divides by the summed weights (NaN when every sample is ignored, as PyTorch).
  if (reduction == at::Reduction::Mean) out = dm::binary("div", out, total_weight);
  return {out, total_weight};
}

at::Tensor nll_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                        const std::optional<at::Tensor>& weight_opt, std::int64_t reduction, std::int64_t ignore_index,
                        const at::Tensor& total_weight) {
  check_ocl(self, "nll_loss_backward", "self");
  const at::Tensor weight = defined_or_empty(weight_opt);
  if (!takes(self, target, weight, reduction) || !is_ocl(grad_output) ||
      grad_output.scalar_type() != self.scalar_type() ||
      (reduction == at::Reduction::Mean &&
       (!is_ocl(total_weight) || total_weight.scalar_type() != self.scalar_type()))) {
    return fallback<ATEN_OP(nll_loss_backward)>::call(grad_output, self, target, weight_opt, reduction, ignore_index,
                                                      total_weight);
  }
  const Picked p = pick(self, target, weight, ignore_index);
  // d loss / d input[i, target[i]] = -w[i] * grad (/ total_weight for the mean); 0 elsewhere.
  at::Tensor g = dm::binary("mul", p.weight, grad_output.expand(p.weight.sizes()));
  dm::with_scalar_into(g, "mul", g, -1.0);
  if (reduction == at::Reduction::Mean) dm::binary_into(g, "div", g, total_weight.expand(g.sizes()));
  return at::zeros_like(self, at::MemoryFormat::Contiguous).scatter_(-1, p.index, g.unsqueeze(-1));
}

// [N, C, H, W] input and [N, H, W] target as nll_loss of [N * H * W, C] rows.
bool takes_2d(const at::Tensor& self, const at::Tensor& target) {
  return self.dim() == 4 && target.dim() == 3 && target.size(0) == self.size(0) && target.size(1) == self.size(2) &&
         target.size(2) == self.size(3);
}

at::Tensor rows_of(const at::Tensor& self) { return self.permute({0, 2, 3, 1}).reshape({-1, self.size(1)}); }

std::tuple<at::Tensor, at::Tensor> nll2d_forward(const at::Tensor& self, const at::Tensor& target,
                                                 const std::optional<at::Tensor>& weight_opt, std::int64_t reduction,
                                                 std::int64_t ignore_index) {
  check_ocl(self, "nll_loss2d_forward", "self");
  const at::Tensor flat_target = takes_2d(self, target) ? target.reshape({-1}) : at::Tensor();
  if (!flat_target.defined() || !takes(self.select(1, 0).reshape({-1, 1}).expand({-1, self.size(1)}), flat_target,
                                       defined_or_empty(weight_opt), reduction)) {
    return fallback<ATEN_OP(nll_loss2d_forward)>::call(self, target, weight_opt, reduction, ignore_index);
  }
  auto [out, total_weight] = nll_forward(rows_of(self), flat_target, weight_opt, reduction, ignore_index);
  if (reduction == at::Reduction::None) out = out.view(target.sizes());
  return {out, total_weight};
}

at::Tensor nll2d_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& target,
                          const std::optional<at::Tensor>& weight_opt, std::int64_t reduction,
                          std::int64_t ignore_index, const at::Tensor& total_weight) {
  check_ocl(self, "nll_loss2d_backward", "self");
  const at::Tensor flat_target = takes_2d(self, target) ? target.reshape({-1}) : at::Tensor();
  if (!flat_target.defined() || !takes(self.select(1, 0).reshape({-1, 1}).expand({-1, self.size(1)}), flat_target,
                                       defined_or_empty(weight_opt), reduction)) {
    return fallback<ATEN_OP(nll_loss2d_backward)>::call(grad_output, self, target, weight_opt, reduction, ignore_index,
                                                        total_weight);
  }
  const at::Tensor g = reduction == at::Reduction::None ? grad_output.reshape({-1}) : grad_output;
  const at::Tensor rows =
      nll_loss_backward(g, rows_of(self), flat_target, weight_opt, reduction, ignore_index, total_weight);
  // Back from [N, H, W, C] rows to NCHW.
  return rows.view({self.size(0), self.size(2), self.size(3), self.size(1)}).permute({0, 3, 1, 2}).contiguous();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_forward", nll_forward);
  m.impl("nll_loss_backward", nll_backward);
  m.impl("nll_loss2d_forward", nll2d_forward);
  m.impl("nll_loss2d_backward", nll2d_backward);
}

}  // namespace ocltune_torch
