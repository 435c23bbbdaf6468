// The integer and bool arithmetic of comparison_ops.cpp that elementwise_ops.cpp's add, sub, mul and
// div call (the elementwise family computes the float dtypes; plain kernels the others).
#pragma once

#include <optional>
#include <string_view>

#include <ATen/core/Tensor.h>

namespace ocltune_torch {

// add, sub and mul (`op`) of integer and bool tensors: nullopt unless the result dtype is an integer
// or bool one.
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

}  // namespace ocltune_torch
