// sum.dim_IntList and mean.dim (ocltune's reduce family), _softmax and _log_softmax (its softmax family),
// with half_to_float as on CUDA.
//
// Both families take contiguous tensors of up to 4 dims: a strided input is packed first, and dims
// are merged (adjacent dims reduced alike become one; softmax sees [outer, axis, inner]).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device.h"
#include "ocltune_torch/csrc/errors.h"
#include "ocltune_torch/csrc/fallback.h"
#include "ocltune_torch/csrc/tensor_util.h"

namespace ocltune_torch {
namespace {

// sum or mean of self over `dim` (none or empty: every dim), in self's dtype.
template <class Fallback>
at::Tensor reduce(const char* op, const char* kind, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (!kernel_dtype(self.scalar_type()) || dtype.value_or(self.scalar_type()) != self.scalar_type()) {
    return fallback_op();
  }
  const std::int64_t nd = self.dim();
  // A 0-dim self takes dim 0 and -1 (maybe_wrap_dim wraps them to 0): one flag for it, not none.
  std::vector<bool> reduced(static_cast<std::size_t>(std::max<std::int64_t>(nd, 1)), !dim || dim->empty());
  if (dim) {
    for (std::int64_t d : *dim) {
      const std::int64_t w = at::maybe_wrap_dim(d, nd);
      TORCH_CHECK(!reduced[static_cast<std::size_t>(w)], "dim ", w, " appears multiple times in the list of dims");
      reduced[static_cast<std::size_t>(w)] = true;
    }
  }
  std::vector<std::int64_t> out_sizes;
  for (std::int64_t i = 0; i < nd; ++i) {
    if (!reduced[static_cast<std::size_t>(i)]) {
      out_sizes.push_back(self.size(i));
    } else if (keepdim) {
      out_sizes.push_back(1);
    }
  }
  at::Tensor out = at::empty(out_sizes, self.options());
  if (out.numel() == 0) return out;
  if (self.numel() == 0) return out.fill_(std::string_view(kind) == "mean" ? NAN : 0.0);  // as PyTorch defines them
  // Merged dims: size-1 dims dropped, neighbours reduced alike joined.
  std::vector<std::int64_t> dims;
  std::vector<bool> roles;
  for (std::int64_t i = 0; i < nd; ++i) {
    if (self.size(i) == 1) continue;
    const bool r = reduced[static_cast<std::size_t>(i)];
    if (!dims.empty() && roles.back() == r) {
      dims.back() *= self.size(i);
    } else {
      dims.push_back(self.size(i));
      roles.push_back(r);
    }
  }
  std::vector<int> axes;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    if (roles[i]) axes.push_back(static_cast<int>(i));
  }
  if (axes.empty()) return out.copy_(self.reshape(out_sizes));  // only dims of size 1 reduced: the values
  if (dims.size() > OCLTUNE_MAX_DIMS) return fallback_op();
  const at::Tensor x = self.contiguous();
  const ocltune_tensor in = cl_tensor_of(x), result = cl_tensor_of(out);
  ocltune_reduce_args r;
  ocltune_reduce_args_init(&r, kind, static_cast<int>(dims.size()), dims.data(), static_cast<int>(axes.size()),
                           axes.data(), in.buffer, result.buffer);
  r.dtype = *ocltune_dtype_of(self.scalar_type());
  r.input = in;
  r.output = result;
  call_ocltune(op, [&] { device_runtime(self.device().index()).reduce(r); });
  return out;
}

at::Tensor sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  return reduce("sum", "sum", self, dim, keepdim, dtype,
                [&] { return fallback<ATEN_OP(sum_dim_IntList)>::call(self, dim, keepdim, dtype); });
}

at::Tensor mean(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                std::optional<at::ScalarType> dtype) {
  return reduce("mean", "mean", self, dim, keepdim, dtype,
                [&] { return fallback<ATEN_OP(mean_dim)>::call(self, dim, keepdim, dtype); });
}

// softmax or log_softmax of self along dim, as [outer, axis, inner] on a packed copy.
template <class Fallback>
at::Tensor softmax(const char* op, bool log, const at::Tensor& self, std::int64_t dim, bool half_to_float,
                   Fallback fallback_op) {
  check_ocl(self, op, "self");
  if (half_to_float) {
    // CUDA's fp16-in, fp32-out softmax (the CPU has none): the family's fp32 softmax of an fp32 copy
    // gives the same values, since the fp16 kernel computes in fp32 and the C ABI stores one dtype.
    TORCH_CHECK(self.scalar_type() == at::kHalf, "conversion is supported for Half type only");
    return softmax(op, log, self.to(at::kFloat), dim, false, fallback_op);
  }
  if (!kernel_dtype(self.scalar_type())) return fallback_op();
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  const std::int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::int64_t dims[3] = {1, self.dim() == 0 ? 1 : self.size(d), 1};
  for (std::int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) dims[0] *= self.size(i);
    if (i > d) dims[2] *= self.size(i);
  }
  const at::Tensor x = self.contiguous();
  const ocltune_tensor in = cl_tensor_of(x), result = cl_tensor_of(out);
  ocltune_softmax_args s;
  ocltune_softmax_args_init(&s, 3, dims, 1, in.buffer, result.buffer);
  s.log = log ? 1 : 0;
  s.dtype = *ocltune_dtype_of(self.scalar_type());
  s.input = in;
  s.output = result;
  call_ocltune(op, [&] { device_runtime(self.device().index()).softmax(s); });
  return out;
}

at::Tensor softmax_op(const at::Tensor& self, std::int64_t dim, bool half_to_float) {
  return softmax("_softmax", false, self, dim, half_to_float,
                 [&] { return fallback<ATEN_OP(_softmax)>::call(self, dim, half_to_float); });
}

at::Tensor log_softmax_op(const at::Tensor& self, std::int64_t dim, bool half_to_float) {
  return softmax("_log_softmax", true, self, dim, half_to_float,
                 [&] { return fallback<ATEN_OP(_log_softmax)>::call(self, dim, half_to_float); });
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", sum);
  m.impl("mean.dim", mean);
  m.impl("_softmax", softmax_op);
  m.impl("_log_softmax", log_softmax_op);
}

}  // namespace ocltune_torch
