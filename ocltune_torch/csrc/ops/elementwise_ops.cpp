// Arithmetic and math on ocltune's elementwise family (elementwise_kernel.h): add, sub, rsub, mul, div
// (broadcasting, Scalar alpha, and their out= forms), exp, log, sqrt, rsqrt, neg, abs, sign, reciprocal,
// pow, maximum, minimum, and the optimisers' addcmul, addcdiv and lerp, composed of those kernels (clamp
// is plain_elementwise.cpp's, for every dtype); in-place variants
// write into self when it is dense. Integer and bool operands of add, sub and mul, and div's rounding
// modes (trunc, floor, so floor_divide) of every dtype, run on the plain kernels (plain_elementwise.h),
// which have fmod and floor; what neither computes (mixed dtypes, float64) takes the CPU fallback.
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Operators.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/ops/comparison_ops.h"
#include "ocltune_torch/csrc/ops/elementwise_kernel.h"
#include "ocltune_torch/csrc/ops/op_forms.h"
#include "ocltune_torch/csrc/plain/plain_elementwise.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// self + alpha * other or self - alpha * other (`kernel_op`). Integer and bool operands run on the
// plain kernels (plain_elementwise.h), the float ones here. A number first with an alpha (rsub.Scalar
// computes 2 - 3 * x as sub(2, x, alpha=3)) takes two steps: the family's reversed op has no alpha.
template <class Fallback>
at::Tensor add_or_sub(const char* op, const char* kernel_op, const at::Tensor& self, const at::Tensor& other,
                      const at::Scalar& alpha, Fallback fallback_op) {
  if (auto r = integer_arithmetic(kernel_op, self, other, alpha)) return *r;
  const double a = alpha.to<double>();
  auto number = [](const at::Tensor& t) { return t.dim() == 0 && t.is_cpu(); };
  if (a == 1.0 || !number(self) || number(other)) return binary(op, kernel_op, self, other, a, fallback_op);
  bool failed = false;  // a step the kernels cannot take: the whole op falls back, not that step alone
  auto step_failed = [&] {
    failed = true;
    return at::Tensor();
  };
  const at::Tensor scaled = run_planned(op, "mul", plan_scalar(op, other, a), step_failed);
  if (failed) return fallback_op();
  const at::Tensor result = binary(op, kernel_op, self, scaled, 1.0, step_failed);
  return failed ? fallback_op() : result;
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return add_or_sub("add", "add", self, other, alpha,
                    [&] { return fallback<ATEN_OP(add_Tensor)>::call(self, other, alpha); });
}
at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return add_or_sub("sub", "sub", self, other, alpha,
                    [&] { return fallback<ATEN_OP(sub_Tensor)>::call(self, other, alpha); });
}
// other - alpha * self; rsub.Scalar is a composite that calls sub(other, self, alpha) itself.
at::Tensor rsub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return add_or_sub("rsub", "sub", other, self, alpha,
                    [&] { return fallback<ATEN_OP(rsub_Tensor)>::call(self, other, alpha); });
}
at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  if (auto r = integer_arithmetic("mul", self, other, 1)) return *r;
  return binary("mul", "mul", self, other, 1.0, [&] { return fallback<ATEN_OP(mul_Tensor)>::call(self, other); });
}
at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  return binary("div", "div", self, other, 1.0, [&] { return fallback<ATEN_OP(div_Tensor)>::call(self, other); });
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (integer_arithmetic_("add", self, other, alpha)) return self;
  return binary_("add_", "add", self, other, alpha.to<double>(),
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(add__Tensor)>::call(self, other, alpha); });
}
at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  if (integer_arithmetic_("sub", self, other, alpha)) return self;
  return binary_("sub_", "sub", self, other, alpha.to<double>(),
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(sub__Tensor)>::call(self, other, alpha); });
}
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  if (integer_arithmetic_("mul", self, other, 1)) return self;
  return binary_("mul_", "mul", self, other, 1.0,
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(mul__Tensor)>::call(self, other); });
}
at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  return binary_("div_", "div", self, other, 1.0,
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(div__Tensor)>::call(self, other); });
}

// out= forms, which composite ops and PyTorch's own per-tensor loops call: the result is computed as
// for the functional op and moved into out (resized as PyTorch resizes an out= argument).
at::Tensor& write_out(const at::Tensor& result, at::Tensor& out) {
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}
at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  return write_out(ocltune_torch::add(self, other, alpha), out);
}
at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  return write_out(ocltune_torch::sub(self, other, alpha), out);
}
at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return write_out(ocltune_torch::mul(self, other), out);
}
at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return write_out(ocltune_torch::div(self, other), out);
}

// ---- division with a rounding mode: the plain kernels (plain_elementwise.h), every plain dtype ----

bool floor_mode(std::string_view mode) {
  TORCH_CHECK(mode == "trunc" || mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode, "'");
  return mode == "floor";
}

template <class Fallback>
at::Tensor rounded_div(const at::Tensor& self, const at::Tensor& other, bool floor, Fallback fallback_op) {
  const at::ScalarType type = at::result_type(self, other);
  if (!plain_dtype(type)) return fallback_op();
  const at::Tensor& like = is_ocl(self) ? self : other;
  at::Tensor out = new_result(like, at::infer_size(self.sizes(), other.sizes()), type);
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
  const std::vector<std::int64_t> sizes = to_vector(at::infer_size(self.sizes(), other.sizes()));
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
  if (!mode) return ocltune_torch::div(self, other);
  return rounded_div(self, other, floor_mode(*mode),
                     [&] { return fallback<ATEN_OP(div_Tensor_mode)>::call(self, other, mode); });
}
at::Tensor& div_mode_(at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  if (!mode) return ocltune_torch::div_(self, other);
  return rounded_div_into("div_", self, self, other, floor_mode(*mode), [&]() -> at::Tensor& {
    return fallback<ATEN_OP(div__Tensor_mode)>::call(self, other, mode);
  });
}
at::Tensor& div_mode_out(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode,
                         at::Tensor& out) {
  if (!mode) return ocltune_torch::div_out(self, other, out);
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

// One kernel each; register_unary_forms (op_forms.h) makes the functional, in-place and out= forms.
#define OCLTUNE_UNARY(name) \
  bool name##_into(const at::Tensor& out, const at::Tensor& self) { return unary_into(#name, #name, out, self); }
OCLTUNE_UNARY(exp)
OCLTUNE_UNARY(log)
OCLTUNE_UNARY(sqrt)
OCLTUNE_UNARY(rsqrt)
OCLTUNE_UNARY(neg)
OCLTUNE_UNARY(abs)
OCLTUNE_UNARY(sign)
#undef OCLTUNE_UNARY

// sgn is sign for real numbers (abs's backward calls it).
at::Tensor sgn(const at::Tensor& self) {
  if (self.is_complex()) return fallback<ATEN_OP(sgn)>::call(self);
  return op_forms::functional<ATEN_OP(sign), sign_into>(self);
}

// 1 / x as div(1, x), reversed.
at::Tensor reciprocal(const at::Tensor& self) {
  return run_planned("reciprocal", "div", plan_scalar("reciprocal", self, 1.0, true),
                     [&] { return fallback<ATEN_OP(reciprocal)>::call(self); });
}
at::Tensor& reciprocal_(at::Tensor& self) {
  at::Tensor out = ocltune_torch::reciprocal(self);
  return self.copy_(out);
}

// x ** 2 is x * x and x ** 0.5 is sqrt, as PyTorch's CPU kernel special-cases them (the device's pow
// is only within 16 ulp); other exponents go to pow.
at::Tensor pow_scalar(const at::Tensor& self, const at::Scalar& exponent) {
  auto cpu = [&] { return fallback<ATEN_OP(pow_Tensor_Scalar)>::call(self, exponent); };
  if (exponent.isComplex() || !kernel_dtype(self.scalar_type())) return cpu();
  const double e = exponent.to<double>();
  if (e == 2.0) return binary("pow", "mul", self, self, 1.0, cpu);
  if (e == 0.5) return unary("pow", "sqrt", self, cpu);
  if (e == 1.0) return self.clone();
  return run_planned("pow", "pow", plan_scalar("pow", self, e), cpu);
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
  const at::Tensor result = pow_scalar(self, exponent);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}
at::Tensor pow_tensor(const at::Tensor& self, const at::Tensor& exponent) {
  return binary("pow", "pow", self, exponent, 1.0,
                [&] { return fallback<ATEN_OP(pow_Tensor_Tensor)>::call(self, exponent); });
}
at::Tensor pow_base(const at::Scalar& base, const at::Tensor& exponent) {
  auto cpu = [&] { return fallback<ATEN_OP(pow_Scalar)>::call(base, exponent); };
  if (base.isComplex()) return cpu();
  return run_planned("pow", "pow", plan_scalar("pow", exponent, base.to<double>(), true), cpu);
}

at::Tensor maximum(const at::Tensor& self, const at::Tensor& other) {
  return binary("maximum", "maximum", self, other, 1.0, [&] { return fallback<ATEN_OP(maximum)>::call(self, other); });
}
at::Tensor minimum(const at::Tensor& self, const at::Tensor& other) {
  return binary("minimum", "minimum", self, other, 1.0, [&] { return fallback<ATEN_OP(minimum)>::call(self, other); });
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
at::Tensor addc(const char* name, const char* op, const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                const at::Scalar& value) {
  auto cpu = [&] {
    return std::string_view(op) == "mul" ? fallback<ATEN_OP(addcmul)>::call(self, t1, t2, value)
                                         : fallback<ATEN_OP(addcdiv)>::call(self, t1, t2, value);
  };
  const at::ScalarType type = at::promote_types(at::result_type(self, t1), t2.scalar_type());
  if (!kernel_dtype(type) || self.scalar_type() != type || t1.scalar_type() != type || t2.scalar_type() != type) {
    return cpu();
  }
  if (type != at::kFloat) {
    const at::Tensor wide = addc(name, op, self.to(at::kFloat), t1.to(at::kFloat), t2.to(at::kFloat), value);
    return wide.to(type);
  }
  const at::Tensor product = binary(name, op, t1, t2, 1.0, cpu);
  return binary(name, "add", self, product, value.to<double>(), cpu);
}
at::Tensor addcmul(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  return addc("addcmul", "mul", self, t1, t2, value);
}
at::Tensor addcdiv(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  return addc("addcdiv", "div", self, t1, t2, value);
}
at::Tensor& addcmul_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  at::Tensor out = ocltune_torch::addcmul(self, t1, t2, value);
  return self.copy_(out);
}
at::Tensor& addcdiv_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const at::Scalar& value) {
  at::Tensor out = ocltune_torch::addcdiv(self, t1, t2, value);
  return self.copy_(out);
}

// PyTorch's two-sided form: self + w (end - self) for |w| < 0.5, else end - (1 - w)(end - self).
at::Tensor lerp(const at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
  auto cpu = [&] { return fallback<ATEN_OP(lerp_Scalar)>::call(self, end, weight); };
  const double w = weight.to<double>();
  const at::Tensor diff = binary("lerp", "sub", end, self, 1.0, cpu);
  if (std::abs(w) < 0.5) return binary("lerp", "add", self, diff, w, cpu);
  return binary("lerp", "sub", end, diff, 1.0 - w, cpu);
}
at::Tensor& lerp_(at::Tensor& self, const at::Tensor& end, const at::Scalar& weight) {
  at::Tensor out = ocltune_torch::lerp(self, end, weight);
  return self.copy_(out);
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
  return at::where(w.abs() < 0.5, s + w * diff, e - diff * (1 - w)).to(self.scalar_type());
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
  m.impl("div.Tensor_mode", div_mode);
  m.impl("div_.Tensor_mode", div_mode_);
  m.impl("div.out_mode", div_mode_out);
  m.impl("floor_divide", floor_divide);
  m.impl("floor_divide_.Tensor", floor_divide_);
  m.impl("floor_divide.out", floor_divide_out);
  m.impl("rsub.Tensor", rsub);
  register_unary_forms<ATEN_OP(exp), ATEN_OP(exp_), ATEN_OP(exp_out), exp_into>(m);
  register_unary_forms<ATEN_OP(log), ATEN_OP(log_), ATEN_OP(log_out), log_into>(m);
  register_unary_forms<ATEN_OP(sqrt), ATEN_OP(sqrt_), ATEN_OP(sqrt_out), sqrt_into>(m);
  register_unary_forms<ATEN_OP(rsqrt), ATEN_OP(rsqrt_), ATEN_OP(rsqrt_out), rsqrt_into>(m);
  register_unary_forms<ATEN_OP(neg), ATEN_OP(neg_), ATEN_OP(neg_out), neg_into>(m);
  register_unary_forms<ATEN_OP(abs), ATEN_OP(abs_), ATEN_OP(abs_out), abs_into>(m);
  register_unary_forms<ATEN_OP(sign), ATEN_OP(sign_), ATEN_OP(sign_out), sign_into>(m);
  m.impl("sgn", sgn);
  m.impl("where.self_out", where_out);
  m.impl("isneginf", isneginf);
  m.impl("isposinf", isposinf);
  m.impl("isneginf.out", isneginf_out);
  m.impl("isposinf.out", isposinf_out);
  m.impl("add.out", add_out);
  m.impl("sub.out", sub_out);
  m.impl("mul.out", mul_out);
  m.impl("div.out", div_out);
  m.impl("reciprocal", reciprocal);
  m.impl("reciprocal_", reciprocal_);
  m.impl("pow.Tensor_Scalar", pow_scalar);
  m.impl("pow_.Scalar", pow_scalar_);
  m.impl("pow.Tensor_Scalar_out", pow_scalar_out);
  m.impl("pow.Tensor_Tensor", pow_tensor);
  m.impl("pow.Scalar", pow_base);
  m.impl("maximum", maximum);
  m.impl("minimum", minimum);
  m.impl("addcmul", addcmul);
  m.impl("addcmul_", addcmul_);
  m.impl("addcdiv", addcdiv);
  m.impl("addcdiv_", addcdiv_);
  m.impl("lerp.Scalar", lerp);
  m.impl("lerp_.Scalar", lerp_);
  m.impl("lerp.Tensor", lerp_tensor);
  m.impl("lerp_.Tensor", lerp_tensor_);
  m.impl("lerp.Tensor_out", lerp_tensor_out);
  m.impl("add.Tensor", add);
  m.impl("sub.Tensor", sub);
  m.impl("mul.Tensor", mul);
  m.impl("div.Tensor", div);
  m.impl("add_.Tensor", add_);
  m.impl("sub_.Tensor", sub_);
  m.impl("mul_.Tensor", mul_);
  m.impl("div_.Tensor", div_);
}

}  // namespace ocltune_torch
