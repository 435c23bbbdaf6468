// The shared machinery of the backend's elementwise ops on ocltune's elementwise family.
#include "ocltune_torch/csrc/ops/elementwise_kernel.h"

#include <algorithm>
#include <cmath>

#include <ATen/ExpandUtils.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"

namespace ocltune_torch {
namespace {

constexpr std::int64_t kMaxKernelElements = std::int64_t{1} << 30;

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

}  // namespace

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

// nullopt: the op runs through the fallback. `alpha` scales other (add, sub), 1 for the others.
// `t` in the result type: itself, or its cast on the device (the plain casting copy), as
// TensorIterator computes a binary op of mixed types in their common type (float + half in float,
// half * bool in half). Exact where the CPU's is: both convert the inputs first, then compute.
at::Tensor in_result_type(const at::Tensor& t, at::ScalarType type) { return t.scalar_type() == type ? t : t.to(type); }

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
    p.a = in_result_type(self, p.dtype);
    number = other.item<double>() * alpha;
  } else if (self_number && !other_number) {  // 2 - x: op(scalar, a)
    if (alpha != 1.0) return std::nullopt;
    p.a = in_result_type(other, p.dtype);
    p.reversed = true;
    number = self.item<double>();
  } else if (!self_number && !other_number) {
    p.a = in_result_type(self, p.dtype);
    p.b = in_result_type(other, p.dtype);
    // other * alpha first: the C ABI runs one op per call. An empty other makes an empty result,
    // which run_binary writes without a kernel.
    if (alpha != 1.0 && other.numel() != 0) {
      if (!std::isfinite(alpha)) return std::nullopt;
      at::Tensor scaled = at::empty(p.b->sizes(), p.b->options());
      const std::optional<MergedLayout> layout = kernel_layout(scaled, {&*p.b});
      if (!layout) return std::nullopt;
      enqueue(op, "mul", *layout, scaled, *p.b, nullptr, static_cast<float>(alpha), false);
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

std::optional<Binary> plan_scalar(const char* op, const at::Tensor& self, double number, bool reversed) {
  check_ocl(self, op, "self");
  if (!kernel_dtype(self.scalar_type())) return std::nullopt;
  Binary p;
  p.a = self;
  p.dtype = self.scalar_type();
  p.sizes = to_vector(self.sizes());
  p.scalar = static_cast<float>(number);
  p.reversed = reversed;
  if (!std::isfinite(number) || !std::isfinite(p.scalar)) return std::nullopt;  // the C ABI takes finite scalars
  return p;
}

bool unary_into(const char* op, const char* kernel_op, const at::Tensor& out, const at::Tensor& self) {
  if (!kernel_dtype(self.scalar_type())) return false;
  const std::optional<MergedLayout> layout = kernel_layout(out, {&self});
  if (!layout) return false;
  enqueue(op, kernel_op, *layout, out, self, nullptr, 0.0f, false);
  return true;
}

}  // namespace ocltune_torch
