// The elementwise generator: the operand rules, then the elementwise family's route (one C ABI call
// per op) or the plain kernel's (one launch of plain_elementwise.cl).
#include "ocltune_torch/csrc/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/result_layout.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

constexpr std::int64_t kMaxKernelElements = std::int64_t{1} << 30;

// ocl tensors of one device, or numbers; PyTorch's error otherwise.
void check_devices(const char* op, const at::Tensor& self, const at::Tensor& other) {
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
}

std::vector<std::int64_t> broadcast_sizes(const at::Tensor& self, const at::Tensor& other) {
  const at::DimVector sizes = at::infer_size_dimvector(self.sizes(), other.sizes());
  return {sizes.begin(), sizes.end()};
}

// ---- the elementwise family's route ----

// One call of the family: op(a) or op(a, b | scalar), a and b expanded to out's sizes, out dense.
struct FamilyCall {
  at::Tensor a;
  std::optional<at::Tensor> b;
  float scalar = 0.0f;
  bool reversed = false;
};

// op(a, scalar), or op(scalar, a) when reversed (unary ops ignore the scalar).
FamilyCall with_scalar(const at::Tensor& a, float scalar = 0.0f, bool reversed = false) {
  FamilyCall c;
  c.a = a;
  c.scalar = scalar;
  c.reversed = reversed;
  return c;
}

bool family_enqueue(const char* what, const char* op, const at::Tensor& out, const FamilyCall& c) {
  if (out.numel() == 0) return true;
  const at::Tensor a = c.a.expand(out.sizes());
  at::Tensor b;
  std::vector<const at::Tensor*> inputs = {&a};
  if (c.b) {
    b = c.b->expand(out.sizes());
    inputs.push_back(&b);
  }
  const std::optional<MergedLayout> layout = family_layout(out, inputs);
  if (!layout) return false;
  ocltune_elementwise_args e;
  ocltune_elementwise_args_init(&e, op, static_cast<int>(layout->sizes.size()), layout->sizes.data(), nullptr, nullptr);
  e.dtype = *ocltune_dtype_of(out.scalar_type());
  e.a = strided_operand(layout->sizes, layout->strides[1], cl_tensor_of(a));
  if (c.b) {
    e.b = strided_operand(layout->sizes, layout->strides[2], cl_tensor_of(b));
  } else {
    e.scalar = c.scalar;
  }
  e.reversed = c.reversed ? 1 : 0;
  e.out = cl_tensor_of(out);
  call_ocltune(what, [&] { device_runtime(out.device().index()).elementwise(e); });
  return true;
}

// Runs the call into out: directly where out is dense in the result type, else into a packed result
// that is then copied (cast) into out, as TensorIterator writes a view with gaps or another dtype.
bool family_into(const char* what, const char* op, const at::Tensor& out, at::ScalarType result, FamilyCall c) {
  c.a = unaliased(out, c.a);
  if (c.b) c.b = unaliased(out, *c.b);
  if (out.scalar_type() == result && out.is_non_overlapping_and_dense()) return family_enqueue(what, op, out, c);
  const at::Tensor packed = at::empty(out.sizes(), out.options().dtype(result));
  if (!family_enqueue(what, op, packed, c)) return false;
  out.copy_(packed);
  return true;
}

// A 0-dim operand the family reads as a number: a CPU scalar (Python's `x + 2`), or a 0-dim ocl
// tensor of another dtype than the result (read once, since the family cannot convert it).
bool family_number(const at::Tensor& t, at::ScalarType result) {
  return t.dim() == 0 && (t.is_cpu() || t.scalar_type() != result);
}

// t in the result type: itself, or its cast on the device (the plain casting copy). Exact where the
// CPU's is: both convert the inputs first, then compute.
at::Tensor in_result_type(const at::Tensor& t, at::ScalarType type) { return t.scalar_type() == type ? t : t.to(type); }

bool finite_in_fp32(double number) { return std::isfinite(number) && std::isfinite(static_cast<float>(number)); }

// op(self, other) on the family; false where the family cannot take it (two numbers, a non-finite
// number or alpha, alpha with a number first, a layout of more than 4 dims).
bool family_binary(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                   double alpha, at::ScalarType result) {
  const bool self_number = family_number(self, result), other_number = family_number(other, result);
  FamilyCall c;
  double number = 0.0;
  if (!self_number && other_number) {  // x + 2
    c.a = in_result_type(self, result);
    number = other.item<double>() * alpha;
  } else if (self_number && !other_number) {  // 2 - x: op(number, a)
    c.a = in_result_type(other, result);
    c.reversed = true;
    number = self.item<double>();
    // 2 - 3 * x (rsub.Scalar with alpha): a * alpha first, as the family's reversed op has no alpha.
    if (alpha != 1.0 && out.numel() != 0) {
      if (!finite_in_fp32(alpha)) return false;
      const at::Tensor scaled = at::empty(c.a.sizes(), c.a.options());
      if (!family_enqueue(op.name, "mul", scaled, with_scalar(c.a, static_cast<float>(alpha)))) {
        return false;
      }
      c.a = scaled;
    }
  } else if (!self_number && !other_number) {
    c.a = in_result_type(self, result);
    c.b = in_result_type(other, result);
    // other * alpha first: the C ABI runs one op per call.
    if (alpha != 1.0 && other.numel() != 0 && out.numel() != 0) {
      if (!finite_in_fp32(alpha)) return false;
      const at::Tensor scaled = at::empty(c.b->sizes(), c.b->options());
      if (!family_enqueue(op.name, "mul", scaled, with_scalar(*c.b, static_cast<float>(alpha)))) {
        return false;
      }
      c.b = scaled;
    }
  } else {
    return false;  // two numbers of other dtypes than the result
  }
  if (!c.b) {
    if (!finite_in_fp32(number)) return false;  // the C ABI takes finite scalars
    c.scalar = static_cast<float>(number);
  }
  return family_into(op.name, op.family, out, result, std::move(c));
}

// ---- the plain kernel's route ----

// A number of any dtype (a Python float is float64) is a kernel argument of the compute type.
bool plain_operand(const at::Tensor& t, int device) { return is_number(t) || plain_dtype(t.scalar_type(), device); }

void plain_binary(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                  at::ScalarType compute, const c10::Scalar& alpha) {
  if (is_number(other)) {
    run_plain_elementwise((std::string(op.plain) + "_scalar").c_str(), out, {unaliased(out, self).expand(out.sizes())},
                          {"A"}, compute, {alpha, other.item()});
  } else if (is_number(self)) {
    run_plain_elementwise((std::string(op.plain_reversed) + "_scalar").c_str(), out,
                          {unaliased(out, other).expand(out.sizes())}, {"A"}, compute, {alpha, self.item()});
  } else {
    run_plain_elementwise(op.plain, out,
                          {unaliased(out, self).expand(out.sizes()), unaliased(out, other).expand(out.sizes())},
                          {"A", "B"}, compute, {alpha});
  }
}

// The op as its float64 plain kernel computes it: a family op whose compute type is float64 takes the
// plain route with plain_float64 in place of plain.
ElementwiseOp plain_route(const ElementwiseOp& op, at::ScalarType compute) {
  if (compute != at::kDouble || !op.plain_float64) return op;
  ElementwiseOp route = op;
  route.plain = op.plain_float64;
  route.plain_reversed = nullptr;
  return route;
}

}  // namespace

bool is_number(const at::Tensor& t) { return t.defined() && t.is_cpu() && t.dim() == 0; }

at::Tensor unaliased(const at::Tensor& out, const at::Tensor& t) {
  if (!is_ocl(t) || !may_overlap(out, t)) return t;
  if (t.is_same(out) || (t.data_ptr() == out.data_ptr() && t.strides() == out.strides() && t.sizes() == out.sizes())) {
    return t;
  }
  return t.clone();
}

std::optional<MergedLayout> family_layout(const at::Tensor& out, const std::vector<const at::Tensor*>& inputs) {
  if (out.numel() > kMaxKernelElements) return std::nullopt;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(out.dim()));
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](std::int64_t a, std::int64_t b) { return out.stride(a) > out.stride(b); });
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<std::int64_t>> strides(inputs.size() + 1);
  for (std::int64_t p : perm) {
    sizes.push_back(out.size(p));
    strides[0].push_back(out.stride(p));
    for (std::size_t i = 0; i < inputs.size(); ++i) strides[i + 1].push_back(inputs[i]->stride(p));
  }
  MergedLayout layout = merge_dims(sizes, strides);
  if (layout.sizes.size() > OCLTUNE_MAX_DIMS) return std::nullopt;
  TORCH_INTERNAL_ASSERT(layout.strides[0] == packed_strides(layout.sizes), "ocltune_torch: the output is not dense");
  return layout;
}

at::ScalarType elementwise_result_type(const ElementwiseOp& op, const at::Tensor& self, const at::Tensor& other) {
  return op.bool_result ? at::kBool : at::result_type(self, other);
}

bool elementwise_into(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self) {
  check_ocl(self, op.name, "self");
  const at::ScalarType type = self.scalar_type();
  if (op.integral && at::isFloatingType(type)) return false;
  if (op.family && kernel_dtype(type)) return family_into(op.name, op.family, out, type, with_scalar(self));
  const int device = out.get_device();
  const ElementwiseOp route = plain_route(op, type);
  if (!route.plain || !plain_dtype(type, device) || !plain_dtype(out.scalar_type(), device)) return false;
  if (out.numel() > 0) run_plain_elementwise(route.plain, out, {unaliased(out, self)}, {"A"}, type, {0, 0});
  return true;
}

bool elementwise_into(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                      const c10::Scalar& alpha) {
  check_devices(op.name, self, other);
  const at::ScalarType compute = at::result_type(self, other);
  if (op.check) op.check(self.scalar_type(), other.scalar_type(), compute, alpha);
  if (op.integral && at::isFloatingType(compute)) return false;
  if (op.family && !op.bool_result && kernel_dtype(compute)) {
    return family_binary(op, out, self, other, alpha.to<double>(), compute);
  }
  const int device = out.get_device();
  const ElementwiseOp route = plain_route(op, compute);
  if (!route.plain || (is_number(self) && !route.plain_reversed) || !plain_operand(self, device) ||
      !plain_operand(other, device) || !plain_dtype(compute, device) || !plain_dtype(out.scalar_type(), device)) {
    return false;
  }
  if (out.numel() > 0) plain_binary(route, out, self, other, compute, alpha);
  return true;
}

bool elementwise_scalar_into(const ElementwiseOp& op, const at::Tensor& out, const at::Tensor& self, double number,
                             bool reversed) {
  check_ocl(self, op.name, "self");
  const at::ScalarType type = self.scalar_type();
  if (!op.family || !kernel_dtype(type) || !finite_in_fp32(number)) return false;
  return family_into(op.name, op.family, out, type, with_scalar(self, static_cast<float>(number), reversed));
}

std::optional<at::Tensor> elementwise(const ElementwiseOp& op, const at::Tensor& self) {
  at::Tensor out = new_elementwise_result(self.sizes(), self.options(), {&self});
  if (!elementwise_into(op, out, self)) return std::nullopt;
  return out;
}

std::optional<at::Tensor> elementwise(const ElementwiseOp& op, const at::Tensor& self, const at::Tensor& other,
                                      const c10::Scalar& alpha) {
  check_devices(op.name, self, other);
  const at::Tensor& like = is_ocl(self) ? self : other;
  at::Tensor out = new_elementwise_result(
      broadcast_sizes(self, other), like.options().dtype(elementwise_result_type(op, self, other)), {&self, &other});
  if (!elementwise_into(op, out, self, other, alpha)) return std::nullopt;
  return out;
}

std::optional<at::Tensor> elementwise_scalar(const ElementwiseOp& op, const at::Tensor& self, double number,
                                             bool reversed) {
  at::Tensor out = new_elementwise_result(self.sizes(), self.options(), {&self});
  if (!elementwise_scalar_into(op, out, self, number, reversed)) return std::nullopt;
  return out;
}

}  // namespace ocltune_torch
