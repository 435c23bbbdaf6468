// The activations and the backward ops autograd dispatches for them, on the elementwise generator
// (elementwise.h; every kernel here is one of the elementwise family's):
// relu, relu6/hardtanh, gelu (both forms), silu, sigmoid, tanh, hardswish, hardsigmoid, leaky_relu,
// elu, softplus, with their in-place forms, and threshold_backward, hardtanh_backward, gelu_backward,
// silu_backward, sigmoid_backward, tanh_backward, hardswish_backward, hardsigmoid_backward,
// leaky_relu_backward, elu_backward, softplus_backward.
// A backward op is one binary kernel, op(grad_output, input or output), that follows the
// comparisons of PyTorch's CPU kernels at the kinks, or a few of them where the family has no op of
// its own (a threshold other than 0, a hardtanh other than relu6, elu, softplus); elu's scale and
// input_scale (SELU, CELU) are compositions of registered ops. A softplus threshold above 20, which
// no kernel takes, takes the CPU fallback.
#include <cmath>
#include <string_view>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/ops/elementwise.h"
#include "ocltune_torch/csrc/ops/op_forms.h"

namespace ocltune_torch {
namespace {

// An op of the elementwise family by its name there.
constexpr ElementwiseOp family(const char* name) { return ElementwiseOp{.name = name, .family = name}; }

constexpr ElementwiseOp kRelu = family("relu"), kSigmoid = family("sigmoid"), kTanh = family("tanh"),
                        kSilu = family("silu"), kHardswish = family("hardswish"), kHardsigmoid = family("hardsigmoid"),
                        kRelu6 = family("relu6"), kGelu = family("gelu"), kGeluTanh = family("gelu_tanh"),
                        kMaximum = family("maximum"), kMinimum = family("minimum"), kLeakyRelu = family("leaky_relu"),
                        kElu = family("elu"), kSoftplus = family("softplus"), kAdd = family("add"),
                        kSub = family("sub"), kMul = family("mul"), kReluGrad = family("relu_grad"),
                        kRelu6Grad = family("relu6_grad"), kGeluGrad = family("gelu_grad"),
                        kGeluTanhGrad = family("gelu_tanh_grad"), kSiluGrad = family("silu_grad"),
                        kSigmoidGrad = family("sigmoid_grad"), kTanhGrad = family("tanh_grad"),
                        kHardswishGrad = family("hardswish_grad"), kHardsigmoidGrad = family("hardsigmoid_grad");

const ElementwiseOp& gelu_op(std::string_view approximate) {
  if (approximate == "none") return kGelu;
  TORCH_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return kGeluTanh;
}

at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  return or_fallback(elementwise(gelu_op(approximate), self),
                     [&] { return fallback<ATEN_OP(gelu)>::call(self, approximate); });
}

at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  if (elementwise_into(gelu_op(approximate), self, self)) return self;
  return fallback<ATEN_OP(gelu_)>::call(self, approximate);
}

bool is_relu6(const at::Scalar& min_val, const at::Scalar& max_val) {
  return min_val.to<double>() == 0.0 && max_val.to<double>() == 6.0;
}

// hardtanh(x, 0, 6) is relu6, one kernel; other bounds clamp in two (maximum, then minimum), which
// propagate NaN as PyTorch's clamp does.
at::Tensor hardtanh(const at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val) {
  auto cpu = [&] { return fallback<ATEN_OP(hardtanh)>::call(self, min_val, max_val); };
  if (is_relu6(min_val, max_val)) return or_fallback(elementwise(kRelu6, self), cpu);
  const std::optional<at::Tensor> low = elementwise_scalar(kMaximum, self, min_val.to<double>());
  if (!low) return cpu();
  return or_fallback(elementwise_scalar(kMinimum, *low, max_val.to<double>()), cpu);
}
at::Tensor& hardtanh_(at::Tensor& self, const at::Scalar& min_val, const at::Scalar& max_val) {
  auto cpu = [&]() -> at::Tensor& { return fallback<ATEN_OP(hardtanh_)>::call(self, min_val, max_val); };
  if (is_relu6(min_val, max_val)) return elementwise_into(kRelu6, self, self) ? self : cpu();
  // Both steps take self's dtype and layout, so the second runs wherever the first did.
  if (!elementwise_scalar_into(kMaximum, self, self, min_val.to<double>())) return cpu();
  return elementwise_scalar_into(kMinimum, self, self, max_val.to<double>()) ? self : cpu();
}

at::Tensor leaky_relu(const at::Tensor& self, const at::Scalar& negative_slope) {
  return or_fallback(elementwise_scalar(kLeakyRelu, self, negative_slope.to<double>()),
                     [&] { return fallback<ATEN_OP(leaky_relu)>::call(self, negative_slope); });
}
at::Tensor& leaky_relu_(at::Tensor& self, const at::Scalar& negative_slope) {
  if (elementwise_scalar_into(kLeakyRelu, self, self, negative_slope.to<double>())) return self;
  return fallback<ATEN_OP(leaky_relu_)>::call(self, negative_slope);
}

// elu with PyTorch's scale and input_scale 1 (nn.ELU, F.elu) is the family's elu; softplus with a
// threshold up to 20.
bool plain_elu(const at::Scalar& scale, const at::Scalar& input_scale) {
  return scale.to<double>() == 1.0 && input_scale.to<double>() == 1.0;
}
constexpr double kSoftplusThreshold = 20.0;

// elu with a scale or an input_scale (SELU: scale 1.0507; CELU: input_scale 1 / alpha), PyTorch's
//   x <= 0 ? alpha scale (exp(input_scale x) - 1) : scale x,
// composed on the device: the family's elu of input_scale x with alpha scale is the negative side,
// scale x the positive one, and where picks (x <= 0 as the CPU compares, so a NaN takes scale x).
// 16-bit inputs run on fp32 copies and round once, as the CPU computes them in fp32.
at::Tensor scaled_elu(const at::Tensor& self, double alpha, double scale, double input_scale) {
  if (self.scalar_type() != at::kFloat) {
    return scaled_elu(self.to(at::kFloat), alpha, scale, input_scale).to(self.scalar_type());
  }
  const at::Tensor negative = at::elu(input_scale == 1.0 ? self : at::mul(self, input_scale), alpha * scale);
  return at::where(at::le(self, 0), negative, scale == 1.0 ? self : at::mul(self, scale));
}

at::Tensor elu(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
               const at::Scalar& input_scale) {
  auto cpu = [&] { return fallback<ATEN_OP(elu)>::call(self, alpha, scale, input_scale); };
  if (!plain_elu(scale, input_scale)) {
    check_ocl(self, "elu", "self");
    if (!kernel_dtype(self.scalar_type())) return cpu();
    return scaled_elu(self, alpha.to<double>(), scale.to<double>(), input_scale.to<double>());
  }
  return or_fallback(elementwise_scalar(kElu, self, alpha.to<double>()), cpu);
}
at::Tensor& elu_(at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale, const at::Scalar& input_scale) {
  auto cpu = [&]() -> at::Tensor& { return fallback<ATEN_OP(elu_)>::call(self, alpha, scale, input_scale); };
  check_ocl(self, "elu_", "self");
  if (!plain_elu(scale, input_scale)) {
    if (!kernel_dtype(self.scalar_type())) return cpu();
    const at::Tensor out = scaled_elu(self, alpha.to<double>(), scale.to<double>(), input_scale.to<double>());
    return self.copy_(out);
  }
  return elementwise_scalar_into(kElu, self, self, alpha.to<double>()) ? self : cpu();
}
// The kernel's threshold is 20; a lower one selects x where beta x exceeds it (gt and where, on the
// device). Above 20 log1p(exp(beta x)) / beta rounds to x in fp32, so higher thresholds fall back.
at::Tensor softplus(const at::Tensor& self, const at::Scalar& beta, const at::Scalar& threshold) {
  auto cpu = [&] { return fallback<ATEN_OP(softplus)>::call(self, beta, threshold); };
  const double t = threshold.to<double>();
  if (t > kSoftplusThreshold || !std::isfinite(t)) return cpu();
  const std::optional<at::Tensor> soft = elementwise_scalar(kSoftplus, self, beta.to<double>());
  if (!soft) return cpu();
  if (t == kSoftplusThreshold || soft->numel() == 0) return *soft;
  // The selection in float32, as the CPU's opmath: a 16-bit beta x could round across the threshold.
  return at::where(at::gt(self.to(at::kFloat) * beta, threshold), self, *soft);
}

// ---- backward ops: op(grad_output, input or output) ----

// op(grad, saved) on the family's binary kernel, or the fallback's result.
template <class Fallback>
at::Tensor backward(const char* name, const ElementwiseOp& op, const at::Tensor& grad, const at::Tensor& saved,
                    Fallback fallback_op) {
  check_ocl(grad, name, "grad_output");
  return or_fallback(elementwise(op, grad, saved), fallback_op);
}

// grad where x > threshold: relu_grad against x - threshold, which is positive exactly where x is
// above the threshold (an IEEE difference is 0 only for equal operands; a device that flushes
// subnormal differences to 0 would drop a gradient within 1e-38 of the threshold).
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& threshold) {
  auto cpu = [&] { return fallback<ATEN_OP(threshold_backward)>::call(grad, self, threshold); };
  if (threshold.to<double>() == 0.0) return backward("threshold_backward", kReluGrad, grad, self, cpu);
  check_ocl(grad, "threshold_backward", "grad_output");
  const std::optional<at::Tensor> shifted = elementwise_scalar(kSub, self, threshold.to<double>());
  if (!shifted || shifted->numel() == 0) return cpu();
  return backward("threshold_backward", kReluGrad, grad, *shifted, cpu);
}
// grad where min < x < max: relu_grad against x - min, then against max - x (as threshold_backward).
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& min_val,
                             const at::Scalar& max_val) {
  auto cpu = [&] { return fallback<ATEN_OP(hardtanh_backward)>::call(grad, self, min_val, max_val); };
  if (is_relu6(min_val, max_val)) return backward("hardtanh_backward", kRelu6Grad, grad, self, cpu);
  check_ocl(grad, "hardtanh_backward", "grad_output");
  const std::optional<at::Tensor> above = elementwise_scalar(kSub, self, min_val.to<double>());
  const std::optional<at::Tensor> below = elementwise_scalar(kSub, self, max_val.to<double>(), /*reversed=*/true);
  if (!above || !below || above->numel() == 0) return cpu();
  const std::optional<at::Tensor> kept = elementwise(kReluGrad, grad, *above);
  if (!kept) return cpu();
  return backward("hardtanh_backward", kReluGrad, *kept, *below, cpu);
}
at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate) {
  const ElementwiseOp& op = &gelu_op(approximate) == &kGelu ? kGeluGrad : kGeluTanhGrad;
  return backward("gelu_backward", op, grad, self,
                  [&] { return fallback<ATEN_OP(gelu_backward)>::call(grad, self, approximate); });
}
at::Tensor silu_backward(const at::Tensor& grad, const at::Tensor& self) {
  return backward("silu_backward", kSiluGrad, grad, self,
                  [&] { return fallback<ATEN_OP(silu_backward)>::call(grad, self); });
}
at::Tensor sigmoid_backward(const at::Tensor& grad, const at::Tensor& output) {
  return backward("sigmoid_backward", kSigmoidGrad, grad, output,
                  [&] { return fallback<ATEN_OP(sigmoid_backward)>::call(grad, output); });
}
at::Tensor tanh_backward(const at::Tensor& grad, const at::Tensor& output) {
  return backward("tanh_backward", kTanhGrad, grad, output,
                  [&] { return fallback<ATEN_OP(tanh_backward)>::call(grad, output); });
}
at::Tensor hardswish_backward(const at::Tensor& grad, const at::Tensor& self) {
  return backward("hardswish_backward", kHardswishGrad, grad, self,
                  [&] { return fallback<ATEN_OP(hardswish_backward)>::call(grad, self); });
}
at::Tensor hardsigmoid_backward(const at::Tensor& grad, const at::Tensor& self) {
  return backward("hardsigmoid_backward", kHardsigmoidGrad, grad, self,
                  [&] { return fallback<ATEN_OP(hardsigmoid_backward)>::call(grad, self); });
}
// grad where x > 0, else grad * slope: relu_grad keeps the first part exactly (grad or 0), so
// g + slope * (grad - g) rounds once, as PyTorch's grad * slope does.
at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& negative_slope,
                               bool self_is_result) {
  auto cpu = [&] { return fallback<ATEN_OP(leaky_relu_backward)>::call(grad, self, negative_slope, self_is_result); };
  check_ocl(grad, "leaky_relu_backward", "grad_output");
  const std::optional<at::Tensor> kept = elementwise(kReluGrad, grad, self);
  if (!kept) return cpu();
  if (kept->numel() == 0) return *kept;
  const std::optional<at::Tensor> dropped = elementwise(kSub, grad, *kept);
  if (!dropped) return cpu();
  return or_fallback(elementwise(kAdd, *kept, *dropped, negative_slope.to<double>()), cpu);
}
// The backward of scaled_elu, PyTorch's
//   x <= 0 ? grad input_scale alpha scale exp(input_scale x) : grad scale          (x the input)
//   y <= 0 ? grad input_scale (y + alpha scale) : grad scale                      (y the result),
// in fp32 (16-bit gradients on fp32 copies, rounded once, as the CPU computes them).
at::Tensor scaled_elu_backward(const at::Tensor& grad, double alpha, double scale, double input_scale, bool is_result,
                               const at::Tensor& self_or_result) {
  if (grad.scalar_type() != at::kFloat) {
    return scaled_elu_backward(grad.to(at::kFloat), alpha, scale, input_scale, is_result, self_or_result.to(at::kFloat))
        .to(grad.scalar_type());
  }
  const double negcoef = alpha * scale;
  const at::Tensor& v = self_or_result;
  const at::Tensor slope = is_result ? at::mul(at::add(v, negcoef), input_scale)
                                     : at::mul(at::exp(at::mul(v, input_scale)), negcoef * input_scale);
  return at::where(at::le(v, 0), at::mul(grad, slope), at::mul(grad, scale));
}

// grad where x > 0, else grad * alpha e^x = grad * (y + alpha), y = elu(x) (the result, or computed
// from the input): the slope comes from the forward value, as PyTorch's is_result form does.
at::Tensor elu_backward(const at::Tensor& grad, const at::Scalar& alpha, const at::Scalar& scale,
                        const at::Scalar& input_scale, bool is_result, const at::Tensor& self_or_result) {
  auto cpu = [&] {
    return fallback<ATEN_OP(elu_backward)>::call(grad, alpha, scale, input_scale, is_result, self_or_result);
  };
  check_ocl(grad, "elu_backward", "grad_output");
  if (!plain_elu(scale, input_scale)) {
    if (!kernel_dtype(grad.scalar_type()) || grad.scalar_type() != self_or_result.scalar_type()) return cpu();
    return scaled_elu_backward(grad, alpha.to<double>(), scale.to<double>(), input_scale.to<double>(), is_result,
                               self_or_result);
  }
  const double a = alpha.to<double>();
  const std::optional<at::Tensor> y = is_result ? self_or_result : elementwise_scalar(kElu, self_or_result, a);
  if (!y) return cpu();
  if (y->numel() == 0 || grad.numel() == 0) {
    return at::empty(at::infer_size(grad.sizes(), y->sizes()), grad.options());  // nothing to compute
  }
  const std::optional<at::Tensor> kept = elementwise(kReluGrad, grad, *y);
  if (!kept) return cpu();
  const std::optional<at::Tensor> dropped = elementwise(kSub, grad, *kept);
  const std::optional<at::Tensor> slope = elementwise_scalar(kAdd, *y, a);
  if (!dropped || !slope) return cpu();
  const std::optional<at::Tensor> scaled = elementwise(kMul, *dropped, *slope);
  if (!scaled) return cpu();
  return or_fallback(elementwise(kAdd, *kept, *scaled), cpu);
}
// grad * sigmoid(beta x); above the threshold 20 that sigmoid rounds to 1 in fp32, the gradient itself.
at::Tensor softplus_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& beta,
                             const at::Scalar& threshold) {
  auto cpu = [&] { return fallback<ATEN_OP(softplus_backward)>::call(grad, self, beta, threshold); };
  const double t = threshold.to<double>();
  if (t > kSoftplusThreshold || !std::isfinite(t)) return cpu();
  check_ocl(grad, "softplus_backward", "grad_output");
  const double b = beta.to<double>();
  const std::optional<at::Tensor> z = b == 1.0 ? self : elementwise_scalar(kMul, self, b);
  if (!z) return cpu();
  const std::optional<at::Tensor> s = elementwise(kSigmoid, *z);
  if (!s) return cpu();
  const std::optional<at::Tensor> dx = elementwise(kMul, grad, *s);
  if (!dx) return cpu();
  if (t == kSoftplusThreshold || dx->numel() == 0) return *dx;
  return at::where(at::gt(self.to(at::kFloat) * beta, threshold), grad.expand_as(*dx), *dx);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  register_unary_forms<ATEN_OP(relu), ATEN_OP(relu_), ATEN_OP(relu_out), elementwise_unary_into<kRelu>>(m);
  register_unary_forms<ATEN_OP(sigmoid), ATEN_OP(sigmoid_), ATEN_OP(sigmoid_out), elementwise_unary_into<kSigmoid>>(m);
  register_unary_forms<ATEN_OP(tanh), ATEN_OP(tanh_), ATEN_OP(tanh_out), elementwise_unary_into<kTanh>>(m);
  register_unary_forms<ATEN_OP(silu), ATEN_OP(silu_), ATEN_OP(silu_out), elementwise_unary_into<kSilu>>(m);
  m.impl("gelu", gelu);
  m.impl("gelu_", gelu_);
  register_unary_forms<ATEN_OP(hardswish), ATEN_OP(hardswish_), ATEN_OP(hardswish_out),
                       elementwise_unary_into<kHardswish>>(m);
  register_unary_forms<ATEN_OP(hardsigmoid), ATEN_OP(hardsigmoid_), ATEN_OP(hardsigmoid_out),
                       elementwise_unary_into<kHardsigmoid>>(m);
  m.impl("hardtanh", hardtanh);
  m.impl("hardtanh_", hardtanh_);
  m.impl("leaky_relu", leaky_relu);
  m.impl("leaky_relu_", leaky_relu_);
  m.impl("threshold_backward", threshold_backward);
  m.impl("hardtanh_backward", hardtanh_backward);
  m.impl("gelu_backward", gelu_backward);
  m.impl("silu_backward", silu_backward);
  m.impl("sigmoid_backward", sigmoid_backward);
  m.impl("tanh_backward", tanh_backward);
  m.impl("hardswish_backward", hardswish_backward);
  m.impl("hardsigmoid_backward", hardsigmoid_backward);
  m.impl("leaky_relu_backward", leaky_relu_backward);
  m.impl("elu", elu);
  m.impl("elu_", elu_);
  m.impl("softplus", softplus);
  m.impl("elu_backward", elu_backward);
  m.impl("softplus_backward", softplus_backward);
}

}  // namespace ocltune_torch
