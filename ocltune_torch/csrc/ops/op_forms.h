// One kernel, three registered forms: the functional (`exp`), in-place (`exp_`) and out= (`exp.out`)
// entries of a unary op, generated from one `into` function and registered with one call.
//
// An out-of-tree device gets no code generation from PyTorch: every form it serves is an entry of
// its own. Where native_functions.yaml makes the functional and in-place forms composites over the
// out= form (logical_not, ...), register the out= form alone; where it does not (structured ops such
// as exp, whose three forms PyTorch generates per in-tree backend), register_unary_forms below gives
// all three from the kernel, so they cannot drift apart (docs/ADDING_AN_OP.md).
#pragma once

#include <string>

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"

namespace ocltune_torch {

// out = op(self): out is on self's device, has self's sizes and dtype, is non-overlapping and dense,
// and shares no memory with self other than being self itself (in place). False when the kernel
// cannot take the call (a dtype, a layout); out is then untouched and the caller falls back.
using UnaryInto = bool (*)(const at::Tensor& out, const at::Tensor& self);

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
  // The layout of a dense self (as TensorIterator keeps it), else packed.
  at::Tensor out = self.is_non_overlapping_and_dense() ? at::empty_strided(self.sizes(), self.strides(), self.options())
                                                       : at::empty(self.sizes(), self.options());
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

}  // namespace op_forms

// Registers Functional (e.g. ATEN_OP(exp)), InPlace (ATEN_OP(exp_)) and Out (ATEN_OP(exp_out)) on
// one kernel; each falls back to the CPU as its own op when the kernel declines.
template <class Functional, class InPlace, class Out, UnaryInto Into>
void register_unary_forms(torch::Library& m) {
  m.impl(op_forms::schema_name<Functional>().c_str(), &op_forms::functional<Functional, Into>);
  m.impl(op_forms::schema_name<InPlace>().c_str(), &op_forms::in_place<InPlace, Into>);
  m.impl(op_forms::schema_name<Out>().c_str(), &op_forms::out_form<Out, Into>);
}

}  // namespace ocltune_torch
