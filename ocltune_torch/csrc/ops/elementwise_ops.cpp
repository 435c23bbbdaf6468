// Arithmetic and math on the elementwise generator (elementwise.h): add, sub, rsub, mul, div (with
// broadcasting, numbers, alpha, and every dtype: the elementwise family computes the float ones, the
// plain kernels the integer and bool ones), exp, log, sqrt, rsqrt, neg, abs, sign, reciprocal, pow,
// maximum, minimum, div's rounding modes (floor_divide; plain kernels of every dtype, which have
// fmod and floor), and the optimisers' addcmul, addcdiv and lerp, composed of those kernels (clamp is
// comparison_ops.cpp's). What neither computes (float64, complex) takes the CPU fallback.
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/result_layout.h"
#include "ocltune_torch/csrc/ops/elementwise.h"
#include "ocltune_torch/csrc/ops/op_forms.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// PyTorch's alpha_check and sub_check, for the integer and bool results the plain kernels compute.
void check_integer_alpha(at::ScalarType /*self*/, at::ScalarType /*other*/, at::ScalarType result,
                         const c10::Scalar& alpha) {
  if (at::isFloatingType(result)) return;
  TORCH_CHECK(!alpha.isFloatingPoint(),
              "For integral input tensors, argument alpha must not be a floating point "
              "number.");
  TORCH_CHECK(
      result != at::kBool || !alpha.isIntegral(false) || alpha.to<std::int64_t>() == 0 || alpha.to<std::int64_t>() == 1,
      "Boolean alpha only supported for Boolean results.");
}
// sub_check: PyTorch refuses a bool on either side (x - True as well as two bool tensors).
void check_sub(at::ScalarType self, at::ScalarType other, at::ScalarType result, const c10::Scalar& alpha) {
  TORCH_CHECK(self != at::kBool || other != at::kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  TORCH_CHECK(self != at::kBool && other != at::kBool,
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
              "mask, use the `~` or `logical_not()` operator instead.");
  check_integer_alpha(self, other, result, alpha);
}

// The ops on the generator: the family's kernel, the plain kernel and the plain kernel for a number
// first (2 - x is rsub_scalar of x).
constexpr ElementwiseOp kAdd{
    .name = "add", .family = "add", .plain = "add", .plain_reversed = "radd", .check = check_integer_alpha};
constexpr ElementwiseOp kSub{
    .name = "sub", .family = "sub", .plain = "sub", .plain_reversed = "rsub", .check = check_sub};
constexpr ElementwiseOp kMul{.name = "mul", .family = "mul", .plain = "mul", .plain_reversed = "mul"};
constexpr ElementwiseOp kDiv{.name = "div", .family = "div", .plain_float64 = "div_true"};
constexpr ElementwiseOp kPow{.name = "pow", .family = "pow"};
constexpr ElementwiseOp kMaximum{.name = "maximum", .family = "maximum", .plain = "maximum"};
constexpr ElementwiseOp kMinimum{.name = "minimum", .family = "minimum", .plain = "minimum"};
constexpr ElementwiseOp kExp{.name = "exp", .family = "exp", .plain_float64 = "math_exp"};
constexpr ElementwiseOp kLog{.name = "log", .family = "log", .plain_float64 = "math_log"};
constexpr ElementwiseOp kSqrt{.name = "sqrt", .family = "sqrt", .plain_float64 = "math_sqrt"};
constexpr ElementwiseOp kRsqrt{.name = "rsqrt", .family = "rsqrt", .plain_float64 = "math_rsqrt"};
constexpr ElementwiseOp kNeg{.name = "neg", .family = "neg", .plain_float64 = "math_neg"};
constexpr ElementwiseOp kAbs{.name = "abs", .family = "abs", .plain_float64 = "math_abs"};
constexpr ElementwiseOp kSign{.name = "sign", .family = "sign"};
constexpr ElementwiseOp kReciprocal{.name = "reciprocal", .family = "div", .plain_float64 = "math_reciprocal"};
// Plain kernels only (floating dtypes): math the family has no op for, which detection and
// positional-encoding code calls (MultiScaleRoIAlign's floor(log2(...)), sin/cos tables).
constexpr ElementwiseOp kFloor{.name = "floor", .plain = "math_floor"};
constexpr ElementwiseOp kCeil{.name = "ceil", .plain = "math_ceil"};
constexpr ElementwiseOp kTrunc{.name = "trunc", .plain = "math_trunc"};
constexpr ElementwiseOp kRound{.name = "round", .plain = "math_round"};
constexpr ElementwiseOp kLog2{.name = "log2", .plain = "math_log2"};
constexpr ElementwiseOp kLog10{.name = "log10", .plain = "math_log10"};
constexpr ElementwiseOp kLog1p{.name = "log1p", .plain = "math_log1p"};
constexpr ElementwiseOp kExpm1{.name = "expm1", .plain = "math_expm1"};
constexpr ElementwiseOp kSin{.name = "sin", .plain = "math_sin"};
constexpr ElementwiseOp kCos{.name = "cos", .plain = "math_cos"};

// The plain float kernels above exist for floating dtypes only: integer and bool inputs (rounding is
// the identity there, log2 and sin promote to float) take PyTorch's rules through the fallback.
template <const ElementwiseOp& Op>
bool floating_unary_into(const at::Tensor& out, const at::Tensor& self) {
  if (!at::isFloatingType(self.scalar_type()) || out.scalar_type() != self.scalar_type()) return false;
  return elementwise_into(Op, out, self);
}

// other - alpha * self; rsub.Scalar is a composite that calls sub(other, self, alpha) itself.
at::Tensor rsub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return or_fallback(elementwise(kSub, other, self, alpha),
                     [&] { return fallback<ATEN_OP(rsub_Tensor)>::call(self, other, alpha); });
}

// out= forms of composites: the result computed, then moved into out (resized as PyTorch resizes it).
at::Tensor& write_out(const at::Tensor& result, at::Tensor& out) {
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

// ---- division with a rounding mode: plain kernels (div_trunc, div_floor), every plain dtype but bool ----

constexpr ElementwiseOp kDivTrunc{.name = "div", .plain = "div_trunc"};
constexpr ElementwiseOp kDivFloor{.name = "div", .plain = "div_floor"};

bool floor_mode(std::string_view mode) {
  TORCH_CHECK(mode == "trunc" || mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode, "'");
  return mode == "floor";
}

// Whether other, broadcast to sizes, is one value (TensorIterator's is_scalar): the CPU's 16-bit
// kernels then divide by it in fp32, unrounded, and elsewhere round it to the result's precision.
bool one_value(const at::Tensor& other, at::IntArrayRef sizes) {
  if (is_number(other)) return true;
  const at::Tensor e = other.expand(sizes);
  for (std::int64_t d = 0; d < e.dim(); ++d) {
    if (e.size(d) != 1 && e.stride(d) != 0) return false;
  }
  return true;
}

// self / other rounded towards zero (`floor` false: "trunc") or down ("floor") into out, as PyTorch's
// CPU kernels compute them: the generator's plain route, with the kernels' s0 (the alpha slot) saying
// whether a 16-bit quotient is rounded first. False for bool (the CPU's error) and what the plain
// kernels do not take. An integer divisor of 0 raises ZeroDivisionError.
bool rounded_division_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, bool floor) {
  const at::ScalarType compute = at::result_type(self, other);
  if (compute == at::kBool || !plain_dtype(compute)) return false;
  if (!at::isFloatingType(compute) && (is_ocl(self) || is_ocl(other)) && out.numel() > 0) {
    // The CPU's integer kernels raise for a zero divisor, where a device's division returns anything:
    // one comparison and a read of its answer (a wait) before the kernel.
    const bool zero = is_number(other) ? other.item<std::int64_t>() == 0 : at::any(at::eq(other, 0)).item<bool>();
    TORCH_CHECK(!zero, "ZeroDivisionError");
  }
  // A number first has no plain kernel of its own: a 0-dim tensor on the device.
  const at::Tensor a = is_number(self) ? at::full({}, self.item(), other.options().dtype(compute)) : self;
  const bool rounded = at::isReducedFloatingType(compute) && !one_value(other, out.sizes());
  return elementwise_into(floor ? kDivFloor : kDivTrunc, out, a, other, rounded ? 1 : 0);
}

template <class Fallback>
at::Tensor rounded_div(const at::Tensor& self, const at::Tensor& other, bool floor, Fallback fallback_op) {
  const at::Tensor& like = is_ocl(self) ? self : other;
  const at::DimVector sizes = at::infer_size_dimvector(self.sizes(), other.sizes());
  at::Tensor out = new_elementwise_result(sizes, like.options().dtype(at::result_type(self, other)), {&self, &other});
  if (!rounded_division_into(out, self, other, floor)) return fallback_op();
  return out;
}

// Into self (in place) or out: the result type must cast to it, as TensorIterator's safe casting asks.
template <class Fallback>
at::Tensor& rounded_div_into(const char* op, at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                             bool floor, Fallback fallback_op) {
  check_ocl(out, op, "out");
  const at::ScalarType type = at::result_type(self, other);
  if (!plain_dtype(type) || !plain_dtype(out.scalar_type())) return fallback_op();
  TORCH_CHECK(at::canCast(type, out.scalar_type()), "result type ", type, " can't be cast to the desired output type ",
              out.scalar_type());
  const at::DimVector sizes = at::infer_size_dimvector(self.sizes(), other.sizes());
  if (out.is_same(self)) {
    TORCH_CHECK(at::IntArrayRef(sizes) == self.sizes(), "output with shape ", self.sizes(),
                " doesn't match the broadcast shape ", at::IntArrayRef(sizes));
  } else {
    at::native::resize_output(out, sizes);
  }
  at::assert_no_internal_overlap(out);
  if (!rounded_division_into(out, self, other, floor)) return fallback_op();
  return out;
}

at::Tensor div_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  if (!mode) return at::div(self, other);
  return rounded_div(self, other, floor_mode(*mode),
                     [&] { return fallback<ATEN_OP(div_Tensor_mode)>::call(self, other, mode); });
}
at::Tensor& div_mode_(at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  if (!mode) return self.div_(other);
  return rounded_div_into("div_", self, self, other, floor_mode(*mode), [&]() -> at::Tensor& {
    return fallback<ATEN_OP(div__Tensor_mode)>::call(self, other, mode);
  });
}
at::Tensor& div_mode_out(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode,
                         at::Tensor& out) {
  if (!mode) return at::div_out(out, self, other);
  return rounded_div_into("div", out, self, other, floor_mode(*mode), [&]() -> at::Tensor& {
    return fallback<ATEN_OP(div_out_mode)>::call(self, other, mode, out);
  });
}
// floor_divide (Python's //) is div's "floor" mode; its Scalar forms are composites over these.
at::Tensor floor_divide(const at::Tensor& self, const at::Tensor& other) {
  return rounded_div(self, other, true, [&] { return fallback<ATEN_OP(floor_divide)>::call(self, other); });
}
at::Tensor& floor_divide_(at::Tensor& self, const at::Tensor& other) {
  return rounded_div_into("floor_divide_", self, self, other, true,
                          [&]() -> at::Tensor& { return fallback<ATEN_OP(floor_divide__Tensor)>::call(self, other); });
}
at::Tensor& floor_divide_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return rounded_div_into("floor_divide", out, self, other, true,
                          [&]() -> at::Tensor& { return fallback<ATEN_OP(floor_divide_out)>::call(self, other, out); });
}

// ---- unary math ----

// sgn is sign for real numbers (abs's backward calls it).
at::Tensor sgn(const at::Tensor& self) {
  if (self.is_complex()) return fallback<ATEN_OP(sgn)>::call(self);
  return op_forms::functional<ATEN_OP(sign), elementwise_unary_into<kSign>>(self);
}

// 1 / x as div(1, x), reversed; float64 (GradScaler's inverse scale) on its plain kernel.
bool reciprocal_into(const at::Tensor& out, const at::Tensor& self) {
  if (self.scalar_type() == at::kDouble) return elementwise_into(kReciprocal, out, self);
  return elementwise_scalar_into(kReciprocal, out, self, 1.0, /*reversed=*/true);
}

// x ** 2 is x * x and x ** 0.5 is sqrt, as PyTorch's CPU kernel special-cases them (the device's pow
// is only within 16 ulp); other exponents go to pow.
at::Tensor pow_scalar(const at::Tensor& self, const at::Scalar& exponent) {
  auto cpu = [&] { return fallback<ATEN_OP(pow_Tensor_Scalar)>::call(self, exponent); };
  check_ocl(self, "pow", "self");
  if (exponent.isComplex() || !kernel_dtype(self.scalar_type())) return cpu();
  const double e = exponent.to<double>();
  if (e == 2.0) return or_fallback(elementwise(kMul, self, self), cpu);
  if (e == 0.5) return or_fallback(elementwise(kSqrt, self), cpu);
  if (e == 1.0) return self.clone();
  return or_fallback(elementwise_scalar(kPow, self, e), cpu);
}
// In place and out=: the functional result copied in (the gradients of vector norms use both).
at::Tensor& pow_scalar_(at::Tensor& self, const at::Scalar& exponent) {
  if (exponent.isComplex() || !kernel_dtype(self.scalar_type())) {
    return fallback<ATEN_OP2(pow_, Scalar)>::call(self, exponent);
  }
  return self.copy_(pow_scalar(self, exponent));
}
at::Tensor& pow_scalar_out(const at::Tensor& self, const at::Scalar& exponent, at::Tensor& out) {
  if (exponent.isComplex() || !kernel_dtype(self.scalar_type()) || out.scalar_type() != self.scalar_type() ||
      out.device() != self.device()) {
    return fallback<ATEN_OP2(pow, Tensor_Scalar_out)>::call(self, exponent, out);
  }
  return write_out(pow_scalar(self, exponent), out);
}
at::Tensor pow_base(const at::Scalar& base, const at::Tensor& exponent) {
  auto cpu = [&] { return fallback<ATEN_OP(pow_Scalar)>::call(base, exponent); };
  if (base.isComplex()) return cpu();
  return or_fallback(elementwise_scalar(kPow, exponent, base.to<double>(), /*reversed=*/true), cpu);
}

// x == -Inf and x == +Inf (attention's safe softmax masks rows with them), through the comparisons.
at::Tensor isneginf(const at::Tensor& self) {
  check_ocl(self, "isneginf", "self");
  if (!self.is_floating_point()) return at::zeros(self.sizes(), self.options().dtype(at::kBool));
  return at::eq(self, -INFINITY);
}
at::Tensor isposinf(const at::Tensor& self) {
  check_ocl(self, "isposinf", "self");
  if (!self.is_floating_point()) return at::zeros(self.sizes(), self.options().dtype(at::kBool));
  return at::eq(self, INFINITY);
}
// where(cond, self, other) into out: safe_softmax (attention) calls this form.
at::Tensor& where_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return write_out(at::where(condition, self, other), out);
}
at::Tensor& isneginf_out(const at::Tensor& self, at::Tensor& out) {
  return write_out(ocltune_torch::isneginf(self), out);
}
at::Tensor& isposinf_out(const at::Tensor& self, at::Tensor& out) {
  return write_out(ocltune_torch::isposinf(self), out);
}

// ---- the optimisers' ternary ops, one kernel per step ----

// self + value * (t1 op t2), op = mul (addcmul) or div (addcdiv). 16-bit operands are computed in
// float32 copies and rounded once, as PyTorch's CPU does: rounding t1 op t2 to 16 bits before the add
// erred by more than half an ulp where the terms cancel (test_opinfo found it).
at::Tensor addc(const ElementwiseOp& op, const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                const at::Scalar& value) {
  auto cpu = [&] {
    return &op == &kMul ? fallback<ATEN_OP(addcmul)>::call(self, t1, t2, value)
                        : fallback<ATEN_OP(addcdiv)>::call(self, t1, t2, value);
  };
  const at::ScalarType type = at::promote_types(at::result_type(self, t1), t2.scalar_type());
  if (!kernel_dtype(type) || self.scalar_type() != type || t1.scalar_type() != type || t2.scalar_type() != type) {
    return cpu();
  }
  if (type != at::kFloat) {
    const at::Tensor wide = addc(op, self.to(at::kFloat), t1.to(at::kFloat), t2.to(at::kFloat), value);
    return in_elementwise_layout(wide.to(type), {&self, &t1, &t2});
  }
  const std::optional<at::Tensor> product = elementwise(op, t1, t2);
  if (!product) return cpu();
  const std::optional<at::Tensor> sum = elementwise(kAdd, self, *product, value);
  if (!sum) return cpu();
  return in_elementwise_layout(*sum, {&self, &t1, &t2});
}
at::Tensor addcmul(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  return addc(kMul, self, t1, t2, value);
}
at::Tensor addcdiv(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  return addc(kDiv, self, t1, t2, value);
}
at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  return self.copy_(ocltune_torch::addcmul(self, t1, t2, value));
}
at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  return self.copy_(ocltune_torch::addcdiv(self, t1, t2, value));
}

// PyTorch's two-sided form: self + w (end - self) for |w| < 0.5, else end - (1 - w)(end - self).
// 16-bit tensors are computed on float32 copies and rounded once, as the CPU's opmath does: a
// difference rounded to 16 bits first lost up to 13 ulps where self and end nearly cancel (found by
// the registered-op property tests' explore profile).
at::Tensor lerp(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
  auto cpu = [&] { return fallback<ATEN_OP(lerp_Scalar)>::call(self, end, weight); };
  const at::ScalarType type = self.scalar_type();
  if ((type == at::kHalf || type == at::kBFloat16) && end.scalar_type() == type && is_ocl(self) && is_ocl(end) &&
      end.device() == self.device()) {
    return in_elementwise_layout(ocltune_torch::lerp(self.to(at::kFloat), end.to(at::kFloat), weight).to(type),
                                 {&self, &end});
  }
  const double w = weight.to<double>();
  const std::optional<at::Tensor> diff = elementwise(kSub, end, self);
  if (!diff) return cpu();
  const std::optional<at::Tensor> result =
      std::abs(w) < 0.5 ? elementwise(kAdd, self, *diff, w) : elementwise(kSub, end, *diff, 1.0 - w);
  if (!result) return cpu();
  return in_elementwise_layout(*result, {&self, &end});
}
at::Tensor& lerp_(at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
  return self.copy_(ocltune_torch::lerp(self, end, weight));
}

// The same with a tensor of weights (broadcast with self and end): both sides computed and one taken
// per element, in float32 for 16-bit tensors and rounded once, as the CPU's opmath does. Tensors of
// different dtypes go to the CPU kernel, which raises PyTorch's error.
at::Tensor lerp_tensor(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight) {
  check_ocl(self, "lerp", "self");
  if (!kernel_dtype(self.scalar_type()) || end.scalar_type() != self.scalar_type() ||
      weight.scalar_type() != self.scalar_type() || end.device() != self.device() ||
      (weight.device() != self.device() && weight.dim() != 0)) {
    return fallback<ATEN_OP(lerp_Tensor)>::call(self, end, weight);
  }
  const at::Tensor s = self.to(at::kFloat), e = end.to(at::kFloat), w = weight.to(self.device(), at::kFloat);
  const at::Tensor diff = e - s;
  return in_elementwise_layout(at::where(w.abs() < 0.5, s + w * diff, e - diff * (1 - w)).to(self.scalar_type()),
                               {&self, &end, &weight});
}
at::Tensor& lerp_tensor_(at::Tensor& self, const at::Tensor& end, const at::Tensor& weight) {
  return self.copy_(lerp_tensor(self, end, weight));
}
at::Tensor& lerp_tensor_out(const at::Tensor& self, const at::Tensor& end, const at::Tensor& weight, at::Tensor& out) {
  if (out.scalar_type() != self.scalar_type() || out.device() != self.device()) {
    return fallback<ATEN_OP(lerp_Tensor_out)>::call(self, end, weight, out);
  }
  const at::Tensor result = lerp_tensor(self, end, weight);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  register_binary_alpha_forms<ATEN_OP(add_Tensor), ATEN_OP(add__Tensor), ATEN_OP(add_out), elementwise_op_into<kAdd>>(
      m);
  register_binary_alpha_forms<ATEN_OP(sub_Tensor), ATEN_OP(sub__Tensor), ATEN_OP(sub_out), elementwise_op_into<kSub>>(
      m);
  register_binary_forms<ATEN_OP(mul_Tensor), ATEN_OP(mul__Tensor), ATEN_OP(mul_out), elementwise_op_into<kMul>>(m);
  register_binary_forms<ATEN_OP(div_Tensor), ATEN_OP(div__Tensor), ATEN_OP(div_out), elementwise_op_into<kDiv>>(m);
  register_binary_forms<ATEN_OP(pow_Tensor_Tensor), ATEN_OP(pow__Tensor), ATEN_OP(pow_Tensor_Tensor_out),
                        elementwise_op_into<kPow>>(m);
  register_binary_forms<ATEN_OP(maximum), void, ATEN_OP(maximum_out), elementwise_op_into<kMaximum>>(m);
  register_binary_forms<ATEN_OP(minimum), void, ATEN_OP(minimum_out), elementwise_op_into<kMinimum>>(m);
  m.impl("rsub.Tensor", rsub);
  m.impl("div.Tensor_mode", div_mode);
  m.impl("div_.Tensor_mode", div_mode_);
  m.impl("div.out_mode", div_mode_out);
  m.impl("floor_divide", floor_divide);
  m.impl("floor_divide_.Tensor", floor_divide_);
  m.impl("floor_divide.out", floor_divide_out);
  register_unary_forms<ATEN_OP(exp), ATEN_OP(exp_), ATEN_OP(exp_out), elementwise_unary_into<kExp>>(m);
  register_unary_forms<ATEN_OP(log), ATEN_OP(log_), ATEN_OP(log_out), elementwise_unary_into<kLog>>(m);
  register_unary_forms<ATEN_OP(sqrt), ATEN_OP(sqrt_), ATEN_OP(sqrt_out), elementwise_unary_into<kSqrt>>(m);
  register_unary_forms<ATEN_OP(rsqrt), ATEN_OP(rsqrt_), ATEN_OP(rsqrt_out), elementwise_unary_into<kRsqrt>>(m);
  register_unary_forms<ATEN_OP(neg), ATEN_OP(neg_), ATEN_OP(neg_out), elementwise_unary_into<kNeg>>(m);
  register_unary_forms<ATEN_OP(abs), ATEN_OP(abs_), ATEN_OP(abs_out), elementwise_unary_into<kAbs>>(m);
  register_unary_forms<ATEN_OP(sign), ATEN_OP(sign_), ATEN_OP(sign_out), elementwise_unary_into<kSign>>(m);
  register_unary_forms<ATEN_OP(reciprocal), ATEN_OP(reciprocal_), ATEN_OP(reciprocal_out), reciprocal_into>(m);
  register_unary_forms<ATEN_OP(floor), ATEN_OP(floor_), ATEN_OP(floor_out), floating_unary_into<kFloor>>(m);
  register_unary_forms<ATEN_OP(ceil), ATEN_OP(ceil_), ATEN_OP(ceil_out), floating_unary_into<kCeil>>(m);
  register_unary_forms<ATEN_OP(trunc), ATEN_OP(trunc_), ATEN_OP(trunc_out), floating_unary_into<kTrunc>>(m);
  register_unary_forms<ATEN_OP(round), ATEN_OP(round_), ATEN_OP(round_out), floating_unary_into<kRound>>(m);
  register_unary_forms<ATEN_OP(log2), ATEN_OP(log2_), ATEN_OP(log2_out), floating_unary_into<kLog2>>(m);
  register_unary_forms<ATEN_OP(log10), ATEN_OP(log10_), ATEN_OP(log10_out), floating_unary_into<kLog10>>(m);
  register_unary_forms<ATEN_OP(log1p), ATEN_OP(log1p_), ATEN_OP(log1p_out), floating_unary_into<kLog1p>>(m);
  register_unary_forms<ATEN_OP(expm1), ATEN_OP(expm1_), ATEN_OP(expm1_out), floating_unary_into<kExpm1>>(m);
  register_unary_forms<ATEN_OP(sin), ATEN_OP(sin_), ATEN_OP(sin_out), floating_unary_into<kSin>>(m);
  register_unary_forms<ATEN_OP(cos), ATEN_OP(cos_), ATEN_OP(cos_out), floating_unary_into<kCos>>(m);
  m.impl("sgn", sgn);
  m.impl("where.self_out", where_out);
  m.impl("isneginf", isneginf);
  m.impl("isposinf", isposinf);
  m.impl("isneginf.out", isneginf_out);
  m.impl("isposinf.out", isposinf_out);
  m.impl("pow.Tensor_Scalar", pow_scalar);
  m.impl("pow_.Scalar", pow_scalar_);
  m.impl("pow.Tensor_Scalar_out", pow_scalar_out);
  m.impl("pow.Scalar", pow_base);
  m.impl("addcmul", addcmul);
  m.impl("addcmul_", addcmul_);
  m.impl("addcdiv", addcdiv);
  m.impl("addcdiv_", addcdiv_);
  m.impl("lerp.Scalar", lerp);
  m.impl("lerp_.Scalar", lerp_);
  m.impl("lerp.Tensor", lerp_tensor);
  m.impl("lerp_.Tensor", lerp_tensor_);
  m.impl("lerp.Tensor_out", lerp_tensor_out);
}

}  // namespace ocltune_torch
