// Small compositions on the device for the neural-network ops: elementwise calls with broadcasting
// and sums and maxima over dims.
#include "ocltune_torch/csrc/ops/device_math.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/elementwise.h"

namespace ocltune_torch::device_math {
namespace {

void check_operand(const at::Tensor& t, const at::Tensor& out) {
  TORCH_INTERNAL_ASSERT(is_ocl(t) && t.device() == out.device(), "ocltune_torch: device_math on another device");
  TORCH_INTERNAL_ASSERT(t.scalar_type() == out.scalar_type() && kernel_dtype(t.scalar_type()),
                        "ocltune_torch: device_math operands of ", t.scalar_type(), " and ", out.scalar_type());
}

// out = op(a [, b | scalar]) on the elementwise generator; a and b already expanded to out's sizes.
void enqueue(const char* op, const at::Tensor& out, const at::Tensor& a, const at::Tensor* b, double scalar,
             bool reversed) {
  TORCH_INTERNAL_ASSERT(out.is_non_overlapping_and_dense(), "ocltune_torch: device_math writes dense results");
  check_operand(a, out);
  if (b) check_operand(*b, out);
  TORCH_CHECK(b || std::isfinite(static_cast<float>(scalar)), "ocltune_torch: ", op, " with a non-finite scalar");
  const ElementwiseOp family_op{.name = op, .family = op};
  const bool ran =
      b ? elementwise_into(family_op, out, a, *b) : elementwise_scalar_into(family_op, out, a, scalar, reversed);
  TORCH_CHECK(ran, "ocltune_torch: an elementwise step of ", out.sizes(), " has more than ", OCLTUNE_MAX_DIMS,
              " dims after merging");
}

}  // namespace

at::Tensor unary(const char* op, const at::Tensor& a) {
  at::Tensor out = at::empty(a.sizes(), a.options());
  enqueue(op, out, a, nullptr, 0.0, false);
  return out;
}

void unary_into(const at::Tensor& out, const char* op, const at::Tensor& a) {
  enqueue(op, out, a.expand(out.sizes()), nullptr, 0.0, false);
}

void binary_into(const at::Tensor& out, const char* op, const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor ea = a.expand(out.sizes()), eb = b.expand(out.sizes());
  enqueue(op, out, ea, &eb, 0.0, false);
}

at::Tensor binary(const char* op, const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = at::empty(at::infer_size(a.sizes(), b.sizes()), a.options());
  binary_into(out, op, a, b);
  return out;
}

void with_scalar_into(const at::Tensor& out, const char* op, const at::Tensor& a, double scalar, bool reversed) {
  enqueue(op, out, a.expand(out.sizes()), nullptr, scalar, reversed);
}

at::Tensor with_scalar(const char* op, const at::Tensor& a, double scalar, bool reversed) {
  at::Tensor out = at::empty(a.sizes(), a.options());
  enqueue(op, out, a, nullptr, scalar, reversed);
  return out;
}

namespace {

// kind "sum", "mean" or "max" of x over dims.
at::Tensor reduce(const char* kind, const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  TORCH_INTERNAL_ASSERT(is_ocl(x) && kernel_dtype(x.scalar_type()), "ocltune_torch: device_math::reduce of ",
                        x.scalar_type());
  const std::int64_t nd = x.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(nd), false);
  for (std::int64_t d : dims) reduced[static_cast<std::size_t>(d < 0 ? d + nd : d)] = true;
  std::vector<std::int64_t> out_sizes;
  for (std::int64_t i = 0; i < nd; ++i) {
    if (!reduced[static_cast<std::size_t>(i)]) {
      out_sizes.push_back(x.size(i));
    } else if (keepdim) {
      out_sizes.push_back(1);
    }
  }
  at::Tensor out = at::empty(out_sizes, x.options());
  if (out.numel() == 0) return out;
  TORCH_CHECK(x.numel() != 0 || std::string_view(kind) != "max", "ocltune_torch: a maximum over no elements");
  if (x.numel() == 0) return std::string_view(kind) == "mean" ? out.fill_(NAN) : out.zero_();
  // Merged dims: size-1 dims dropped, neighbours reduced alike joined (the reduce family takes 4).
  std::vector<std::int64_t> merged;
  std::vector<bool> roles;
  for (std::int64_t i = 0; i < nd; ++i) {
    if (x.size(i) == 1) continue;
    const bool r = reduced[static_cast<std::size_t>(i)];
    if (!merged.empty() && roles.back() == r) {
      merged.back() *= x.size(i);
    } else {
      merged.push_back(x.size(i));
      roles.push_back(r);
    }
  }
  std::vector<int> axes;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    if (roles[i]) axes.push_back(static_cast<int>(i));
  }
  const at::Tensor packed = x.contiguous();
  if (axes.empty()) return out.copy_(packed.reshape(out_sizes));
  TORCH_CHECK(merged.size() <= OCLTUNE_MAX_DIMS, "ocltune_torch: a ", kind, " over ", x.sizes(), " keeps more than ",
              OCLTUNE_MAX_DIMS, " dims after merging");
  const ocltune_tensor in = cl_tensor_of(packed), result = cl_tensor_of(out);
  ocltune_reduce_args r;
  ocltune_reduce_args_init(&r, kind, static_cast<int>(merged.size()), merged.data(), static_cast<int>(axes.size()),
                           axes.data(), in.buffer, result.buffer);
  r.dtype = *ocltune_dtype_of(x.scalar_type());
  r.input = in;
  r.output = result;
  call_ocltune(kind, [&] { device_runtime(x.device().index()).reduce(r); });
  return out;
}

}  // namespace

at::Tensor sum(const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce("sum", x, dims, keepdim);
}

at::Tensor mean(const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce("mean", x, dims, keepdim);
}

at::Tensor amax(const at::Tensor& x, const std::vector<std::int64_t>& dims, bool keepdim) {
  return reduce("max", x, dims, keepdim);
}

bool same_kernel_dtype(at::ScalarType dtype, std::initializer_list<const at::Tensor*> tensors) {
  if (!kernel_dtype(dtype)) return false;
  return std::all_of(tensors.begin(), tensors.end(),
                     [&](const at::Tensor* t) { return t->defined() && is_ocl(*t) && t->scalar_type() == dtype; });
}

}  // namespace ocltune_torch::device_math
