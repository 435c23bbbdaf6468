// The reductions (ocltune's reduce family): sum.dim_IntList, mean.dim, amax, amin, max and min (of all
// elements, and .dim with indices), argmax, argmin, linalg_vector_norm of order 2; var and std composed
// from them; _softmax and _log_softmax (its softmax family), with half_to_float as on CUDA. Also
// ocltune::reduce_prologue, what torch.compile's backend makes of sum/mean/amax/amin of an elementwise
// chain: the chain applied as the reduction reads its input (kernels/prologue.cl), never stored.
//
// Both families take contiguous tensors of up to 4 dims: a strided input is packed first, and dims
// are merged (adjacent dims reduced alike become one; softmax sees [outer, axis, inner]).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/fused_elementwise.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// Which dims of self `dim` reduces (none or empty: every dim; a 0-dim self: one flag).
std::vector<bool> reduced_dims(const at::Tensor& self, at::OptionalIntArrayRef dim) {
  const std::int64_t nd = self.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(std::max<std::int64_t>(nd, 1)), !dim || dim->empty());
  if (dim) {
    for (std::int64_t d : *dim) {
      const std::int64_t w = at::maybe_wrap_dim(d, nd);
      TORCH_CHECK(!reduced[static_cast<std::size_t>(w)], "dim ", w, " appears multiple times in the list of dims");
      reduced[static_cast<std::size_t>(w)] = true;
    }
  }
  return reduced;
}

std::vector<std::int64_t> reduced_sizes(const at::Tensor& self, const std::vector<bool>& reduced, bool keepdim) {
  std::vector<std::int64_t> out_sizes;
  for (std::int64_t i = 0; i < self.dim(); ++i) {
    if (!reduced[static_cast<std::size_t>(i)]) {
      out_sizes.push_back(self.size(i));
    } else if (keepdim) {
      out_sizes.push_back(1);
    }
  }
  return out_sizes;
}

// The family's `kind` of self over `dim` (none or empty: every dim), in self's dtype (argmax and argmin:
// int64 indices). A max, min or arg- reduction of no elements goes to the fallback, which raises
// PyTorch's error. With a prologue, the reduction of the chain's result; where the family cannot
// read it (more than 4 merged dims, only size-1 dims reduced) the fallback, which then computes the
// chain first.
template <class Fallback>
at::Tensor reduce(const char* op, const char* kind, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<at::ScalarType> dtype, Fallback fallback_op, const ChainPrologue* prologue = nullptr) {
  check_ocl(self, op, "self");
  const std::string_view k(kind);
  // dtype= (sum(x, dtype=torch.float32) of half or int values): the input cast first, as TensorIterator
  // computes in the result type; only the reductions that take a dtype.
  if (dtype && *dtype != self.scalar_type() && kernel_dtype(*dtype) && plain_dtype(self.scalar_type()) &&
      (k == "sum" || k == "mean" || k == "norm2")) {
    return reduce(op, kind, self.to(*dtype), dim, keepdim, std::nullopt, fallback_op);
  }
  if (!kernel_dtype(self.scalar_type()) || dtype.value_or(self.scalar_type()) != self.scalar_type()) {
    return fallback_op();
  }
  const bool extremum = k == "max" || k == "min" || k == "argmax" || k == "argmin";
  if (extremum && self.numel() == 0) return fallback_op();
  const at::ScalarType out_type = (k == "argmax" || k == "argmin") ? at::kLong : self.scalar_type();
  const std::int64_t nd = self.dim();
  // A 0-dim self takes dim 0 and -1 (maybe_wrap_dim wraps them to 0): one flag for it, not none.
  const std::vector<bool> reduced = reduced_dims(self, dim);
  const std::vector<std::int64_t> out_sizes = reduced_sizes(self, reduced, keepdim);
  at::Tensor out = at::empty(out_sizes, self.options().dtype(out_type));
  if (out.numel() == 0) return out;
  if (self.numel() == 0) return out.fill_(k == "mean" ? NAN : 0.0);  // sum, mean, norm: as PyTorch defines them
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
  if (prologue && (axes.empty() || dims.size() > OCLTUNE_MAX_DIMS)) return fallback_op();
  if (axes.empty()) {  // only dims of size 1 reduced: the values (their index: 0; norm: the magnitude)
    if (out_type == at::kLong) return out.zero_();
    return k == "norm2" ? out.copy_(self.reshape(out_sizes).abs()) : out.copy_(self.reshape(out_sizes));
  }
  // argmax/argmin take adjacent axes (PyTorch asks for one dim or all).
  if (out_type == at::kLong && axes.back() - axes.front() + 1 != static_cast<int>(axes.size())) return fallback_op();
  if (dims.size() > OCLTUNE_MAX_DIMS) {
    // More alternating groups than the family takes (a 5-D or wider tensor): the reduced dims moved
    // last in a copy, so the kept and the reduced dims each merge into one. Not for argmax/argmin,
    // whose index counts in self's own order.
    if (out_type == at::kLong) return fallback_op();
    std::vector<std::int64_t> order, moved_dims;
    for (std::int64_t i = 0; i < nd; ++i) {
      if (!reduced[static_cast<std::size_t>(i)]) order.push_back(i);
    }
    for (std::int64_t i = 0; i < nd; ++i) {
      if (reduced[static_cast<std::size_t>(i)]) {
        moved_dims.push_back(static_cast<std::int64_t>(order.size()));
        order.push_back(i);
      }
    }
    const at::Tensor moved = self.permute(order).contiguous();
    return out.copy_(reduce(op, kind, moved, moved_dims, false, std::nullopt, fallback_op).view(out_sizes));
  }
  const at::Tensor x = self.contiguous();
  const ocltune_tensor in = cl_tensor_of(x), result = cl_tensor_of(out);
  ocltune_reduce_args r;
  ocltune_reduce_args_init(&r, kind, static_cast<int>(dims.size()), dims.data(), static_cast<int>(axes.size()),
                           axes.data(), in.buffer, result.buffer);
  r.dtype = *ocltune_dtype_of(self.scalar_type());
  r.input = in;
  r.output = result;
  std::vector<at::Tensor> packed;  // the prologue's operands, contiguous like x, alive until the call
  if (prologue) r.prologue = prologue->c_form(packed);
  call_ocltune(op, [&] { device_runtime(self.device().index()).reduce(r); });
  return out;
}

at::Tensor sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, std::optional<at::ScalarType> dtype) {
  // A count of true values (the gradients of amax, amin, max and min sum their masks): in float32,
  // exact while the count stays below 2^24, then as the int64 (or dtype=) result PyTorch gives.
  if (self.scalar_type() == at::kBool && self.numel() < (std::int64_t{1} << 24) && self.is_privateuseone()) {
    const at::ScalarType result = dtype.value_or(at::kLong);
    if (plain_dtype(result)) return ocltune_torch::sum(self.to(at::kFloat), dim, keepdim, std::nullopt).to(result);
  }
  return reduce("sum", "sum", self, dim, keepdim, dtype,
                [&] { return fallback<ATEN_OP(sum_dim_IntList)>::call(self, dim, keepdim, dtype); });
}

at::Tensor mean(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                std::optional<at::ScalarType> dtype) {
  return reduce("mean", "mean", self, dim, keepdim, dtype,
                [&] { return fallback<ATEN_OP(mean_dim)>::call(self, dim, keepdim, dtype); });
}

// The out= form, which composites (logsumexp) call: computed as the functional op and moved into out.
at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::Tensor result = ocltune_torch::sum(self, dim, keepdim, dtype);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return reduce("amax", "max", self, dim, keepdim, std::nullopt,
                [&] { return fallback<ATEN_OP(amax)>::call(self, dim, keepdim); });
}
at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  return reduce("amin", "min", self, dim, keepdim, std::nullopt,
                [&] { return fallback<ATEN_OP(amin)>::call(self, dim, keepdim); });
}
at::Tensor max_all(const at::Tensor& self) {
  return reduce("max", "max", self, std::nullopt, false, std::nullopt,
                [&] { return fallback<ATEN_OP(max)>::call(self); });
}
at::Tensor min_all(const at::Tensor& self) {
  return reduce("min", "min", self, std::nullopt, false, std::nullopt,
                [&] { return fallback<ATEN_OP(min)>::call(self); });
}

// argmax/argmin over one dim, or of the flattened tensor (dim None: keepdim keeps every dim as 1).
at::Tensor argmax(const at::Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  auto slow = [&] { return fallback<ATEN_OP(argmax)>::call(self, dim, keepdim); };
  if (dim) return reduce("argmax", "argmax", self, at::IntArrayRef(*dim), keepdim, std::nullopt, slow);
  return reduce("argmax", "argmax", self, std::nullopt, keepdim, std::nullopt, slow);
}
at::Tensor argmin(const at::Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  auto slow = [&] { return fallback<ATEN_OP(argmin)>::call(self, dim, keepdim); };
  if (dim) return reduce("argmin", "argmin", self, at::IntArrayRef(*dim), keepdim, std::nullopt, slow);
  return reduce("argmin", "argmin", self, std::nullopt, keepdim, std::nullopt, slow);
}

// max.dim / min.dim: the index from argmax/argmin, the value gathered at it (so both agree).
std::tuple<at::Tensor, at::Tensor> extremum_dim(const char* kind, const at::Tensor& self, std::int64_t dim,
                                                bool keepdim) {
  const std::int64_t d = at::maybe_wrap_dim(dim, self.dim());
  at::Tensor index = reduce(kind, kind, self, at::IntArrayRef(d), true, std::nullopt, [&] { return at::Tensor(); });
  if (!index.defined()) return {};
  at::Tensor values = self.dim() == 0 ? self.clone() : self.gather(d, index);
  if (!keepdim && self.dim() > 0) {
    index = index.squeeze(d);
    values = values.squeeze(d);
  }
  return {values, index};
}
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, std::int64_t dim, bool keepdim) {
  auto r = extremum_dim("argmax", self, dim, keepdim);
  if (!std::get<0>(r).defined()) return fallback<ATEN_OP(max_dim)>::call(self, dim, keepdim);
  return r;
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, std::int64_t dim, bool keepdim) {
  auto r = extremum_dim("argmin", self, dim, keepdim);
  if (!std::get<0>(r).defined()) return fallback<ATEN_OP(min_dim)>::call(self, dim, keepdim);
  return r;
}

// torch.norm and torch.linalg.vector_norm: order 2 is the family's norm2; the other orders are
// composed on the device of abs, amax/amin, sum and pow (16-bit inputs in float32, PyTorch's opmath
// type, rounded once at the end): inf max |x|, -inf min |x|, 0 the count of non-zeros, p
// (sum |x|^p)^(1/p), 1 without the powers.
at::Tensor vector_norm(const at::Tensor& self, const at::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<at::ScalarType> dtype) {
  auto slow = [&] { return fallback<ATEN_OP(linalg_vector_norm)>::call(self, ord, dim, keepdim, dtype); };
  if (ord.isComplex()) return slow();
  const double p = ord.toDouble();
  if (p == 2.0) return reduce("linalg_vector_norm", "norm2", self, dim, keepdim, dtype, slow);
  check_ocl(self, "linalg_vector_norm", "self");
  const at::ScalarType result = dtype.value_or(self.scalar_type());
  // An empty reduction (PyTorch's own errors for inf and -inf) and types the kernels lack: the CPU.
  if (!self.is_floating_point() || !kernel_dtype(self.scalar_type()) || !kernel_dtype(result) || self.numel() == 0) {
    return slow();
  }
  const at::Tensor x = self.to(at::kFloat).abs();
  at::Tensor norm;
  if (std::isinf(p)) {
    norm = p > 0 ? ocltune_torch::amax(x, dim.value_or(at::IntArrayRef{}), keepdim)
                 : ocltune_torch::amin(x, dim.value_or(at::IntArrayRef{}), keepdim);
  } else if (p == 0.0) {
    norm = ocltune_torch::sum(x.ne(0).to(at::kFloat), dim, keepdim, std::nullopt);
  } else if (p == 1.0) {
    norm = ocltune_torch::sum(x, dim, keepdim, std::nullopt);
  } else {
    norm = ocltune_torch::sum(x.pow(p), dim, keepdim, std::nullopt).pow(1.0 / p);
  }
  return norm.to(result);
}

// var and std: the mean, then the sum of squared deviations over N - correction, in self's dtype; the
// two passes on the device where PyTorch's CPU runs Welford's (agreeing to rounding).
at::Tensor variance(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                    bool keepdim) {
  if (!self.is_floating_point() || !kernel_dtype(self.scalar_type())) return at::Tensor();
  // No elements: NaN in the result's shape, as PyTorch gives (0 / 0 degrees of freedom).
  if (self.numel() == 0) return ocltune_torch::sum(self, dim, keepdim, std::nullopt).fill_(NAN);
  std::int64_t n = 1;
  if (!dim || dim->empty()) {
    n = self.numel();
  } else {
    for (const std::int64_t d : *dim) n *= self.dim() == 0 ? 1 : self.size(at::maybe_wrap_dim(d, self.dim()));
  }
  const double dof = std::max(0.0, static_cast<double>(n) - (correction ? correction->toDouble() : 1.0));
  if (self.dim() > 4 && dim && !dim->empty()) {
    // Wider than the elementwise family's broadcast takes: the reduced dims moved last in a copy and
    // viewed as rows of n, whose variances are reshaped to the result's sizes.
    std::vector<bool> reduced(static_cast<std::size_t>(self.dim()), false);
    for (const std::int64_t d : *dim) reduced[static_cast<std::size_t>(at::maybe_wrap_dim(d, self.dim()))] = true;
    std::vector<std::int64_t> order, out_sizes;
    for (std::int64_t i = 0; i < self.dim(); ++i) {
      const bool r = reduced[static_cast<std::size_t>(i)];
      if (!r) order.push_back(i);
      if (!r || keepdim) out_sizes.push_back(r ? 1 : self.size(i));
    }
    for (std::int64_t i = 0; i < self.dim(); ++i) {
      if (reduced[static_cast<std::size_t>(i)]) order.push_back(i);
    }
    const at::Tensor rows = self.permute(order).contiguous().view({self.numel() / n, n});
    return variance(rows, std::vector<std::int64_t>{1}, correction, false).view(out_sizes);
  }
  const at::Tensor centred = self - ocltune_torch::mean(self, dim, true, std::nullopt);
  at::Tensor out = ocltune_torch::sum(centred * centred, dim, keepdim, std::nullopt);
  return out.div_(dof);
}
at::Tensor var(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
               bool keepdim) {
  at::Tensor out = variance(self, dim, correction, keepdim);
  return out.defined() ? out : fallback<ATEN_OP(var_correction)>::call(self, dim, correction, keepdim);
}
at::Tensor std_dev(const at::Tensor& self, at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                   bool keepdim) {
  at::Tensor out = variance(self, dim, correction, keepdim);
  return out.defined() ? out.sqrt_() : fallback<ATEN_OP(std_correction)>::call(self, dim, correction, keepdim);
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

// ---- ocltune::reduce_prologue ----

constexpr const char* kPrologueOp = "ocltune::reduce_prologue";

// The family's kind of a reduce_prologue kind (the aten op it stands for).
const char* prologue_family_kind(std::string_view kind) {
  if (kind == "sum") return "sum";
  if (kind == "mean") return "mean";
  if (kind == "amax") return "max";
  TORCH_CHECK(kind == "amin", kPrologueOp, ": kind '", kind, "' is not one of sum, mean, amax, amin");
  return "min";
}

// The reduction of the chain's result as eager computes it: the chain (one kernel), then the aten op.
at::Tensor reduce_after_chain(const at::Tensor& chain, std::string_view kind, at::OptionalIntArrayRef dim,
                              bool keepdim) {
  const at::IntArrayRef all = dim.value_or(at::IntArrayRef{});
  if (kind == "sum") return at::sum(chain, dim, keepdim);
  if (kind == "mean") return at::mean(chain, dim, keepdim);
  return kind == "amax" ? at::amax(chain, all, keepdim) : at::amin(chain, all, keepdim);
}

at::Tensor reduce_prologue(const at::Tensor& input, const std::vector<std::string>& ops,
                           const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                           at::IntArrayRef reversed, c10::string_view kind, at::OptionalIntArrayRef dim, bool keepdim) {
  check_ocl(input, kPrologueOp, "input");
  const std::string_view k(kind.data(), kind.size());
  const char* family_kind = prologue_family_kind(k);
  const ChainPrologue prologue{ops, operands, scalars, reversed};
  prologue.check(kPrologueOp, input);
  return reduce(
      kPrologueOp, family_kind, input, dim, keepdim, std::nullopt,
      [&] { return reduce_after_chain(prologue.apply(input), k, dim, keepdim); }, &prologue);
}

// Shapes only, for the fake tensors torch.compile traces with.
at::Tensor reduce_prologue_meta(const at::Tensor& input, const std::vector<std::string>& ops,
                                const c10::List<std::optional<at::Tensor>>& operands, c10::ArrayRef<double> scalars,
                                at::IntArrayRef reversed, c10::string_view kind, at::OptionalIntArrayRef dim,
                                bool keepdim) {
  prologue_family_kind(std::string_view(kind.data(), kind.size()));
  ChainPrologue{ops, operands, scalars, reversed}.check(kPrologueOp, input);
  return at::empty(reduced_sizes(input, reduced_dims(input, dim), keepdim), input.options());
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  m.def(
      "reduce_prologue(Tensor input, str[] ops, Tensor?[] operands, float[] scalars, int[] reversed, str kind, "
      "int[]? dim, bool keepdim) -> Tensor");
}

TORCH_LIBRARY_IMPL(ocltune, PrivateUse1, m) { m.impl("reduce_prologue", &reduce_prologue); }

TORCH_LIBRARY_IMPL(ocltune, Meta, m) { m.impl("reduce_prologue", &reduce_prologue_meta); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sum.dim_IntList", sum);
  m.impl("sum.IntList_out", sum_out);
  m.impl("mean.dim", mean);
  m.impl("amax", amax);
  m.impl("amin", amin);
  m.impl("max", max_all);
  m.impl("min", min_all);
  m.impl("max.dim", max_dim);
  m.impl("min.dim", min_dim);
  m.impl("argmax", argmax);
  m.impl("argmin", argmin);
  m.impl("linalg_vector_norm", vector_norm);
  m.impl("var.correction", var);
  m.impl("std.correction", std_dev);
  m.impl("_softmax", softmax_op);
  m.impl("_log_softmax", log_softmax_op);
}

}  // namespace ocltune_torch
