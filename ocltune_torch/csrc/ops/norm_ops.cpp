// native_batch_norm (and the _native_batch_norm_legit entries of functionalised graphs),
// native_batch_norm_backward, native_layer_norm and native_layer_norm_backward through ocltune's
// norm family; fp32, fp16, bf16 with fp32 statistics.
//
// In torch 2.15 nn.BatchNorm and F.batch_norm on a PrivateUse1 device reach native_batch_norm (via
// _batch_norm_impl_index) in training and eval mode, and native_batch_norm_backward; nn.LayerNorm
// reaches native_layer_norm, whose CompositeExplicitAutograd kernel would otherwise run it as a batch
// norm. The family computes training statistics; eval mode (running statistics) is one plain kernel
// forward (plain/kernels/plain_norm.cl) and elementwise ops and sums backward, in fp32. Weights and running
// statistics may be fp32 with 16-bit input (autocast's mix) or 16-bit with it (a module converted to
// 16 bits: its running statistics are updated in fp32 and rounded once). What the family cannot take
// (statistics of another dtype, one value per channel in training, more than 2^31 elements) runs on
// the CPU, counted, with the running statistics written back.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"
#include "ocltune_torch/csrc/ops/fused_elementwise.h"
#include "ocltune_torch/csrc/ops/residual_norm.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

namespace dm = device_math;

constexpr std::int64_t kMaxElements = (std::int64_t{1} << 31) - 1;

at::Tensor defined_or_empty(const std::optional<at::Tensor>& t) { return t && t->defined() ? *t : at::Tensor(); }

ocltune_tensor tensor_arg(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return ocltune_tensor{nullptr, 0};
  return cl_tensor_of(t);
}

// The batch-norm view of x: [N, C] or [N, C, L] with L the product of the spatial dims (packed).
std::vector<std::int64_t> batch_dims(const at::Tensor& x) {
  if (x.dim() == 2) return {x.size(0), x.size(1)};
  std::int64_t plane = 1;
  for (std::int64_t i = 2; i < x.dim(); ++i) plane *= x.size(i);
  return {x.size(0), x.size(1), plane};
}

// A per-channel vector broadcast against the [N, C, L] (or [N, C]) view.
at::Tensor per_channel(const at::Tensor& v, std::size_t dims) {
  return dims == 2 ? v.view({1, -1}) : v.view({1, -1, 1});
}

// True when t is undefined or an ocl tensor of `dtype` on x's device with `numel` elements.
bool optional_fits(const at::Tensor& t, const at::Tensor& x, at::ScalarType dtype, std::int64_t numel) {
  return !t.defined() || (t.device() == x.device() && t.scalar_type() == dtype && t.numel() == numel);
}

// A batch norm's weight, bias or running statistic: x's dtype, or fp32 with 16-bit x (autocast
// leaves the parameters of a network in fp32 and its activations in 16 bits).
bool parameter_fits(const at::Tensor& t, const at::Tensor& x, std::int64_t channels) {
  return optional_fits(t, x, x.scalar_type(), channels) || optional_fits(t, x, at::kFloat, channels);
}

at::Tensor as_float(const at::Tensor& t) { return t.defined() ? t.to(at::kFloat) : t; }

// The gradient of a parameter in the parameter's dtype (autograd checks it), from fp32 or x's dtype.
at::Tensor as_parameter_dtype(const at::Tensor& grad, const at::Tensor& weight) {
  return weight.defined() && grad.scalar_type() != weight.scalar_type() ? grad.to(weight.scalar_type()) : grad;
}

// ---- batch norm ----

using BatchNormResult = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// On CPU copies, with the running statistics copied back: the schema does not mark them as written,
// so the boxed fallback would not.
BatchNormResult batch_norm_on_cpu(const at::Tensor& input, const at::Tensor& weight, const at::Tensor& bias,
                                  const at::Tensor& running_mean, const at::Tensor& running_var, bool training,
                                  double momentum, double eps) {
  note_fallback("aten::native_batch_norm");
  auto cpu = [](const at::Tensor& t) { return t.defined() ? t.cpu() : t; };
  at::Tensor rm = cpu(running_mean), rv = cpu(running_var);
  auto [y, m, s] = at::native_batch_norm(cpu(input), cpu(weight), cpu(bias), rm, rv, training, momentum, eps);
  if (training && running_mean.defined()) running_mean.copy_(rm);
  if (training && running_var.defined()) running_var.copy_(rv);
  const c10::Device d = input.device();
  return {y.to(d), m.to(d), s.to(d)};
}

// The statistics, weight and bias of an eval batch norm as plain_norm.cl's bn_affine reads them (BN_ARGS):
// one type per slot, the statistics in the mean's, weight and bias in the weight's (or the bias's); a
// missing weight or bias is another buffer with its flag 0.
struct EvalAffine {
  at::Tensor mean, var, weight, bias;
  at::ScalarType w_type;
  bool has_weight, has_bias;

  EvalAffine(const at::Tensor& w, const at::Tensor& b, const at::Tensor& running_mean, const at::Tensor& running_var)
      : mean(running_mean.contiguous()),
        var(running_var.to(mean.scalar_type()).contiguous()),
        w_type(w.defined()   ? w.scalar_type()
               : b.defined() ? b.scalar_type()
                             : mean.scalar_type()),
        has_weight(w.defined()),
        has_bias(b.defined()) {
    weight = has_weight ? w.contiguous() : mean;
    bias = has_bias ? b.to(w_type).contiguous() : weight;
  }

  // plain_norm.cl with A and O of `type` and these slots.
  cl_program program(int device, at::ScalarType type) const {
    return plain_program(device, "plain_norm.cl", {{"A", type}, {"O", type}, {"S", mean.scalar_type()}, {"W", w_type}});
  }
  // mean, var, weight, has_weight, bias, has_bias.
  void push(PlainLaunch& launch) const {
    launch.tensor_at(mean).tensor_at(var).tensor_at(weight).arg<cl_int>(has_weight ? 1 : 0);
    launch.tensor_at(bias).arg<cl_int>(has_bias ? 1 : 0);
  }
};

// Running statistics: y = (x - running_mean) / sqrt(running_var + eps) * weight + bias, one pass of
// a plain kernel (plain/kernels/plain_norm.cl) in fp32 rounded once, as PyTorch's kernels compute; empty
// saved statistics, as PyTorch's CPU and CUDA kernels return. x has at most kMaxElements elements
// (the caller's check), which the kernel's 32-bit channel arithmetic relies on.
BatchNormResult batch_norm_eval(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                const at::Tensor& running_mean, const at::Tensor& running_var, double eps) {
  const std::vector<std::int64_t> dims = batch_dims(x);
  TORCH_INTERNAL_ASSERT(x.numel() <= kMaxElements);
  const at::Tensor xc = x.contiguous();
  at::Tensor y = at::empty(x.sizes(), x.options());
  const EvalAffine affine(weight, bias, running_mean, running_var);
  const int device = x.device().index();
  PlainLaunch launch(device, affine.program(device, x.scalar_type()), "batch_norm_eval");
  launch.arg<cl_long>(x.numel()).arg<cl_long>(dims[1]).arg<cl_long>(dims.size() == 3 ? dims[2] : 1);
  launch.arg<cl_float>(static_cast<float>(eps)).tensor_at(xc);
  affine.push(launch);
  launch.tensor_at(y).run(x.numel());
  const at::TensorOptions stats = x.options().dtype(at::kFloat);
  return {y, at::empty({0}, stats), at::empty({0}, stats)};
}

BatchNormResult batch_norm_forward(const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
                                   const std::optional<at::Tensor>& bias_opt,
                                   const std::optional<at::Tensor>& running_mean_opt,
                                   const std::optional<at::Tensor>& running_var_opt, bool training, double momentum,
                                   double eps) {
  check_ocl(input, "native_batch_norm", "input");
  const at::Tensor weight = defined_or_empty(weight_opt), bias = defined_or_empty(bias_opt);
  const at::Tensor running_mean = defined_or_empty(running_mean_opt);
  const at::Tensor running_var = defined_or_empty(running_var_opt);
  const at::ScalarType dtype = input.scalar_type();
  const std::int64_t channels = input.dim() >= 2 ? input.size(1) : 0;
  auto on_cpu = [&] {
    return batch_norm_on_cpu(input, weight, bias, running_mean, running_var, training, momentum, eps);
  };
  if (!kernel_dtype(dtype) || input.dim() < 2 || input.numel() > kMaxElements || !(eps > 0.0) ||
      !parameter_fits(weight, input, channels) || !parameter_fits(bias, input, channels)) {
    return on_cpu();
  }
  if (!training) {
    if (!running_mean.defined() || !running_var.defined() || !parameter_fits(running_mean, input, channels) ||
        !parameter_fits(running_var, input, channels)) {
      return on_cpu();
    }
    if (input.numel() == 0) {
      const at::TensorOptions stats = input.options().dtype(at::kFloat);
      return {at::empty(input.sizes(), input.options()), at::empty({0}, stats), at::empty({0}, stats)};
    }
    return batch_norm_eval(input, weight, bias, running_mean, running_var, eps);
  }
  const std::vector<std::int64_t> dims = batch_dims(input);
  const std::int64_t per_channel_values = input.numel() / std::max<std::int64_t>(channels, 1);
  if (per_channel_values < 2 || !(momentum >= 0.0 && momentum <= 1.0) ||
      !parameter_fits(running_mean, input, channels) || !parameter_fits(running_var, input, channels) ||
      running_mean.defined() != running_var.defined()) {
    return on_cpu();
  }
  const at::Tensor x = input.contiguous();
  // The family takes weights of x's dtype: fp32 ones of 16-bit x (autocast) are rounded to it.
  const at::Tensor gamma = weight.defined() ? weight.to(dtype).contiguous() : at::ones({channels}, input.options());
  const at::Tensor beta = bias.defined() ? bias.to(dtype).contiguous() : at::zeros({channels}, input.options());
  // Without running statistics the family still moves some: scratch ones here. The family keeps them
  // in fp32: 16-bit ones (a module converted with .half()) are updated on fp32 copies and rounded
  // once when written back, as CUDA's kernels do; strided ones are updated on dense copies.
  const bool track = running_mean.defined();
  at::Tensor rm = track ? running_mean : at::zeros({channels}, input.options().dtype(at::kFloat));
  at::Tensor rv = track ? running_var : at::ones({channels}, input.options().dtype(at::kFloat));
  const bool rm_copy = rm.scalar_type() != at::kFloat || !rm.is_contiguous();
  const bool rv_copy = rv.scalar_type() != at::kFloat || !rv.is_contiguous();
  if (rm_copy) rm = rm.to(at::kFloat).contiguous();
  if (rv_copy) rv = rv.to(at::kFloat).contiguous();
  at::Tensor y = at::empty(input.sizes(), input.options());
  at::Tensor save_mean = at::empty({channels}, input.options().dtype(at::kFloat));
  at::Tensor save_invstd = at::empty({channels}, input.options().dtype(at::kFloat));
  ocltune_norm_args a;
  ocltune_norm_args_init(&a, "batch_norm", static_cast<int>(dims.size()), dims.data());
  a.axis = 1;
  a.dtype = *ocltune_dtype_of(dtype);
  a.eps = static_cast<float>(eps);
  a.momentum = static_cast<float>(momentum);
  a.x = tensor_arg(x);
  a.gamma = tensor_arg(gamma);
  a.beta = tensor_arg(beta);
  a.y = tensor_arg(y);
  a.mean = tensor_arg(save_mean);
  a.rstd = tensor_arg(save_invstd);
  a.running_mean = tensor_arg(rm);
  a.running_var = tensor_arg(rv);
  call_ocltune("native_batch_norm", [&] { device_runtime(input.device().index()).norm(a); });
  if (track && rm_copy) running_mean.copy_(rm);
  if (track && rv_copy) running_var.copy_(rv);
  return {y, save_mean, save_invstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward_on_cpu(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& running_mean,
    const at::Tensor& running_var, const at::Tensor& save_mean, const at::Tensor& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask) {
  return fallback<ATEN_OP(native_batch_norm_backward)>::call(grad_out, input, weight, running_mean, running_var,
                                                             save_mean, save_invstd, train, eps, output_mask);
}

// Eval mode: the statistics are constants, so dx = dy * weight * invstd per channel,
// dweight = sum(dy * (x - running_mean)) * invstd and dbias = sum(dy); in fp32 like the forward.
std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward_eval(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& weight, const at::Tensor& running_mean,
    const at::Tensor& running_var, double eps, std::array<bool, 3> output_mask) {
  const std::vector<std::int64_t> dims = batch_dims(input);
  const std::size_t nd = dims.size();
  const at::Tensor dy = grad_out.contiguous().view(dims), x = input.contiguous().view(dims);
  const at::Tensor invstd = dm::unary("rsqrt", dm::with_scalar("add", as_float(running_var), eps));
  const std::vector<std::int64_t> reduced = nd == 2 ? std::vector<std::int64_t>{0} : std::vector<std::int64_t>{0, 2};
  at::Tensor dx, dweight, dbias;
  if (output_mask[0]) {
    const at::Tensor scale = weight.defined() ? dm::binary("mul", invstd, as_float(weight)) : invstd;
    dx = at::mul(dy, per_channel(scale, nd)).to(input.scalar_type()).view(input.sizes());
  }
  if (output_mask[1]) {
    const at::Tensor centred = at::sub(x, per_channel(as_float(running_mean), nd));  // fp32
    dweight = dm::binary("mul", dm::sum(at::mul(dy, centred), reduced, false), invstd);
    dweight = weight.defined() ? dweight.to(weight.scalar_type()) : dweight.to(input.scalar_type());
  }
  if (output_mask[2]) dbias = as_parameter_dtype(dm::sum(dy, reduced, false), weight);
  return {dx, dweight, dbias};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight_opt,
    const std::optional<at::Tensor>& running_mean_opt, const std::optional<at::Tensor>& running_var_opt,
    const std::optional<at::Tensor>& save_mean_opt, const std::optional<at::Tensor>& save_invstd_opt, bool train,
    double eps, std::array<bool, 3> output_mask) {
  check_ocl(input, "native_batch_norm_backward", "input");
  check_same_device(input, grad_out, "native_batch_norm_backward", "grad_out");
  const at::Tensor weight = defined_or_empty(weight_opt);
  const at::Tensor running_mean = defined_or_empty(running_mean_opt);
  const at::Tensor running_var = defined_or_empty(running_var_opt);
  const at::Tensor save_mean = defined_or_empty(save_mean_opt), save_invstd = defined_or_empty(save_invstd_opt);
  const at::ScalarType dtype = input.scalar_type();
  const std::int64_t channels = input.dim() >= 2 ? input.size(1) : 0;
  auto on_cpu = [&] {
    return batch_norm_backward_on_cpu(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                                      eps, output_mask);
  };
  if (!kernel_dtype(dtype) || input.dim() < 2 || grad_out.scalar_type() != dtype || grad_out.sizes() != input.sizes() ||
      input.numel() > kMaxElements || !parameter_fits(weight, input, channels)) {
    return on_cpu();
  }
  if (!train) {
    if (!running_mean.defined() || !running_var.defined() || !parameter_fits(running_mean, input, channels) ||
        !parameter_fits(running_var, input, channels) || !(eps > 0.0)) {
      return on_cpu();
    }
    return batch_norm_backward_eval(grad_out, input, weight, running_mean, running_var, eps, output_mask);
  }
  if (!save_mean.defined() || !save_invstd.defined() || !optional_fits(save_mean, input, at::kFloat, channels) ||
      !optional_fits(save_invstd, input, at::kFloat, channels) ||
      input.numel() / std::max<std::int64_t>(channels, 1) < 2) {
    return on_cpu();
  }
  const std::vector<std::int64_t> dims = batch_dims(input);
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const at::Tensor gamma = weight.defined() ? weight.to(dtype).contiguous() : at::ones({channels}, input.options());
  const at::Tensor mean = save_mean.contiguous(), invstd = save_invstd.contiguous();
  at::Tensor dx = at::empty(input.sizes(), input.options());
  at::Tensor dgamma = at::empty({channels}, input.options()), dbeta = at::empty({channels}, input.options());
  ocltune_norm_args a;
  ocltune_norm_args_init(&a, "batch_norm_backward", static_cast<int>(dims.size()), dims.data());
  a.axis = 1;
  a.dtype = *ocltune_dtype_of(dtype);
  a.eps = static_cast<float>(eps);
  a.dy = tensor_arg(dy);
  a.x = tensor_arg(x);
  a.mean = tensor_arg(mean);
  a.rstd = tensor_arg(invstd);
  a.gamma = tensor_arg(gamma);
  a.dx = tensor_arg(dx);
  a.dgamma = tensor_arg(dgamma);
  a.dbeta = tensor_arg(dbeta);
  call_ocltune("native_batch_norm_backward", [&] { device_runtime(input.device().index()).norm(a); });
  return {output_mask[0] ? dx : at::Tensor(), output_mask[1] ? as_parameter_dtype(dgamma, weight) : at::Tensor(),
          output_mask[2] ? as_parameter_dtype(dbeta, weight) : at::Tensor()};
}

// The functionalised entries (torch.compile, export): the same computation, the running statistics
// written in place.
BatchNormResult native_batch_norm_legit(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                                        const std::optional<at::Tensor>& bias, at::Tensor& running_mean,
                                        at::Tensor& running_var, bool training, double momentum, double eps) {
  return batch_norm_forward(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

BatchNormResult native_batch_norm_legit_no_stats(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                                                 const std::optional<at::Tensor>& bias, bool training, double momentum,
                                                 double eps) {
  return batch_norm_forward(input, weight, bias, std::nullopt, std::nullopt, training, momentum, eps);
}

BatchNormResult native_batch_norm_legit_no_training(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                                                    const std::optional<at::Tensor>& bias,
                                                    const at::Tensor& running_mean, const at::Tensor& running_var,
                                                    double momentum, double eps) {
  return batch_norm_forward(input, weight, bias, running_mean, running_var, false, momentum, eps);
}

// ---- layer norm ----

// rows x n of a layer norm over the trailing `normalized` dims; nullopt when they do not match.
std::optional<std::array<std::int64_t, 2>> layer_rows(const at::Tensor& x, c10::IntArrayRef normalized) {
  const auto nd = static_cast<std::int64_t>(normalized.size());
  if (nd < 1 || nd > x.dim()) return std::nullopt;
  std::int64_t rows = 1, n = 1;
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (i < x.dim() - nd) {
      rows *= x.size(i);
    } else {
      if (x.size(i) != normalized[static_cast<std::size_t>(i - (x.dim() - nd))]) return std::nullopt;
      n *= x.size(i);
    }
  }
  return std::array<std::int64_t, 2>{rows, n};
}

// The statistics' sizes: x's leading dims, then 1 per normalised dim (PyTorch's layout).
std::vector<std::int64_t> stat_sizes(const at::Tensor& x, std::size_t normalized) {
  std::vector<std::int64_t> sizes(x.sizes().begin(), x.sizes().end());
  for (std::size_t i = sizes.size() - normalized; i < sizes.size(); ++i) sizes[i] = 1;
  return sizes;
}

// native_layer_norm; with a prologue, of the chain's result (ocltune::layer_norm_prologue), read
// through it where the family takes the call, else computed first.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_with(const at::Tensor& input,
                                                               c10::IntArrayRef normalized_shape,
                                                               const std::optional<at::Tensor>& weight_opt,
                                                               const std::optional<at::Tensor>& bias_opt, double eps,
                                                               const ChainPrologue* prologue) {
  check_ocl(input, "native_layer_norm", "input");
  const at::Tensor weight = defined_or_empty(weight_opt), bias = defined_or_empty(bias_opt);
  const at::ScalarType dtype = input.scalar_type();
  const auto rn = layer_rows(input, normalized_shape);
  const std::int64_t n = rn ? (*rn)[1] : 0;
  if (!rn || !kernel_dtype(dtype) || n < 1 || input.numel() > kMaxElements || !(eps > 0.0) ||
      !optional_fits(weight, input, dtype, n) || !optional_fits(bias, input, dtype, n)) {
    if (prologue) return layer_norm_with(prologue->apply(input), normalized_shape, weight_opt, bias_opt, eps, nullptr);
    return fallback<ATEN_OP(native_layer_norm)>::call(input, normalized_shape, weight_opt, bias_opt, eps);
  }
  const std::int64_t rows = (*rn)[0];
  const std::vector<std::int64_t> stats = stat_sizes(input, normalized_shape.size());
  at::Tensor y = at::empty(input.sizes(), input.options());
  at::Tensor mean = at::empty(stats, input.options().dtype(at::kFloat));
  at::Tensor rstd = at::empty(stats, input.options().dtype(at::kFloat));
  if (rows == 0) return {y, mean, rstd};
  const at::Tensor x = input.contiguous();
  const at::Tensor gamma = weight.defined() ? weight.contiguous() : at::ones({n}, input.options());
  const at::Tensor beta = bias.defined() ? bias.contiguous() : at::zeros({n}, input.options());
  const std::int64_t dims[2] = {rows, n};
  ocltune_norm_args a;
  ocltune_norm_args_init(&a, "layer_norm", 2, dims);
  a.axis = 1;
  a.dtype = *ocltune_dtype_of(dtype);
  a.eps = static_cast<float>(eps);
  a.x = tensor_arg(x);
  a.gamma = tensor_arg(gamma);
  a.beta = tensor_arg(beta);
  a.y = tensor_arg(y);
  a.mean = tensor_arg(mean);
  a.rstd = tensor_arg(rstd);
  std::vector<at::Tensor> packed;  // the prologue's operands, contiguous like x, alive until the call
  if (prologue) a.prologue = prologue->c_form(packed);
  call_ocltune("native_layer_norm", [&] { device_runtime(input.device().index()).norm(a); });
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_forward(const at::Tensor& input,
                                                                  c10::IntArrayRef normalized_shape,
                                                                  const std::optional<at::Tensor>& weight_opt,
                                                                  const std::optional<at::Tensor>& bias_opt,
                                                                  double eps) {
  return layer_norm_with(input, normalized_shape, weight_opt, bias_opt, eps, nullptr);
}

// ocltune::layer_norm_prologue: native_layer_norm of an elementwise chain's result, what torch.compile's
// backend makes of layer_norm(x + residual) in an inference graph (the sum is never stored).
constexpr const char* kLayerNormPrologueOp = "ocltune::layer_norm_prologue";

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_prologue(
    const at::Tensor& input, const std::vector<std::string>& ops, const c10::List<std::optional<at::Tensor>>& operands,
    c10::ArrayRef<double> scalars, at::IntArrayRef reversed, c10::IntArrayRef normalized_shape,
    const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias, double eps) {
  check_ocl(input, kLayerNormPrologueOp, "input");
  const ChainPrologue prologue{ops, operands, scalars, reversed};
  prologue.check(kLayerNormPrologueOp, input);
  return layer_norm_with(input, normalized_shape, weight, bias, eps, &prologue);
}

// Shapes only, for the fake tensors torch.compile traces with.
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_prologue_meta(
    const at::Tensor& input, const std::vector<std::string>& ops, const c10::List<std::optional<at::Tensor>>& operands,
    c10::ArrayRef<double> scalars, at::IntArrayRef reversed, c10::IntArrayRef normalized_shape,
    const std::optional<at::Tensor>& /*weight*/, const std::optional<at::Tensor>& /*bias*/, double /*eps*/) {
  ChainPrologue{ops, operands, scalars, reversed}.check(kLayerNormPrologueOp, input);
  TORCH_CHECK(layer_rows(input, normalized_shape), kLayerNormPrologueOp, ": normalized_shape ", normalized_shape,
              " is not the input's last dims ", input.sizes());
  const std::vector<std::int64_t> stats = stat_sizes(input, normalized_shape.size());
  return {at::empty(input.sizes(), input.options()), at::empty(stats, input.options().dtype(at::kFloat)),
          at::empty(stats, input.options().dtype(at::kFloat))};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                                                   c10::IntArrayRef normalized_shape,
                                                                   const at::Tensor& mean, const at::Tensor& rstd,
                                                                   const std::optional<at::Tensor>& weight_opt,
                                                                   const std::optional<at::Tensor>& bias_opt,
                                                                   std::array<bool, 3> output_mask) {
  check_ocl(input, "native_layer_norm_backward", "input");
  check_same_device(input, grad_out, "native_layer_norm_backward", "grad_out");
  const at::Tensor weight = defined_or_empty(weight_opt);
  const at::ScalarType dtype = input.scalar_type();
  const auto rn = layer_rows(input, normalized_shape);
  const std::int64_t rows = rn ? (*rn)[0] : 0, n = rn ? (*rn)[1] : 0;
  if (!rn || !kernel_dtype(dtype) || n < 1 || grad_out.scalar_type() != dtype || grad_out.sizes() != input.sizes() ||
      input.numel() > kMaxElements || !optional_fits(weight, input, dtype, n) ||
      !optional_fits(mean, input, at::kFloat, rows) || !optional_fits(rstd, input, at::kFloat, rows) ||
      !mean.defined() || !rstd.defined()) {
    return fallback<ATEN_OP(native_layer_norm_backward)>::call(grad_out, input, normalized_shape, mean, rstd,
                                                               weight_opt, bias_opt, output_mask);
  }
  const at::Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const at::Tensor gamma = weight.defined() ? weight.contiguous() : at::ones({n}, input.options());
  at::Tensor dx = at::empty(input.sizes(), input.options());
  at::Tensor dgamma = at::empty({n}, input.options()), dbeta = at::empty({n}, input.options());
  if (rows == 0) {
    dgamma.zero_();
    dbeta.zero_();
  } else {
    const at::Tensor m = mean.contiguous(), r = rstd.contiguous();
    const std::int64_t dims[2] = {rows, n};
    ocltune_norm_args a;
    ocltune_norm_args_init(&a, "layer_norm_backward", 2, dims);
    a.axis = 1;
    a.dtype = *ocltune_dtype_of(dtype);
    a.dy = tensor_arg(dy);
    a.x = tensor_arg(x);
    a.mean = tensor_arg(m);
    a.rstd = tensor_arg(r);
    a.gamma = tensor_arg(gamma);
    a.dx = tensor_arg(dx);
    a.dgamma = tensor_arg(dgamma);
    a.dbeta = tensor_arg(dbeta);
    call_ocltune("native_layer_norm_backward", [&] { device_runtime(input.device().index()).norm(a); });
  }
  // Shaped like the weight (normalized_shape), as PyTorch returns them.
  return {output_mask[0] ? dx : at::Tensor(), output_mask[1] ? dgamma.view(normalized_shape) : at::Tensor(),
          output_mask[2] ? dbeta.view(normalized_shape) : at::Tensor()};
}

}  // namespace

at::Tensor residual_layer_norm(const at::Tensor& x, const at::Tensor& residual, at::IntArrayRef normalized,
                               const at::Tensor& weight, const at::Tensor& bias, double eps) {
  static const bool fused = [] {
    const char* v = std::getenv("OCLTUNE_TORCH_RESIDUAL_NORM");
    return v == nullptr || std::string_view(v) != "0";
  }();
  if (!fused || x.scalar_type() != residual.scalar_type() || x.sizes() != residual.sizes() ||
      x.device() != residual.device() || !kernel_dtype(x.scalar_type())) {
    return at::layer_norm(x + residual, normalized, weight, bias, eps);
  }
  const std::vector<std::string> ops = {"add"};
  c10::List<std::optional<at::Tensor>> operands;
  operands.push_back(residual);
  const std::array<double, 1> scalars = {0.0};
  const std::array<std::int64_t, 1> reversed = {0};
  const ChainPrologue prologue{ops, operands, scalars, reversed};
  return std::get<0>(layer_norm_with(x, normalized, weight, bias, eps, &prologue));
}

namespace {

// ---- ocltune::fold_batch_norm: an eval batch norm folded into the convolution before it ----

// (w', b') with conv(x, w') + b' = batch_norm(conv(x, w) + conv_bias) in eval mode: one plain kernel
// over the weight (plain_norm.cl's fold_batch_norm), what torch.compile's inference graphs run in
// place of the batch norm's pass over the activations (compiler.py). w is [K, ...]; the statistics,
// the norm's weight and bias are [K].
std::tuple<at::Tensor, at::Tensor> fold_batch_norm(const at::Tensor& w, const std::optional<at::Tensor>& conv_bias,
                                                   const std::optional<at::Tensor>& weight,
                                                   const std::optional<at::Tensor>& bias,
                                                   const at::Tensor& running_mean, const at::Tensor& running_var,
                                                   double eps) {
  check_ocl(w, "ocltune::fold_batch_norm", "w");
  const std::int64_t k = w.dim() > 0 ? w.size(0) : 0;
  const auto check_channels = [&](const std::optional<at::Tensor>& t, const char* what) {
    if (!t || !t->defined()) return;
    check_same_device(w, *t, "ocltune::fold_batch_norm", what);
    TORCH_CHECK(t->dim() == 1 && t->size(0) == k, "ocltune::fold_batch_norm: ", what, " must have shape [", k,
                "], got ", t->sizes());
  };
  check_channels(conv_bias, "conv_bias");
  check_channels(weight, "weight");
  check_channels(bias, "bias");
  check_channels(running_mean, "running_mean");
  check_channels(running_var, "running_var");
  TORCH_CHECK(at::isFloatingType(w.scalar_type()) && plain_dtype(w.scalar_type()),
              "ocltune::fold_batch_norm: w must be float32, float16 or bfloat16, got ", w.scalar_type());
  at::Tensor w_out = at::empty(w.sizes(), w.options());
  at::Tensor b_out = at::empty({k}, w.options());
  if (w.numel() == 0) return {w_out, b_out.zero_()};
  const at::Tensor wc = w.contiguous();
  const at::Tensor cb = conv_bias && conv_bias->defined() ? conv_bias->to(w.scalar_type()).contiguous() : wc;
  const EvalAffine affine(defined_or_empty(weight), defined_or_empty(bias), running_mean, running_var);
  const int device = w.device().index();
  PlainLaunch launch(device, affine.program(device, w.scalar_type()), "fold_batch_norm");
  launch.arg<cl_long>(w.numel()).arg<cl_long>(w.numel() / k).arg<cl_float>(static_cast<float>(eps));
  launch.tensor_at(wc).tensor_at(cb).arg<cl_int>(conv_bias && conv_bias->defined() ? 1 : 0);
  affine.push(launch);
  launch.tensor_at(w_out).tensor_at(b_out);
  launch.run(w.numel());
  return {w_out, b_out};
}

std::tuple<at::Tensor, at::Tensor> fold_batch_norm_meta(const at::Tensor& w, const std::optional<at::Tensor>&,
                                                        const std::optional<at::Tensor>&,
                                                        const std::optional<at::Tensor>&, const at::Tensor&,
                                                        const at::Tensor&, double) {
  return {at::empty_like(w), at::empty({w.dim() > 0 ? w.size(0) : 0}, w.options())};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  m.def(
      "fold_batch_norm(Tensor w, Tensor? conv_bias, Tensor? weight, Tensor? bias, Tensor running_mean, "
      "Tensor running_var, float eps) -> (Tensor, Tensor)");
  m.def(
      "layer_norm_prologue(Tensor input, str[] ops, Tensor?[] operands, float[] scalars, int[] reversed, "
      "int[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)");
}
TORCH_LIBRARY_IMPL(ocltune, PrivateUse1, m) {
  m.impl("fold_batch_norm", &fold_batch_norm);
  m.impl("layer_norm_prologue", &layer_norm_prologue);
}
TORCH_LIBRARY_IMPL(ocltune, Meta, m) {
  m.impl("fold_batch_norm", &fold_batch_norm_meta);
  m.impl("layer_norm_prologue", &layer_norm_prologue_meta);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_batch_norm", batch_norm_forward);
  m.impl("native_batch_norm_backward", batch_norm_backward);
  m.impl("_native_batch_norm_legit", native_batch_norm_legit);
  m.impl("_native_batch_norm_legit.no_stats", native_batch_norm_legit_no_stats);
  m.impl("_native_batch_norm_legit_no_training", native_batch_norm_legit_no_training);
  m.impl("native_layer_norm", layer_norm_forward);
  m.impl("native_layer_norm_backward", layer_norm_backward);
}

}  // namespace ocltune_torch
