// add, sub, mul, div (broadcasting, Scalar alpha), relu, sigmoid, tanh, gelu and silu through the
// C ABI's elementwise op; in-place variants write into self when it is dense.
//
// Results keep the memory layout of a dense self (as PyTorch's TensorIterator does), else they are
// contiguous. The kernels compute in fp32 and store fp32, fp16 or bf16; other dtypes, and operands
// whose dtypes differ from the result's (the C ABI has no casts), run through the CPU fallback.
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device.h"
#include "ocltune_torch/csrc/errors.h"
#include "ocltune_torch/csrc/fallback.h"
#include "ocltune_torch/csrc/tensor_util.h"

namespace ocltune_torch {
namespace {

constexpr std::int64_t kMaxKernelElements = std::int64_t{1} << 30;

std::vector<std::int64_t> to_vector(at::IntArrayRef a) { return {a.begin(), a.end()}; }

// Dims in the memory order of a dense output, its inputs' strides against them, merged. nullopt when
// more than 4 dims remain or there are more elements than the kernels index.
std::optional<MergedLayout> kernel_layout(const at::Tensor& out, const std::vector<const at::Tensor*>& inputs) {
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

// out = op(a) or op(a, b | scalar), every tensor with out's sizes (inputs expanded), out dense.
void enqueue(const char* what, const char* op, const MergedLayout& layout, const at::Tensor& out, const at::Tensor& a,
             const at::Tensor* b, float scalar, bool reversed) {
  ocltune_elementwise_args e;
  ocltune_elementwise_args_init(&e, op, static_cast<int>(layout.sizes.size()), layout.sizes.data(), nullptr, nullptr);
  e.dtype = *ocltune_dtype_of(out.scalar_type());
  e.a = strided_operand(layout.sizes, layout.strides[1], cl_tensor_of(a));
  if (b) {
    e.b = strided_operand(layout.sizes, layout.strides[2], cl_tensor_of(*b));
  } else {
    e.scalar = scalar;
  }
  e.reversed = reversed ? 1 : 0;
  e.out = cl_tensor_of(out);
  call_ocltune(what, [&] { device_runtime(out.device().index()).elementwise(e); });
}

// A new result for inputs of these sizes: the layout of a dense `like` of the same sizes, else packed.
at::Tensor new_result(const at::Tensor& like, at::IntArrayRef sizes, at::ScalarType dtype) {
  if (like.sizes() == sizes && like.is_non_overlapping_and_dense()) {
    return at::empty_strided(sizes, like.strides(), like.options().dtype(dtype));
  }
  return at::empty(sizes, like.options().dtype(dtype));
}

// ---- binary ops ----

// What a binary op computes: op(a, b) for two tensors, op(a, scalar) or, reversed, op(scalar, a).
struct Binary {
  at::Tensor a;
  std::optional<at::Tensor> b;
  float scalar = 0.0f;
  bool reversed = false;
  at::ScalarType dtype = at::kFloat;
  std::vector<std::int64_t> sizes;
};

// A 0-dim operand that is a number to the kernel: a CPU scalar (Python's `x + 2`), or a 0-dim ocl
// tensor of another dtype than the result (read once, since the kernels cannot convert it).
bool is_number(const at::Tensor& t, at::ScalarType result) {
  return t.dim() == 0 && (t.is_cpu() || t.scalar_type() != result);
}

void check_devices(const char* op, const at::Tensor& self, const at::Tensor& other) {
  const at::Tensor& first = is_ocl(self) ? self : other;
  for (const at::Tensor* t : {&self, &other}) {
    if (is_ocl(*t)) {
      check_same_device(first, *t, op, t == &self ? "self" : "other");
    } else {
      TORCH_CHECK(t->is_cpu() && t->dim() == 0,
                  "Expected all tensors to be on the same device, but found at least two devices, ", first.device(),
                  " and ", t->device(), "! (ocltune_torch ", op, ": only a 0-dim CPU tensor may be mixed with ocl)");
    }
  }
}

// nullopt: the op runs through the fallback. `alpha` scales other (add, sub), 1 for the others.
std::optional<Binary> plan_binary(const char* op, const at::Tensor& self, const at::Tensor& other, double alpha) {
  check_devices(op, self, other);
  Binary p;
  p.dtype = at::result_type(self, other);
  if (!kernel_dtype(p.dtype)) return std::nullopt;
  p.sizes = to_vector(at::infer_size(self.sizes(), other.sizes()));
  const bool self_number = is_number(self, p.dtype);
  const bool other_number = is_number(other, p.dtype);
  double number = 0.0;
  if (!self_number && other_number) {  // x + 2
    if (self.scalar_type() != p.dtype) return std::nullopt;
    p.a = self;
    number = other.item<double>() * alpha;
  } else if (self_number && !other_number) {  // 2 - x: op(scalar, a)
    if (other.scalar_type() != p.dtype || alpha != 1.0) return std::nullopt;
    p.a = other;
    p.reversed = true;
    number = self.item<double>();
  } else if (!self_number && !other_number) {
    if (self.scalar_type() != p.dtype || other.scalar_type() != p.dtype) return std::nullopt;
    p.a = self;
    p.b = other;
    if (alpha != 1.0) {  // other * alpha first: the C ABI runs one op per call
      if (!std::isfinite(alpha) || other.numel() == 0) return std::nullopt;
      at::Tensor scaled = at::empty(other.sizes(), other.options());
      const std::optional<MergedLayout> layout = kernel_layout(scaled, {&other});
      if (!layout) return std::nullopt;
      enqueue(op, "mul", *layout, scaled, other, nullptr, static_cast<float>(alpha), false);
      p.b = scaled;
    }
  } else {
    return std::nullopt;  // two numbers of other dtypes than the result
  }
  if (!p.b) {
    p.scalar = static_cast<float>(number);
    if (!std::isfinite(number) || !std::isfinite(p.scalar)) return std::nullopt;  // the C ABI takes finite scalars
  }
  return p;
}

// Runs the plan into out (dense, with p.sizes); false when the kernel cannot take the layout.
bool run_binary(const char* op, const char* kernel_op, const Binary& p, const at::Tensor& out) {
  if (out.numel() == 0) return true;
  const at::Tensor a = p.a.expand(p.sizes);
  at::Tensor b;
  std::vector<const at::Tensor*> inputs = {&a};
  if (p.b) {
    b = p.b->expand(p.sizes);
    inputs.push_back(&b);
  }
  const std::optional<MergedLayout> layout = kernel_layout(out, inputs);
  if (!layout) return false;
  enqueue(op, kernel_op, *layout, out, a, p.b ? &b : nullptr, p.scalar, p.reversed);
  return true;
}

template <class Fallback>
at::Tensor binary(const char* op, const char* kernel_op, const at::Tensor& self, const at::Tensor& other, double alpha,
                  Fallback fallback_op) {
  const std::optional<Binary> p = plan_binary(op, self, other, alpha);
  if (!p) return fallback_op();
  at::Tensor out = new_result(p->a, p->sizes, p->dtype);
  if (!run_binary(op, kernel_op, *p, out)) return fallback_op();
  return out;
}

template <class Fallback>
at::Tensor& binary_(const char* op, const char* kernel_op, at::Tensor& self, const at::Tensor& other, double alpha,
                    Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (is_ocl(other) && other.numel() > 0 && self.numel() > 0) at::assert_no_partial_overlap(self, other);
  const std::optional<Binary> p = plan_binary(op, self, other, alpha);
  if (!p || p->dtype != self.scalar_type() || p->reversed) return fallback_op();
  TORCH_CHECK(p->sizes == to_vector(self.sizes()), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", at::IntArrayRef(p->sizes));
  if (self.is_non_overlapping_and_dense() && run_binary(op, kernel_op, *p, self)) return self;
  at::Tensor out = at::empty(p->sizes, self.options());
  if (!run_binary(op, kernel_op, *p, out)) return fallback_op();
  return self.copy_(out);
}

at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return binary("add", "add", self, other, alpha.to<double>(),
                [&] { return fallback<ATEN_OP(add_Tensor)>::call(self, other, alpha); });
}
at::Tensor sub(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return binary("sub", "sub", self, other, alpha.to<double>(),
                [&] { return fallback<ATEN_OP(sub_Tensor)>::call(self, other, alpha); });
}
at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  return binary("mul", "mul", self, other, 1.0, [&] { return fallback<ATEN_OP(mul_Tensor)>::call(self, other); });
}
at::Tensor div(const at::Tensor& self, const at::Tensor& other) {
  return binary("div", "div", self, other, 1.0, [&] { return fallback<ATEN_OP(div_Tensor)>::call(self, other); });
}

at::Tensor& add_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return binary_("add_", "add", self, other, alpha.to<double>(),
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(add__Tensor)>::call(self, other, alpha); });
}
at::Tensor& sub_(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  return binary_("sub_", "sub", self, other, alpha.to<double>(),
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(sub__Tensor)>::call(self, other, alpha); });
}
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) {
  return binary_("mul_", "mul", self, other, 1.0,
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(mul__Tensor)>::call(self, other); });
}
at::Tensor& div_(at::Tensor& self, const at::Tensor& other) {
  return binary_("div_", "div", self, other, 1.0,
                 [&]() -> at::Tensor& { return fallback<ATEN_OP(div__Tensor)>::call(self, other); });
}

// ---- unary ops ----

template <class Fallback>
at::Tensor unary(const char* op, const char* kernel_op, const at::Tensor& self, Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (!kernel_dtype(self.scalar_type())) return fallback_op();
  at::Tensor out = new_result(self, self.sizes(), self.scalar_type());
  if (out.numel() == 0) return out;
  const std::optional<MergedLayout> layout = kernel_layout(out, {&self});
  if (!layout) return fallback_op();
  enqueue(op, kernel_op, *layout, out, self, nullptr, 0.0f, false);
  return out;
}

template <class Fallback>
at::Tensor& unary_(const char* op, const char* kernel_op, at::Tensor& self, Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (!kernel_dtype(self.scalar_type())) return fallback_op();
  if (self.numel() == 0) return self;
  if (self.is_non_overlapping_and_dense()) {
    if (const std::optional<MergedLayout> layout = kernel_layout(self, {&self})) {
      enqueue(op, kernel_op, *layout, self, self, nullptr, 0.0f, false);
      return self;
    }
  }
  return fallback_op();  // a view with gaps (or more than 4 merged dims): not written in place yet
}

const char* gelu_op(std::string_view approximate) {
  if (approximate == "none") return "gelu";
  TORCH_CHECK(approximate == "tanh", "approximate argument must be either none or tanh.");
  return "gelu_tanh";
}

at::Tensor relu(const at::Tensor& self) {
  return unary("relu", "relu", self, [&] { return fallback<ATEN_OP(relu)>::call(self); });
}
at::Tensor sigmoid(const at::Tensor& self) {
  return unary("sigmoid", "sigmoid", self, [&] { return fallback<ATEN_OP(sigmoid)>::call(self); });
}
at::Tensor tanh(const at::Tensor& self) {
  return unary("tanh", "tanh", self, [&] { return fallback<ATEN_OP(tanh)>::call(self); });
}
at::Tensor silu(const at::Tensor& self) {
  return unary("silu", "silu", self, [&] { return fallback<ATEN_OP(silu)>::call(self); });
}
at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  return unary("gelu", gelu_op(approximate), self, [&] { return fallback<ATEN_OP(gelu)>::call(self, approximate); });
}

at::Tensor& relu_(at::Tensor& self) {
  return unary_("relu_", "relu", self, [&]() -> at::Tensor& { return fallback<ATEN_OP(relu_)>::call(self); });
}
at::Tensor& sigmoid_(at::Tensor& self) {
  return unary_("sigmoid_", "sigmoid", self, [&]() -> at::Tensor& { return fallback<ATEN_OP(sigmoid_)>::call(self); });
}
at::Tensor& tanh_(at::Tensor& self) {
  return unary_("tanh_", "tanh", self, [&]() -> at::Tensor& { return fallback<ATEN_OP(tanh_)>::call(self); });
}
at::Tensor& silu_(at::Tensor& self) {
  return unary_("silu_", "silu", self, [&]() -> at::Tensor& { return fallback<ATEN_OP(silu_)>::call(self); });
}
at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  return unary_("gelu_", gelu_op(approximate), self,
                [&]() -> at::Tensor& { return fallback<ATEN_OP(gelu_)>::call(self, approximate); });
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("add.Tensor", add);
  m.impl("sub.Tensor", sub);
  m.impl("mul.Tensor", mul);
  m.impl("div.Tensor", div);
  m.impl("add_.Tensor", add_);
  m.impl("sub_.Tensor", sub_);
  m.impl("mul_.Tensor", mul_);
  m.impl("div_.Tensor", div_);
  m.impl("relu", relu);
  m.impl("sigmoid", sigmoid);
  m.impl("tanh", tanh);
  m.impl("silu", silu);
  m.impl("gelu", gelu);
  m.impl("relu_", relu_);
  m.impl("sigmoid_", sigmoid_);
  m.impl("tanh_", tanh_);
  m.impl("silu_", silu_);
  m.impl("gelu_", gelu_);
}

}  // namespace ocltune_torch
