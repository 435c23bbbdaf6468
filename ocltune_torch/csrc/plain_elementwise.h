// Element-wise ops on plain kernels (kernels/plain_elementwise.cl): casts, integer arithmetic and the
// building blocks other files call.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// dst = src converted to dst's dtype, both on one ocl device, src expanded to dst's sizes (dst may
// have any strides, not overlapping itself). False when a dtype is not a plain one.
bool plain_copy(const at::Tensor& dst, const at::Tensor& src);

// add, sub and mul (`op`) of integer and bool tensors, for elementwise_ops.cpp, whose family kernels
// compute the float dtypes: nullopt unless the result dtype is an integer or bool one.
std::optional<at::Tensor> integer_arithmetic(std::string_view op, const at::Tensor& self, const at::Tensor& other,
                                             const c10::Scalar& alpha);
// The in-place form: false unless self's dtype is an integer or bool one (then self holds the result).
bool integer_arithmetic_(std::string_view op, at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha);

// self / other rounded towards zero (`floor` false: rounding_mode "trunc") or down ("floor") into out,
// as PyTorch's CPU kernels compute them for every plain dtype but bool: out is on the device, has the
// broadcast sizes and a dtype the result type casts to (the caller checks); self or other may be a
// number (a 0-dim CPU tensor). False, with out untouched, where the fallback computes it (a dtype
// that is not a plain one, bool: the CPU's error). An integer divisor of 0 raises ZeroDivisionError.
bool rounded_division_into(const at::Tensor& out, const at::Tensor& self, const at::Tensor& other, bool floor);

// out = kernel(inputs...) of plain_elementwise.cl: out and every input have out's sizes (expand
// them), `slots` name the inputs' type slots in order ("A", "B", "C"), K is the compute type, and
// `scalars` follow the tensors (in K's value type).
void run_plain_elementwise(const char* kernel, const at::Tensor& out, const std::vector<at::Tensor>& inputs,
                           const std::vector<const char*>& slots, at::ScalarType compute,
                           const std::vector<c10::Scalar>& scalars);

}  // namespace ocltune_torch
