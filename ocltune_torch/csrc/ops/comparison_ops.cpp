// Element-wise ops whose kernels are plain ones: comparisons, logical and bitwise ops on the elementwise
// generator (elementwise.h, registered through op_forms.h), and where, masked_fill_, clamp (number and
// tensor bounds) and all/any, which launch plain_elementwise.cl's ternary and reducing kernels on the
// generator's operand rules. Casts are copies (device/copy.cpp).
//
// Operands follow PyTorch's type promotion (at::result_type): both are converted to the result type
// before the op, so int64 == float compares in float. A 0-dim CPU tensor (a Python number) is a
// kernel argument, never a transfer. float64 and complex operands take the CPU fallback.
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
#include "ocltune_torch/csrc/device/result_layout.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/elementwise.h"
#include "ocltune_torch/csrc/ops/op_forms.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {

namespace {

std::vector<std::int64_t> to_vector(at::IntArrayRef a) { return {a.begin(), a.end()}; }

// ---- comparisons: bool results, computed in the promoted type ----

constexpr ElementwiseOp kEq{.name = "eq", .plain = "eq", .plain_reversed = "eq", .bool_result = true};
constexpr ElementwiseOp kNe{.name = "ne", .plain = "ne", .plain_reversed = "ne", .bool_result = true};
constexpr ElementwiseOp kLt{.name = "lt", .plain = "lt", .plain_reversed = "gt", .bool_result = true};
constexpr ElementwiseOp kLe{.name = "le", .plain = "le", .plain_reversed = "ge", .bool_result = true};
constexpr ElementwiseOp kGt{.name = "gt", .plain = "gt", .plain_reversed = "lt", .bool_result = true};
constexpr ElementwiseOp kGe{.name = "ge", .plain = "ge", .plain_reversed = "le", .bool_result = true};

// ---- logical ops (out= forms: the functional and in-place ones are composites over them) ----

constexpr ElementwiseOp kLogicalNot{.name = "logical_not", .plain = "logical_not"};
constexpr ElementwiseOp kLogicalAnd{
    .name = "logical_and", .plain = "logical_and", .plain_reversed = "logical_and", .bool_result = true};
constexpr ElementwiseOp kLogicalOr{
    .name = "logical_or", .plain = "logical_or", .plain_reversed = "logical_or", .bool_result = true};
constexpr ElementwiseOp kLogicalXor{
    .name = "logical_xor", .plain = "logical_xor", .plain_reversed = "logical_xor", .bool_result = true};

// Into an out of any dtype (bool where logical_not's composite allocates it).
at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& out) {
  check_ocl(self, "logical_not", "self");
  check_ocl(out, "logical_not", "out");
  check_same_device(out, self, "logical_not", "out");
  at::native::resize_output(out, self.sizes());
  at::assert_no_internal_overlap(out);
  if (!elementwise_into(kLogicalNot, out, self)) return fallback<ATEN_OP(logical_not_out)>::call(self, out);
  return out;
}

// ---- bitwise ops: integer and bool tensors (floats: PyTorch's error, from the fallback) ----

constexpr ElementwiseOp kBitwiseAnd{
    .name = "bitwise_and", .plain = "bitwise_and", .plain_reversed = "bitwise_and", .integral = true};
constexpr ElementwiseOp kBitwiseOr{
    .name = "bitwise_or", .plain = "bitwise_or", .plain_reversed = "bitwise_or", .integral = true};
constexpr ElementwiseOp kBitwiseXor{
    .name = "bitwise_xor", .plain = "bitwise_xor", .plain_reversed = "bitwise_xor", .integral = true};
constexpr ElementwiseOp kBitwiseNot{.name = "bitwise_not", .plain = "bitwise_not", .integral = true};

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
  at::Tensor out = new_elementwise_result(sizes, like.options().dtype(result), {&c, &a, &b});
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
  at::Tensor out = new_elementwise_result(self.sizes(), self.options().dtype(t), {&self});
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
  std::vector<const at::Tensor*> operands;
  for (const at::Tensor& t : p->inputs) operands.push_back(&t);
  at::Tensor out = new_elementwise_result(p->sizes, self.options().dtype(p->type), operands);
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

}  // namespace

// isnan: x != x for the float types (only NaN differs from itself), no element for the others.
at::Tensor isnan(const at::Tensor& self) {
  check_ocl(self, "isnan", "self");
  if (!at::isFloatingType(self.scalar_type())) return at::zeros(self.sizes(), self.options().dtype(at::kBool));
  return at::ne(self, self);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  constexpr BinaryResult kBool = BinaryResult::kBool;
  register_binary_forms<ATEN_OP(eq_Tensor), ATEN_OP(eq__Tensor), ATEN_OP(eq_Tensor_out), elementwise_op_into<kEq>,
                        kBool>(m);
  register_binary_forms<ATEN_OP(ne_Tensor), ATEN_OP(ne__Tensor), ATEN_OP(ne_Tensor_out), elementwise_op_into<kNe>,
                        kBool>(m);
  register_binary_forms<ATEN_OP(lt_Tensor), ATEN_OP(lt__Tensor), ATEN_OP(lt_Tensor_out), elementwise_op_into<kLt>,
                        kBool>(m);
  register_binary_forms<ATEN_OP(le_Tensor), ATEN_OP(le__Tensor), ATEN_OP(le_Tensor_out), elementwise_op_into<kLe>,
                        kBool>(m);
  register_binary_forms<ATEN_OP(gt_Tensor), ATEN_OP(gt__Tensor), ATEN_OP(gt_Tensor_out), elementwise_op_into<kGt>,
                        kBool>(m);
  register_binary_forms<ATEN_OP(ge_Tensor), ATEN_OP(ge__Tensor), ATEN_OP(ge_Tensor_out), elementwise_op_into<kGe>,
                        kBool>(m);
  register_binary_scalar_forms<ATEN_OP(eq_Scalar), ATEN_OP(eq__Scalar), ATEN_OP(eq_Scalar_out),
                               elementwise_op_into<kEq>, kBool>(m);
  register_binary_scalar_forms<ATEN_OP(ne_Scalar), ATEN_OP(ne__Scalar), ATEN_OP(ne_Scalar_out),
                               elementwise_op_into<kNe>, kBool>(m);
  register_binary_scalar_forms<ATEN_OP(lt_Scalar), ATEN_OP(lt__Scalar), ATEN_OP(lt_Scalar_out),
                               elementwise_op_into<kLt>, kBool>(m);
  register_binary_scalar_forms<ATEN_OP(le_Scalar), ATEN_OP(le__Scalar), ATEN_OP(le_Scalar_out),
                               elementwise_op_into<kLe>, kBool>(m);
  register_binary_scalar_forms<ATEN_OP(gt_Scalar), ATEN_OP(gt__Scalar), ATEN_OP(gt_Scalar_out),
                               elementwise_op_into<kGt>, kBool>(m);
  register_binary_scalar_forms<ATEN_OP(ge_Scalar), ATEN_OP(ge__Scalar), ATEN_OP(ge_Scalar_out),
                               elementwise_op_into<kGe>, kBool>(m);
  m.impl("isnan", isnan);
  m.impl("logical_not.out", logical_not_out);
  m.impl("logical_and.out", &op_forms::binary_out<ATEN_OP(logical_and_out), elementwise_op_into<kLogicalAnd>, kBool>);
  m.impl("logical_or.out", &op_forms::binary_out<ATEN_OP(logical_or_out), elementwise_op_into<kLogicalOr>, kBool>);
  m.impl("logical_xor.out", &op_forms::binary_out<ATEN_OP(logical_xor_out), elementwise_op_into<kLogicalXor>, kBool>);
  register_binary_forms<ATEN_OP(bitwise_and_Tensor), ATEN_OP(bitwise_and__Tensor), ATEN_OP(bitwise_and_Tensor_out),
                        elementwise_op_into<kBitwiseAnd>>(m);
  register_binary_forms<ATEN_OP(bitwise_or_Tensor), ATEN_OP(bitwise_or__Tensor), ATEN_OP(bitwise_or_Tensor_out),
                        elementwise_op_into<kBitwiseOr>>(m);
  register_binary_forms<ATEN_OP(bitwise_xor_Tensor), ATEN_OP(bitwise_xor__Tensor), ATEN_OP(bitwise_xor_Tensor_out),
                        elementwise_op_into<kBitwiseXor>>(m);
  register_unary_forms<ATEN_OP(bitwise_not), ATEN_OP(bitwise_not_), ATEN_OP(bitwise_not_out),
                       elementwise_unary_into<kBitwiseNot>>(m);
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
