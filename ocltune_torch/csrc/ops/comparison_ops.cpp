// Element-wise ops on plain kernels: comparisons, logical and bitwise ops, where, masked_fill_, clamp
// (number and tensor bounds), all/any, and integer add/sub/mul and division with a rounding mode of
// every plain dtype (for elementwise_ops.cpp). Casts are copies (device/copy.cpp).
//
// Operands follow PyTorch's type promotion (at::result_type): both are converted to the result type
// before the op, so int64 == float compares in float. A 0-dim CPU tensor (a Python number) is a
// kernel argument, never a transfer. float64 and complex operands take the CPU fallback.
#include "ocltune_torch/csrc/ops/comparison_ops.h"

#include <string>
#include <tuple>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_elementwise.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {

namespace {

std::vector<std::int64_t> to_vector(at::IntArrayRef a) { return {a.begin(), a.end()}; }

// ---- comparisons: bool results, computed in the promoted type ----

#define OCL_COMPARISON(NAME, MIRROR)                                                                              \
  at::Tensor NAME##_tensor(const at::Tensor& self, const at::Tensor& other) {                                     \
    const at::ScalarType compute = at::result_type(self, other);                                                  \
    if (!plain_operands(#NAME, self, other, compute)) return fallback<ATEN_OP(NAME##_Tensor)>::call(self, other); \
    return binary_new(#NAME, #MIRROR, self, other, compute, at::kBool);                                           \
  }                                                                                                               \
  at::Tensor NAME##_scalar(const at::Tensor& self, const at::Scalar& other) {                                     \
    check_ocl(self, #NAME, "self");                                                                               \
    const at::ScalarType compute = at::result_type(self, other);                                                  \
    if (!plain_dtype(self.scalar_type()) || !plain_dtype(compute)) {                                              \
      return fallback<ATEN_OP(NAME##_Scalar)>::call(self, other);                                                 \
    }                                                                                                             \
    at::Tensor out = at::empty(self.sizes(), self.options().dtype(at::kBool));                                    \
    run_plain_elementwise(#NAME "_scalar", out, {self}, {"A"}, compute, {0, other});                              \
    return out;                                                                                                   \
  }

OCL_COMPARISON(eq, eq)
OCL_COMPARISON(ne, ne)
OCL_COMPARISON(lt, gt)
OCL_COMPARISON(le, ge)
OCL_COMPARISON(gt, lt)
OCL_COMPARISON(ge, le)

// ---- logical ops (out= forms: the functional and in-place ones are composites over them) ----

// The in-place forms pass self as out: like TensorIterator, an out that is also an operand is never
// resized (logical_and_ on a [5, 1] self and a [5] other is refused, not turned into a [5, 5] self).
void resize_logical_output(const char* op, at::Tensor& out, const at::Tensor& self, const at::Tensor& other) {
  const std::vector<std::int64_t> sizes = at::infer_size(self.sizes(), other.sizes());
  if (out.is_same(self) || out.is_same(other)) {
    TORCH_CHECK(at::IntArrayRef(sizes) == out.sizes(), op, ": output with shape ", out.sizes(),
                " doesn't match the broadcast shape ", at::IntArrayRef(sizes));
  } else {
    at::native::resize_output(out, sizes);
  }
}

at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& out) {
  check_ocl(self, "logical_not", "self");
  check_ocl(out, "logical_not", "out");
  if (!plain_dtype(self.scalar_type()) || !plain_dtype(out.scalar_type())) {
    return fallback<ATEN_OP(logical_not_out)>::call(self, out);
  }
  at::native::resize_output(out, self.sizes());
  run_plain_elementwise("logical_not", out, {unaliased(out, self)}, {"A"}, self.scalar_type(), {0, 0});
  return out;
}

#define OCL_LOGICAL(NAME)                                                                    \
  at::Tensor& NAME##_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) { \
    check_ocl(out, #NAME, "out");                                                            \
    const at::ScalarType compute = at::result_type(self, other);                             \
    if (!plain_operands(#NAME, self, other, compute) || !plain_dtype(out.scalar_type())) {   \
      return fallback<ATEN_OP(NAME##_out)>::call(self, other, out);                          \
    }                                                                                        \
    resize_logical_output(#NAME, out, self, other);                                          \
    binary_into(#NAME, #NAME, out, self, other, compute, 0);                                 \
    return out;                                                                              \
  }

OCL_LOGICAL(logical_and)
OCL_LOGICAL(logical_or)
OCL_LOGICAL(logical_xor)

// ---- bitwise ops: integer and bool tensors ----

#define OCL_BITWISE(NAME)                                                                          \
  at::Tensor NAME##_tensor(const at::Tensor& self, const at::Tensor& other) {                      \
    const at::ScalarType compute = at::result_type(self, other);                                   \
    if (!plain_operands(#NAME, self, other, compute) || at::isFloatingType(compute)) {             \
      return fallback<ATEN_OP(NAME##_Tensor)>::call(self, other); /* PyTorch's error for floats */ \
    }                                                                                              \
    return binary_new(#NAME, #NAME, self, other, compute, compute);                                \
  }

OCL_BITWISE(bitwise_and)
OCL_BITWISE(bitwise_or)
OCL_BITWISE(bitwise_xor)

at::Tensor bitwise_not(const at::Tensor& self) {
  check_ocl(self, "bitwise_not", "self");
  if (!plain_dtype(self.scalar_type()) || at::isFloatingType(self.scalar_type())) {
    return fallback<ATEN_OP(bitwise_not)>::call(self);
  }
  at::Tensor out = at::empty(self.sizes(), self.options());
  run_plain_elementwise("bitwise_not", out, {self}, {"A"}, self.scalar_type(), {0, 0});
  return out;
}

// ---- where, masked_fill_ ----

// A number (0-dim CPU tensor) as a 0-dim ocl tensor: a fill, enqueued like any op.
at::Tensor on_device(const at::Tensor& t, const at::Tensor& like) {
  if (!is_number(t)) return t;
  return at::full({}, t.item(), like.options().dtype(t.scalar_type()));
}

at::Tensor where_self(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(condition.scalar_type() == at::kBool || condition.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ", condition.scalar_type());
  const at::ScalarType result = at::result_type(self, other);
  const at::Tensor& like = is_ocl(condition) ? condition : is_ocl(self) ? self : other;
  if (!plain_dtype(self.scalar_type()) || !plain_dtype(other.scalar_type()) || !plain_dtype(result)) {
    return fallback<ATEN_OP(where_self)>::call(condition, self, other);
  }
  const at::Tensor c = on_device(condition, like), a = on_device(self, like), b = on_device(other, like);
  check_same_device(like, c, "where", "condition");
  check_same_device(like, a, "where", "self");
  check_same_device(like, b, "where", "other");
  const std::vector<std::int64_t> sizes = to_vector(at::infer_size(at::infer_size(c.sizes(), a.sizes()), b.sizes()));
  at::Tensor out = at::empty(sizes, like.options().dtype(result));
  run_plain_elementwise("where", out, {c.expand(sizes), a.expand(sizes), b.expand(sizes)}, {"C", "A", "B"}, result, {});
  return out;
}

void check_mask(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  check_same_device(self, mask, "masked_fill_", "mask");
  TORCH_CHECK(at::is_expandable_to(mask.sizes(), self.sizes()), "The size of the mask ", mask.sizes(),
              " must match the size of self ", self.sizes(), " (masked_fill_ is in place)");
}

at::Tensor& masked_fill_scalar(at::Tensor& self, const at::Tensor& mask, const at::Scalar& value) {
  check_ocl(self, "masked_fill_", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(masked_fill__Scalar)>::call(self, mask, value);
  check_mask(self, mask);
  at::assert_no_internal_overlap(self);
  run_plain_elementwise("masked_fill", self, {self, unaliased(self, mask).expand(self.sizes())}, {"A", "B"},
                        self.scalar_type(), {value});
  return self;
}

at::Tensor& masked_fill_tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (value.is_cpu()) return masked_fill_scalar(self, mask, value.item());
  check_ocl(self, "masked_fill_", "self");
  if (!plain_dtype(self.scalar_type()) || !plain_dtype(value.scalar_type())) {
    return fallback<ATEN_OP(masked_fill__Tensor)>::call(self, mask, value);
  }
  check_mask(self, mask);
  check_same_device(self, value, "masked_fill_", "value");
  at::assert_no_internal_overlap(self);
  run_plain_elementwise("where", self, {unaliased(self, mask).expand(self.sizes()), value.expand(self.sizes()), self},
                        {"C", "A", "B"}, self.scalar_type(), {});
  return self;
}

// ---- clamp (every plain dtype: the families have no clamp) ----

at::ScalarType clamp_type(const at::Tensor& self, const std::optional<at::Scalar>& min,
                          const std::optional<at::Scalar>& max) {
  at::ScalarType t = self.scalar_type();
  if (min) t = at::promote_types(t, at::result_type(self, *min));
  if (max) t = at::promote_types(t, at::result_type(self, *max));
  return t;
}

void clamp_into(const at::Tensor& out, const at::Tensor& self, const std::optional<at::Scalar>& min,
                const std::optional<at::Scalar>& max, at::ScalarType compute) {
  const char* kernel = min && max ? "clamp_both" : min ? "clamp_min" : "clamp_max";
  run_plain_elementwise(kernel, out, {self}, {"A"}, compute, {min.value_or(0), max.value_or(0)});
}

at::Tensor clamp_new(const at::Tensor& self, const std::optional<at::Scalar>& min,
                     const std::optional<at::Scalar>& max) {
  check_ocl(self, "clamp", "self");
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const at::ScalarType t = clamp_type(self, min, max);
  if (!plain_dtype(self.scalar_type()) || !plain_dtype(t)) return fallback<ATEN_OP(clamp)>::call(self, min, max);
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(t));
  clamp_into(out, self, min, max, t);
  return out;
}

at::Tensor& clamp_inplace(at::Tensor& self, const std::optional<at::Scalar>& min,
                          const std::optional<at::Scalar>& max) {
  check_ocl(self, "clamp_", "self");
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  const at::ScalarType t = clamp_type(self, min, max);
  if (!plain_dtype(self.scalar_type()) || !plain_dtype(t)) return fallback<ATEN_OP(clamp_)>::call(self, min, max);
  TORCH_CHECK(at::canCast(t, self.scalar_type()), "result type ", t, " can't be cast to the desired output type ",
              self.scalar_type());
  at::assert_no_internal_overlap(self);
  clamp_into(self, self, min, max, self.scalar_type());
  return self;
}

at::Tensor clamp_min(const at::Tensor& self, const at::Scalar& min) { return clamp_new(self, min, std::nullopt); }
at::Tensor clamp_max(const at::Tensor& self, const at::Scalar& max) { return clamp_new(self, std::nullopt, max); }
at::Tensor& clamp_min_(at::Tensor& self, const at::Scalar& min) { return clamp_inplace(self, min, std::nullopt); }
at::Tensor& clamp_max_(at::Tensor& self, const at::Scalar& max) { return clamp_inplace(self, std::nullopt, max); }

// ---- clamp with tensor bounds: clamp.Tensor, clamp_min.Tensor (maximum), clamp_max.Tensor (minimum) ----

// What one computes: the kernel, self and the bounds given (a 0-dim CPU bound moved to the device),
// their type slots, the result type (promoted over all of them, as clamp's TensorIterator does) and
// the broadcast sizes.
struct ClampPlan {
  const char* kernel;
  std::vector<at::Tensor> inputs;
  std::vector<const char*> slots;
  at::ScalarType type;
  std::vector<std::int64_t> sizes;
};

// nullopt where the fallback computes it: a dtype that is not a plain one, or bool (the CPU's error).
std::optional<ClampPlan> plan_clamp(const char* op, const at::Tensor& self, const std::optional<at::Tensor>& min,
                                    const std::optional<at::Tensor>& max) {
  check_ocl(self, op, "self");
  const bool has_min = min && min->defined(), has_max = max && max->defined();
  TORCH_CHECK(has_min || has_max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  ClampPlan p;
  p.kernel = has_min && has_max ? "clamp_tensor" : has_min ? "maximum" : "minimum";
  p.inputs = {self};
  for (const auto& [given, bound, name] : {std::tuple(has_min, &min, "min"), std::tuple(has_max, &max, "max")}) {
    if (!given) continue;
    const at::Tensor& t = **bound;
    if (is_ocl(t)) {
      check_same_device(self, t, op, name);
    } else {
      TORCH_CHECK(is_number(t), "Expected all tensors to be on the same device, but found at least two devices, ",
                  self.device(), " and ", t.device(), "! (ocltune_torch ", op,
                  ": only a 0-dim CPU tensor may be mixed with ocl)");
    }
    p.inputs.push_back(t);
  }
  p.type = at::native::result_type(at::ITensorListRef(at::TensorList(p.inputs)));
  for (const at::Tensor& t : p.inputs) {
    if (!plain_dtype(t.scalar_type())) return std::nullopt;
  }
  if (!plain_dtype(p.type) || p.type == at::kBool) return std::nullopt;
  for (at::Tensor& t : p.inputs) t = on_device(t, self);
  p.sizes = to_vector(self.sizes());
  for (const at::Tensor& t : p.inputs) p.sizes = to_vector(at::infer_size(p.sizes, t.sizes()));
  p.slots = {"A", "B", "C"};
  p.slots.resize(p.inputs.size());
  return p;
}

void run_clamp(const ClampPlan& p, const at::Tensor& out) {
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : p.inputs) inputs.push_back(unaliased(out, t).expand(p.sizes));
  // maximum and minimum are BINARY kernels, which take an unused scalar s0; clamp_tensor takes none.
  run_plain_elementwise(p.kernel, out, inputs, p.slots, p.type,
                        inputs.size() == 2 ? std::vector<c10::Scalar>{0} : std::vector<c10::Scalar>{});
}

template <class Fallback>
at::Tensor clamp_tensor_new(const char* op, const at::Tensor& self, const std::optional<at::Tensor>& min,
                            const std::optional<at::Tensor>& max, Fallback fallback_op) {
  const std::optional<ClampPlan> p = plan_clamp(op, self, min, max);
  if (!p) return fallback_op();
  at::Tensor out = at::empty(p->sizes, self.options().dtype(p->type));
  run_clamp(*p, out);
  return out;
}

// In place (into self) or into out: the result type must cast to it, as TensorIterator's safe casting asks.
template <class Fallback>
at::Tensor& clamp_tensor_into(const char* op, at::Tensor& out, const at::Tensor& self,
                              const std::optional<at::Tensor>& min, const std::optional<at::Tensor>& max,
                              Fallback fallback_op) {
  const std::optional<ClampPlan> p = plan_clamp(op, self, min, max);
  if (!p || !plain_dtype(out.scalar_type())) return fallback_op();
  check_ocl(out, op, "out");
  TORCH_CHECK(at::canCast(p->type, out.scalar_type()), "result type ", p->type,
              " can't be cast to the desired output type ", out.scalar_type());
  if (out.is_same(self)) {
    TORCH_CHECK(at::IntArrayRef(p->sizes) == self.sizes(), "output with shape ", self.sizes(),
                " doesn't match the broadcast shape ", at::IntArrayRef(p->sizes));
  } else {
    at::native::resize_output(out, p->sizes);
  }
  at::assert_no_internal_overlap(out);
  run_clamp(*p, out);
  return out;
}

at::Tensor clamp_tensor(const at::Tensor& self, const std::optional<at::Tensor>& min,
                        const std::optional<at::Tensor>& max) {
  return clamp_tensor_new("clamp", self, min, max,
                          [&] { return fallback<ATEN_OP(clamp_Tensor)>::call(self, min, max); });
}
at::Tensor& clamp_tensor_(at::Tensor& self, const std::optional<at::Tensor>& min,
                          const std::optional<at::Tensor>& max) {
  return clamp_tensor_into("clamp_", self, self, min, max,
                           [&]() -> at::Tensor& { return fallback<ATEN_OP(clamp__Tensor)>::call(self, min, max); });
}
at::Tensor& clamp_tensor_out(const at::Tensor& self, const std::optional<at::Tensor>& min,
                             const std::optional<at::Tensor>& max, at::Tensor& out) {
  return clamp_tensor_into("clamp", out, self, min, max, [&]() -> at::Tensor& {
    return fallback<ATEN_OP(clamp_Tensor_out)>::call(self, min, max, out);
  });
}
at::Tensor clamp_min_tensor(const at::Tensor& self, const at::Tensor& min) {
  return clamp_tensor_new("clamp_min", self, min, std::nullopt,
                          [&] { return fallback<ATEN_OP(clamp_min_Tensor)>::call(self, min); });
}
at::Tensor& clamp_min_tensor_(at::Tensor& self, const at::Tensor& min) {
  return clamp_tensor_into("clamp_min_", self, self, min, std::nullopt,
                           [&]() -> at::Tensor& { return fallback<ATEN_OP(clamp_min__Tensor)>::call(self, min); });
}
at::Tensor& clamp_min_tensor_out(const at::Tensor& self, const at::Tensor& min, at::Tensor& out) {
  return clamp_tensor_into("clamp_min", out, self, min, std::nullopt, [&]() -> at::Tensor& {
    return fallback<ATEN_OP(clamp_min_Tensor_out)>::call(self, min, out);
  });
}
at::Tensor clamp_max_tensor(const at::Tensor& self, const at::Tensor& max) {
  return clamp_tensor_new("clamp_max", self, std::nullopt, max,
                          [&] { return fallback<ATEN_OP(clamp_max_Tensor)>::call(self, max); });
}
at::Tensor& clamp_max_tensor_(at::Tensor& self, const at::Tensor& max) {
  return clamp_tensor_into("clamp_max_", self, self, std::nullopt, max,
                           [&]() -> at::Tensor& { return fallback<ATEN_OP(clamp_max__Tensor)>::call(self, max); });
}
at::Tensor& clamp_max_tensor_out(const at::Tensor& self, const at::Tensor& max, at::Tensor& out) {
  return clamp_tensor_into("clamp_max", out, self, std::nullopt, max, [&]() -> at::Tensor& {
    return fallback<ATEN_OP(clamp_max_Tensor_out)>::call(self, max, out);
  });
}

// ---- division with a rounding mode ----

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

// ---- all, any ----

// The result has keepdim sizes and is filled with the answer for no elements; the kernel sees it
// expanded to self's sizes (stride 0 along the reduced dims) and stores where an element changes it.
at::Tensor all_any(const char* kernel, const at::Tensor& self, at::OptionalIntArrayRef dims, bool keepdim) {
  check_ocl(self, kernel, "self");
  const at::ScalarType result = self.scalar_type() == at::kByte ? at::kByte : at::kBool;
  const std::int64_t nd = self.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(nd), !dims || dims->empty());
  if (dims) {
    for (std::int64_t d : *dims) {
      const std::int64_t w = at::maybe_wrap_dim(d, nd);  // a 0-dim self takes 0 and -1, and has nothing to reduce
      if (nd > 0) reduced[static_cast<std::size_t>(w)] = true;
    }
  }
  std::vector<std::int64_t> keep_sizes, squeezed;
  for (std::int64_t i = 0; i < nd; ++i) {
    const bool r = reduced[static_cast<std::size_t>(i)];
    keep_sizes.push_back(r ? 1 : self.size(i));
    if (!r) squeezed.push_back(self.size(i));
  }
  const bool is_all = std::string(kernel) == "reduce_all";
  at::Tensor out = at::full(keep_sizes, is_all ? 1 : 0, self.options().dtype(result));
  if (self.numel() > 0) {
    run_plain_elementwise(kernel, out.expand(self.sizes()), {self}, {"A"}, self.scalar_type(), {});
  }
  return keepdim ? out : out.view(squeezed);
}

at::Tensor all_of(const at::Tensor& self) {
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(all)>::call(self);
  return all_any("reduce_all", self, std::nullopt, false);
}
at::Tensor any_of(const at::Tensor& self) {
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(any)>::call(self);
  return all_any("reduce_any", self, std::nullopt, false);
}
at::Tensor all_dim(const at::Tensor& self, std::int64_t dim, bool keepdim) {
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(all_dim)>::call(self, dim, keepdim);
  return all_any("reduce_all", self, at::IntArrayRef{dim}, keepdim);
}
at::Tensor any_dim(const at::Tensor& self, std::int64_t dim, bool keepdim) {
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(any_dim)>::call(self, dim, keepdim);
  return all_any("reduce_any", self, at::IntArrayRef{dim}, keepdim);
}
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(all_dims)>::call(self, dim, keepdim);
  return all_any("reduce_all", self, dim, keepdim);
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(any_dims)>::call(self, dim, keepdim);
  return all_any("reduce_any", self, dim, keepdim);
}

// ---- integer add, sub, mul ----

const char* mirror_of(std::string_view op) { return op == "sub" ? "rsub" : op == "add" ? "radd" : "mul"; }

void check_integer_arithmetic(std::string_view op, at::ScalarType result, const c10::Scalar& alpha) {
  TORCH_CHECK(!(op == "sub" && result == at::kBool),
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
              "`logical_xor()` operator instead.");
  TORCH_CHECK(!alpha.isFloatingPoint(),
              "For integral input tensors, argument alpha must not be a floating point "
              "number.");
  TORCH_CHECK(result != at::kBool || !alpha.isIntegral(false) || alpha.to<std::int64_t>() == 0 ||
                  alpha.to<std::int64_t>() == 1 || op == "mul",
              "Boolean alpha only supported for Boolean results.");
}

}  // namespace

std::optional<at::Tensor> integer_arithmetic(std::string_view op, const at::Tensor& self, const at::Tensor& other,
                                             const c10::Scalar& alpha) {
  const at::ScalarType result = at::result_type(self, other);
  if (kernel_dtype(result) || !plain_dtype(result)) return std::nullopt;
  const std::string name(op);
  if (!plain_operands(name.c_str(), self, other, result)) return std::nullopt;
  check_integer_arithmetic(op, result, alpha);
  return binary_new(name.c_str(), mirror_of(op), self, other, result, result, alpha);
}

bool integer_arithmetic_(std::string_view op, at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  const at::ScalarType result = at::result_type(self, other);
  if (kernel_dtype(self.scalar_type()) || !plain_dtype(self.scalar_type()) || !plain_dtype(result)) return false;
  const std::string name(op);
  if (!plain_operands(name.c_str(), self, other, result) || !is_ocl(self)) return false;
  check_integer_arithmetic(op, result, alpha);
  TORCH_CHECK(at::canCast(result, self.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", self.scalar_type());
  TORCH_CHECK(at::infer_size(self.sizes(), other.sizes()) == self.sizes(), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", at::infer_size(self.sizes(), other.sizes()));
  at::assert_no_internal_overlap(self);
  binary_into(name.c_str(), mirror_of(op), self, self, other, result, alpha);
  return true;
}

bool rounded_division_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, bool floor) {
  const char* kernel = floor ? "div_floor" : "div_trunc";
  const at::ScalarType compute = at::result_type(self, other);
  if (!is_ocl(self) && !is_ocl(other)) return false;
  (void)plain_operands(kernel, self, other, compute);  // for its device checks
  // A number of any dtype (a Python float is float64) is a kernel argument of the compute type.
  auto takes = [](const at::Tensor& t) { return is_number(t) || plain_dtype(t.scalar_type()); };
  if (!takes(self) || !takes(other) || !plain_dtype(compute) || compute == at::kBool ||
      !plain_dtype(out.scalar_type())) {
    return false;
  }
  if (!at::isFloatingType(compute)) {
    // The CPU's integer kernels raise for a zero divisor, where a device's division returns anything:
    // one comparison and a read of its answer (a wait) before the kernel.
    const bool zero = is_number(other) ? other.item<std::int64_t>() == 0 : at::any(at::eq(other, 0)).item<bool>();
    TORCH_CHECK(!zero, "ZeroDivisionError");
  }
  if (out.numel() == 0) return true;
  const at::Tensor a =
      unaliased(out, is_number(self) ? at::full({}, self.item(), other.options().dtype(compute)) : self)
          .expand(out.sizes());
  if (is_number(other)) {
    run_plain_elementwise((std::string(kernel) + "_scalar").c_str(), out, {a}, {"A"}, compute, {0, other.item()});
  } else {
    const bool rounded = at::isReducedFloatingType(compute) && !one_value(other, out.sizes());
    run_plain_elementwise(kernel, out, {a, unaliased(out, other).expand(out.sizes())}, {"A", "B"}, compute,
                          {rounded ? 1 : 0});
  }
  return true;
}

// isnan: x != x for the float types (only NaN differs from itself), no element for the others.
at::Tensor isnan(const at::Tensor& self) {
  check_ocl(self, "isnan", "self");
  if (!at::isFloatingType(self.scalar_type())) return at::zeros(self.sizes(), self.options().dtype(at::kBool));
  return ne_tensor(self, self);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("eq.Tensor", eq_tensor);
  m.impl("eq.Scalar", eq_scalar);
  m.impl("ne.Tensor", ne_tensor);
  m.impl("ne.Scalar", ne_scalar);
  m.impl("isnan", isnan);
  m.impl("lt.Tensor", lt_tensor);
  m.impl("lt.Scalar", lt_scalar);
  m.impl("le.Tensor", le_tensor);
  m.impl("le.Scalar", le_scalar);
  m.impl("gt.Tensor", gt_tensor);
  m.impl("gt.Scalar", gt_scalar);
  m.impl("ge.Tensor", ge_tensor);
  m.impl("ge.Scalar", ge_scalar);
  m.impl("logical_not.out", logical_not_out);
  m.impl("logical_and.out", logical_and_out);
  m.impl("logical_or.out", logical_or_out);
  m.impl("logical_xor.out", logical_xor_out);
  m.impl("bitwise_and.Tensor", bitwise_and_tensor);
  m.impl("bitwise_or.Tensor", bitwise_or_tensor);
  m.impl("bitwise_xor.Tensor", bitwise_xor_tensor);
  m.impl("bitwise_not", bitwise_not);
  m.impl("where.self", where_self);
  m.impl("masked_fill_.Scalar", masked_fill_scalar);
  m.impl("masked_fill_.Tensor", masked_fill_tensor);
  m.impl("clamp", clamp_new);
  m.impl("clamp_", clamp_inplace);
  m.impl("clamp_min", clamp_min);
  m.impl("clamp_max", clamp_max);
  m.impl("clamp_min_", clamp_min_);
  m.impl("clamp_max_", clamp_max_);
  m.impl("clamp.Tensor", clamp_tensor);
  m.impl("clamp_.Tensor", clamp_tensor_);
  m.impl("clamp.Tensor_out", clamp_tensor_out);
  m.impl("clamp_min.Tensor", clamp_min_tensor);
  m.impl("clamp_min_.Tensor", clamp_min_tensor_);
  m.impl("clamp_min.Tensor_out", clamp_min_tensor_out);
  m.impl("clamp_max.Tensor", clamp_max_tensor);
  m.impl("clamp_max_.Tensor", clamp_max_tensor_);
  m.impl("clamp_max.Tensor_out", clamp_max_tensor_out);
  m.impl("all", all_of);
  m.impl("any", any_of);
  m.impl("all.dim", all_dim);
  m.impl("any.dim", any_dim);
  m.impl("all.dims", all_dims);
  m.impl("any.dims", any_dims);
}

}  // namespace ocltune_torch
