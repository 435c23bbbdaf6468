// One kernel, three registered forms: the functional (`exp`), in-place (`exp_`) and out= (`exp.out`)
// entries of a unary or binary op, generated from one `into` function and registered with one call.
//
// An out-of-tree device gets no code generation from PyTorch: every form it serves is an entry of
// its own. Where native_functions.yaml makes the functional and in-place forms composites over the
// out= form (logical_not, logical_and, ...), register the out= form alone; where it does not
// (structured ops such as exp, add or eq, whose three forms PyTorch generates per in-tree backend),
// the register_*_forms calls below give all three from the kernel, so they cannot drift apart
// (docs/ADDING_AN_OP.md). The forms own what TensorIterator checks before it computes: the result's
// sizes and dtype against self (in place) or out (out=, resized as PyTorch resizes it), and overlap.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/result_layout.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/elementwise.h"

namespace ocltune_torch {

// out = op(self): out is on self's device, has self's sizes and dtype, is non-overlapping and dense,
// and shares no memory with self other than being self itself (in place). False when the kernel
// cannot take the call (a dtype, a layout); out is then untouched and the caller falls back.
using UnaryInto = bool (*)(const at::Tensor& out, const at::Tensor& self);

// out = op(self, other) (other scaled by alpha where the schema has one; 1 otherwise): out is on the
// device, has the broadcast sizes and a dtype the result type casts to, and has no internal overlap;
// it may be self (in place). self or other may be a number (a 0-dim CPU tensor). False when the kernel
// cannot take the call; out is then untouched and the caller falls back. elementwise_into
// (elementwise.h) is one; the forms below take any with this shape.
using BinaryInto = bool (*)(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                            const c10::Scalar& alpha);

// The result dtype of a binary op: PyTorch's promotion (add, mul, bitwise_and) or bool (eq, lt).
enum class BinaryResult { kPromoted, kBool };

// A unary op's into function on the elementwise generator: elementwise_into with the op's ElementwiseOp.
template <const ElementwiseOp& Op>
bool elementwise_unary_into(const at::Tensor& out, const at::Tensor& self) {
  return elementwise_into(Op, out, self);
}

// A binary op's generated into function: elementwise_into with the op's ElementwiseOp.
template <const ElementwiseOp& Op>
bool elementwise_op_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other,
                         const c10::Scalar& alpha) {
  return elementwise_into(Op, out, self, other, alpha);
}

namespace op_forms {

// "aten::exp" with overload "out": "exp.out", the name m.impl takes in TORCH_LIBRARY_IMPL(aten, ...).
template <class Op>
std::string schema_name() {
  const std::string name = std::string(Op::name).substr(std::string("aten::").size());
  const std::string overload = Op::overload_name;
  return overload.empty() ? name : name + "." + overload;
}

template <class Op, UnaryInto Into>
at::Tensor functional(const at::Tensor& self) {
  check_ocl(self, Op::name, "self");
  at::Tensor out = new_elementwise_result(self.sizes(), self.options(), {&self});  // as TensorIterator lays it out
  if (out.numel() == 0) return out;
  if (!Into(out, self)) return fallback<Op>::call(self);
  return out;
}

template <class Op, UnaryInto Into>
at::Tensor& in_place(at::Tensor& self) {
  check_ocl(self, Op::name, "self");
  if (self.numel() == 0) return self;
  if (self.is_non_overlapping_and_dense()) {
    if (Into(self, self)) return self;
    return fallback<Op>::call(self);
  }
  // A view with gaps: the result packed, then copied into the view.
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (!Into(out, self)) return fallback<Op>::call(self);
  return self.copy_(out);
}

template <class Op, UnaryInto Into>
at::Tensor& out_form(const at::Tensor& self, at::Tensor& out) {
  check_ocl(self, Op::name, "self");
  check_ocl(out, Op::name, "out");
  check_same_device(self, out, Op::name, "out");
  // Another result dtype (PyTorch casts into out): the CPU's rules, through the fallback.
  if (out.scalar_type() != self.scalar_type()) return fallback<Op>::call(self, out);
  at::native::resize_output(out, self.sizes());
  if (out.numel() == 0) return out;
  const at::MemOverlapStatus overlap = at::get_overlap_status(out, self);
  const bool in_place = overlap == at::MemOverlapStatus::Full && out.strides() == self.strides();
  if (out.is_non_overlapping_and_dense() && (in_place || overlap == at::MemOverlapStatus::No)) {
    if (Into(out, self)) return out;
    return fallback<Op>::call(self, out);
  }
  at::Tensor result = at::empty(self.sizes(), self.options());
  if (!Into(result, self)) return fallback<Op>::call(self, out);
  return out.copy_(result);
}

// ---- binary forms ----

inline at::ScalarType binary_result(BinaryResult r, const at::Tensor& self, const at::Tensor& other) {
  return r == BinaryResult::kBool ? at::kBool : at::result_type(self, other);
}

inline std::vector<std::int64_t> binary_sizes(const at::Tensor& self, const at::Tensor& other) {
  const at::DimVector sizes = at::infer_size_dimvector(self.sizes(), other.sizes());
  return {sizes.begin(), sizes.end()};
}

// The alpha of a schema that has one, else 1.
inline c10::Scalar alpha_or_one() { return 1; }
inline const c10::Scalar& alpha_or_one(const c10::Scalar& alpha) { return alpha; }

// A Scalar argument (eq.Scalar, ...) as the number operand the Tensor forms take, as PyTorch's own
// composites wrap it (a wrapped number takes part in type promotion as a Python number).
inline at::Tensor number_operand(const c10::Scalar& s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// The checks TensorIterator makes of an output it did not allocate (self in place, or out=) before
// writing it: the result type casts to it, it does not overlap itself or an input partially.
inline void check_output(const at::Tensor& out, at::ScalarType result, const at::Tensor& self,
                         const at::Tensor& other) {
  TORCH_CHECK(at::canCast(result, out.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", out.scalar_type());
  at::assert_no_internal_overlap(out);
  for (const at::Tensor* t : {&self, &other}) {
    if (is_ocl(*t) && t->numel() > 0 && out.numel() > 0) at::assert_no_partial_overlap(out, *t);
  }
}

template <class Op, BinaryInto Into, BinaryResult R, class... Alpha>
at::Tensor binary_functional(const at::Tensor& self, const at::Tensor& other, const Alpha&... alpha) {
  const at::Tensor& like = is_ocl(self) ? self : other;
  const std::vector<std::int64_t> sizes = binary_sizes(self, other);
  const at::ScalarType result = binary_result(R, self, other);
  at::Tensor out = new_elementwise_result(sizes, like.options().dtype(result), {&self, &other});
  if (!Into(out, self, other, alpha_or_one(alpha...))) return fallback<Op>::call(self, other, alpha...);
  return out;
}

template <class Op, BinaryInto Into, BinaryResult R, class... Alpha>
at::Tensor& binary_in_place(at::Tensor& self, const at::Tensor& other, const Alpha&... alpha) {
  check_ocl(self, Op::name, "self");
  const std::vector<std::int64_t> sizes = binary_sizes(self, other);
  TORCH_CHECK(self.sizes() == at::IntArrayRef(sizes), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", at::IntArrayRef(sizes));
  check_output(self, binary_result(R, self, other), self, other);
  if (!Into(self, self, other, alpha_or_one(alpha...))) return fallback<Op>::call(self, other, alpha...);
  return self;
}

template <class Op, BinaryInto Into, BinaryResult R, class... Alpha>
at::Tensor& binary_out(const at::Tensor& self, const at::Tensor& other, const Alpha&... alpha, at::Tensor& out) {
  check_ocl(out, Op::name, "out");
  if (is_ocl(self)) check_same_device(out, self, Op::name, "self");
  if (is_ocl(other)) check_same_device(out, other, Op::name, "other");
  const at::ScalarType result = binary_result(R, self, other);
  TORCH_CHECK(at::canCast(result, out.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", out.scalar_type());
  const std::vector<std::int64_t> sizes = binary_sizes(self, other);
  if (out.is_same(self) || out.is_same(other)) {
    // An out that is also an operand (the in-place composites over out= pass self) is never resized,
    // as TensorIterator refuses: logical_and_ on a [5, 1] self and a [5] other raises.
    TORCH_CHECK(out.sizes() == at::IntArrayRef(sizes), Op::name, ": output with shape ", out.sizes(),
                " doesn't match the broadcast shape ", at::IntArrayRef(sizes));
  } else if (out.sizes() != at::IntArrayRef(sizes)) {
    // Resized, then laid out as TensorIterator lays out an output it resizes (the functional composites
    // over out=, logical_and, pass an empty one).
    at::native::resize_output(out, sizes);
    out.as_strided_(sizes, elementwise_result_strides(sizes, {&self, &other}));
  }
  check_output(out, result, self, other);
  if (!Into(out, self, other, alpha_or_one(alpha...))) return fallback<Op>::call(self, other, alpha..., out);
  return out;
}

// The Scalar overloads (eq.Scalar, ...): the number wrapped, then the Tensor forms' rules.
template <class Op, BinaryInto Into, BinaryResult R>
at::Tensor scalar_functional(const at::Tensor& self, const c10::Scalar& other) {
  check_ocl(self, Op::name, "self");
  const at::Tensor number = number_operand(other);
  at::Tensor out =
      new_elementwise_result(self.sizes(), self.options().dtype(binary_result(R, self, number)), {&self, &number});
  if (!Into(out, self, number, 1)) return fallback<Op>::call(self, other);
  return out;
}

template <class Op, BinaryInto Into, BinaryResult R>
at::Tensor& scalar_in_place(at::Tensor& self, const c10::Scalar& other) {
  check_ocl(self, Op::name, "self");
  const at::Tensor number = number_operand(other);
  check_output(self, binary_result(R, self, number), self, number);
  if (!Into(self, self, number, 1)) return fallback<Op>::call(self, other);
  return self;
}

template <class Op, BinaryInto Into, BinaryResult R>
at::Tensor& scalar_out(const at::Tensor& self, const c10::Scalar& other, at::Tensor& out) {
  check_ocl(self, Op::name, "self");
  check_ocl(out, Op::name, "out");
  check_same_device(out, self, Op::name, "self");
  const at::Tensor number = number_operand(other);
  const at::ScalarType result = binary_result(R, self, number);
  TORCH_CHECK(at::canCast(result, out.scalar_type()), "result type ", result,
              " can't be cast to the desired output type ", out.scalar_type());
  at::native::resize_output(out, self.sizes());
  check_output(out, result, self, number);
  if (!Into(out, self, number, 1)) return fallback<Op>::call(self, other, out);
  return out;
}

}  // namespace op_forms

// Registers Functional (e.g. ATEN_OP(exp)), InPlace (ATEN_OP(exp_)) and Out (ATEN_OP(exp_out)) on
// one kernel; each falls back to the CPU as its own op when the kernel declines.
template <class Functional, class InPlace, class Out, UnaryInto Into>
void register_unary_forms(torch::Library& m) {
  m.impl(op_forms::schema_name<Functional>().c_str(), &op_forms::functional<Functional, Into>);
  m.impl(op_forms::schema_name<InPlace>().c_str(), &op_forms::in_place<InPlace, Into>);
  m.impl(op_forms::schema_name<Out>().c_str(), &op_forms::out_form<Out, Into>);
}

// The binary forms of an op without alpha, Tensor overloads: Functional (e.g. ATEN_OP(mul_Tensor)),
// InPlace (ATEN_OP(mul__Tensor)), Out (ATEN_OP(mul_out)) on one kernel, each falling back as its own op.
// InPlace void: the op has no in-place form (maximum).
template <class Functional, class InPlace, class Out, BinaryInto Into, BinaryResult R = BinaryResult::kPromoted>
void register_binary_forms(torch::Library& m) {
  m.impl(op_forms::schema_name<Functional>().c_str(), &op_forms::binary_functional<Functional, Into, R>);
  if constexpr (!std::is_void_v<InPlace>) {
    m.impl(op_forms::schema_name<InPlace>().c_str(), &op_forms::binary_in_place<InPlace, Into, R>);
  }
  m.impl(op_forms::schema_name<Out>().c_str(), &op_forms::binary_out<Out, Into, R>);
}

// The same for ops whose schema scales other by alpha (add.Tensor, sub.Tensor).
template <class Functional, class InPlace, class Out, BinaryInto Into>
void register_binary_alpha_forms(torch::Library& m) {
  constexpr BinaryResult R = BinaryResult::kPromoted;
  m.impl(op_forms::schema_name<Functional>().c_str(), &op_forms::binary_functional<Functional, Into, R, c10::Scalar>);
  m.impl(op_forms::schema_name<InPlace>().c_str(), &op_forms::binary_in_place<InPlace, Into, R, c10::Scalar>);
  m.impl(op_forms::schema_name<Out>().c_str(), &op_forms::binary_out<Out, Into, R, c10::Scalar>);
}

// The Scalar overloads' three forms (eq.Scalar, eq_.Scalar, eq.Scalar_out) on the same kernel.
template <class Functional, class InPlace, class Out, BinaryInto Into, BinaryResult R = BinaryResult::kPromoted>
void register_binary_scalar_forms(torch::Library& m) {
  m.impl(op_forms::schema_name<Functional>().c_str(), &op_forms::scalar_functional<Functional, Into, R>);
  m.impl(op_forms::schema_name<InPlace>().c_str(), &op_forms::scalar_in_place<InPlace, Into, R>);
  m.impl(op_forms::schema_name<Out>().c_str(), &op_forms::scalar_out<Out, Into, R>);
}

}  // namespace ocltune_torch
