// _softmax_backward_data and _log_softmax_backward_data, composed on the device: ocltune's softmax
// family has forward kinds only, and each backward is one sum along the softmax dim and a few
// elementwise ops (the sum through the reduce family, so nothing falls back).
//   softmax:     dx = y * (dy - sum(dy * y, dim))
//   log_softmax: dx = dy - exp(y) * sum(dy, dim)
#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"

namespace ocltune_torch {
namespace {

namespace dm = device_math;

// dy and y packed and viewed as [outer, axis, inner] around the softmax dim, so every step has at
// most three dims whatever the rank.
std::vector<std::int64_t> around_dim(const at::Tensor& t, std::int64_t dim) {
  std::vector<std::int64_t> v = {1, t.dim() == 0 ? 1 : t.size(dim), 1};
  for (std::int64_t i = 0; i < t.dim(); ++i) {
    if (i < dim) v[0] *= t.size(i);
    if (i > dim) v[2] *= t.size(i);
  }
  return v;
}

// Contiguous, and float32 for 16-bit tensors: every step computes in float32 and only dx is rounded,
// as PyTorch's CPU kernels do (16-bit steps lose dy - sum(dy * y) where the two cancel).
at::Tensor wide(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat ? t.contiguous() : t.to(at::kFloat).contiguous();
}

// input_dtype is the result's dtype: grad_output's, or fp16 under fp32 gradients (the backward of a
// half_to_float softmax, as on CUDA).
bool takes(const at::Tensor& grad_output, const at::Tensor& output, at::ScalarType input_dtype) {
  return dm::same_kernel_dtype(grad_output.scalar_type(), {&grad_output, &output}) &&
         (input_dtype == grad_output.scalar_type() ||
          (input_dtype == at::kHalf && grad_output.scalar_type() == at::kFloat)) &&
         grad_output.sizes() == output.sizes() && grad_output.device() == output.device();
}

at::Tensor softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, std::int64_t dim,
                            at::ScalarType input_dtype) {
  check_ocl(output, "_softmax_backward_data", "output");
  if (!takes(grad_output, output, input_dtype)) {
    return fallback<ATEN_OP(_softmax_backward_data)>::call(grad_output, output, dim, input_dtype);
  }
  if (output.numel() == 0) return at::empty(output.sizes(), output.options().dtype(input_dtype));
  const std::int64_t d = at::maybe_wrap_dim(dim, output.dim());
  const std::vector<std::int64_t> v = around_dim(output, d);
  const at::Tensor dy = wide(grad_output).view(v), y = wide(output).view(v);
  at::Tensor dx = dm::binary("mul", dy, y);
  const at::Tensor s = dm::sum(dx, {1}, true);
  dm::binary_into(dx, "sub", dy, s);
  dm::binary_into(dx, "mul", dx, y);
  return dx.to(input_dtype).view(output.sizes());
}

at::Tensor log_softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, std::int64_t dim,
                                at::ScalarType input_dtype) {
  check_ocl(output, "_log_softmax_backward_data", "output");
  if (!takes(grad_output, output, input_dtype)) {
    return fallback<ATEN_OP(_log_softmax_backward_data)>::call(grad_output, output, dim, input_dtype);
  }
  if (output.numel() == 0) return at::empty(output.sizes(), output.options().dtype(input_dtype));
  const std::int64_t d = at::maybe_wrap_dim(dim, output.dim());
  const std::vector<std::int64_t> v = around_dim(output, d);
  const at::Tensor dy = wide(grad_output).view(v), y = wide(output).view(v);
  const at::Tensor s = dm::sum(dy, {1}, true);
  at::Tensor dx = dm::unary("exp", y);
  dm::binary_into(dx, "mul", dx, s);
  dm::binary_into(dx, "sub", dy, dx);
  return dx.to(input_dtype).view(output.sizes());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_softmax_backward_data", softmax_backward);
  m.impl("_log_softmax_backward_data", log_softmax_backward);
}

}  // namespace ocltune_torch
