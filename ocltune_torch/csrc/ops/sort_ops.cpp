// sort (stable or not, ascending or descending) and topk on a plain kernel (plain/kernels/plain_sort.cl):
// a stable merge sort per line along the dim, through the tensors' own strides, then the first k
// elements of each line (all for sort). argsort, msort and the sort of torch.sort's default reach
// sort.stable; the gradients of both (index-based) run on the device's scatter and gather kernels.
#include <optional>
#include <tuple>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// values[..., :k] and indices[..., :k] (along dim) = the first k of each line of self sorted along dim.
// values and indices have self's sizes with k along dim, any strides.
void sort_into(const at::Tensor& self, std::int64_t dim, bool descending, std::int64_t k, const at::Tensor& values,
               const at::Tensor& indices) {
  if (values.numel() == 0) return;
  if (may_overlap(values, self) || may_overlap(indices, self)) {
    sort_into(self.clone(), dim, descending, k, values, indices);
    return;
  }
  const std::int64_t d = self.dim() == 0 ? 0 : at::maybe_wrap_dim(dim, self.dim());
  const std::int64_t n = self.dim() == 0 ? 1 : self.size(d);
  std::vector<std::int64_t> sizes = self.sizes().vec(), a_strides = self.strides().vec(),
                            v_strides = values.strides().vec(), i_strides = indices.strides().vec();
  std::int64_t a_step = 0, v_step = 0, i_step = 0;
  if (self.dim() > 0) {
    const auto at_d = static_cast<std::size_t>(d);
    a_step = a_strides[at_d];
    v_step = v_strides[at_d];
    i_step = i_strides[at_d];
    sizes[at_d] = 1;
  }
  // The lines in row-major order, so that line i's scratch is [2 n i, 2 n (i + 1)).
  const PlainLayout layout = plain_layout_of(sizes, {a_strides, v_strides, i_strides},
                                             {element_offset(self), element_offset(values), element_offset(indices)},
                                             /*keep_order=*/true);
  const at::ScalarType key = at::isFloatingType(self.scalar_type()) ? at::kFloat : at::kLong;
  at::Tensor scratch_keys = at::empty({layout.shape.numel, 2 * n}, self.options().dtype(key));
  at::Tensor scratch_index = at::empty({layout.shape.numel, 2 * n}, self.options().dtype(at::kLong));
  const int device = self.device().index();
  cl_program program =
      plain_program(device, "plain_sort.cl", {{"O", values.scalar_type()}, {"K", key}, {"A", self.scalar_type()}});
  PlainLaunch launch(device, program, "sort_lines");
  launch.arg(layout.shape).tensor(self).arg(layout.operands[0]).arg<cl_long>(a_step).arg<cl_long>(n).arg<cl_long>(k);
  launch.tensor(values).arg(layout.operands[1]).arg<cl_long>(v_step);
  launch.tensor(indices).arg(layout.operands[2]).arg<cl_long>(i_step);
  launch.tensor_at(scratch_keys).tensor_at(scratch_index).arg<cl_int>(descending ? 1 : 0);
  launch.run(layout.shape.numel);
}

std::vector<std::int64_t> sizes_with(const at::Tensor& self, std::int64_t dim, std::int64_t k) {
  std::vector<std::int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[static_cast<std::size_t>(at::maybe_wrap_dim(dim, self.dim()))] = k;
  return sizes;
}

std::int64_t line_length(const at::Tensor& self, std::int64_t dim) {
  return self.dim() == 0 ? 1 : self.size(at::maybe_wrap_dim(dim, self.dim()));
}

std::tuple<at::Tensor, at::Tensor> sort_stable(const at::Tensor& self, std::optional<bool> stable, std::int64_t dim,
                                               bool descending) {
  check_ocl(self, "sort", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP2(sort, stable)>::call(self, stable, dim, descending);
  at::Tensor values = at::empty(self.sizes(), self.options());
  at::Tensor indices = at::empty(self.sizes(), self.options().dtype(at::kLong));
  sort_into(self, dim, descending, line_length(self, dim), values, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> sort_values_stable(const at::Tensor& self, std::optional<bool> stable,
                                                        std::int64_t dim, bool descending, at::Tensor& values,
                                                        at::Tensor& indices) {
  check_ocl(self, "sort.values_stable", "self");
  if (!plain_dtype(self.scalar_type()) || values.scalar_type() != self.scalar_type() ||
      indices.scalar_type() != at::kLong || values.device() != self.device() || indices.device() != self.device()) {
    return fallback<ATEN_OP2(sort, values_stable)>::call(self, stable, dim, descending, values, indices);
  }
  at::native::resize_output(values, self.sizes());
  at::native::resize_output(indices, self.sizes());
  sort_into(self, dim, descending, line_length(self, dim), values, indices);
  return {values, indices};
}

void check_k(const at::Tensor& self, std::int64_t k, std::int64_t dim) {
  TORCH_CHECK(k >= 0 && k <= line_length(self, dim), "selected index k out of range");
}

std::tuple<at::Tensor, at::Tensor> topk(const at::Tensor& self, c10::SymInt k_sym, std::int64_t dim, bool largest,
                                        bool sorted) {
  check_ocl(self, "topk", "self");
  if (!plain_dtype(self.scalar_type())) {
    return fallback_symint<ATEN_OP(topk)>::call(self, k_sym, dim, largest, sorted);
  }
  const std::int64_t k = k_sym.expect_int();
  check_k(self, k, dim);
  const std::vector<std::int64_t> sizes = sizes_with(self, dim, k);
  at::Tensor values = at::empty(sizes, self.options());
  at::Tensor indices = at::empty(sizes, self.options().dtype(at::kLong));
  sort_into(self, dim, largest, k, values, indices);  // sorted either way (sorted=False allows any order)
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> topk_values(const at::Tensor& self, c10::SymInt k_sym, std::int64_t dim,
                                                 bool largest, bool sorted, at::Tensor& values, at::Tensor& indices) {
  check_ocl(self, "topk.values", "self");
  if (!plain_dtype(self.scalar_type()) || values.scalar_type() != self.scalar_type() ||
      indices.scalar_type() != at::kLong || values.device() != self.device() || indices.device() != self.device()) {
    return fallback_symint<ATEN_OP2(topk, values)>::call(self, k_sym, dim, largest, sorted, values, indices);
  }
  const std::int64_t k = k_sym.expect_int();
  check_k(self, k, dim);
  const std::vector<std::int64_t> sizes = sizes_with(self, dim, k);
  at::native::resize_output(values, sizes);
  at::native::resize_output(indices, sizes);
  sort_into(self, dim, largest, k, values, indices);
  return {values, indices};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("sort.stable", sort_stable);
  m.impl("sort.values_stable", sort_values_stable);
  m.impl("topk", topk);
  m.impl("topk.values", topk_values);
}

}  // namespace ocltune_torch
