// cumsum and cumprod on a plain kernel (plain/kernels/plain_scan.cl): every line along the dim walked in
// order by one work item, reading and writing through the tensors' own strides. The result type
// follows PyTorch: `dtype` when given, else int64 for integer and bool inputs, else the input's.
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

at::ScalarType result_type(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  if (dtype) return *dtype;
  return at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong : self.scalar_type();
}

// out = the running sum (or product) of self along dim; out has self's sizes and any strides.
void scan_into(const at::Tensor& self, std::int64_t dim, bool product, const at::Tensor& out) {
  if (out.numel() == 0) return;
  if (may_overlap(out, self) && !out.is_same(self)) {  // a partial overlap: scan a copy
    scan_into(self.clone(), dim, product, out);
    return;
  }
  const std::int64_t d = at::maybe_wrap_dim(dim, self.dim());
  const std::int64_t n = self.dim() == 0 ? 1 : self.size(d);
  // The lines: the scanned dim at size 1, its strides passed apart.
  std::vector<std::int64_t> sizes = self.sizes().vec(), self_strides = self.strides().vec(),
                            out_strides = out.strides().vec();
  std::int64_t self_step = 0, out_step = 0;
  if (self.dim() > 0) {
    self_step = self_strides[static_cast<std::size_t>(d)];
    out_step = out_strides[static_cast<std::size_t>(d)];
    sizes[static_cast<std::size_t>(d)] = 1;
  }
  const PlainLayout layout =
      plain_layout_of(sizes, {out_strides, self_strides}, {element_offset(out), element_offset(self)});
  const int device = self.device().index();
  const at::ScalarType accumulate = at::isFloatingType(out.scalar_type()) ? at::kFloat : at::kLong;
  cl_program program =
      plain_program(device, "plain_scan.cl", {{"O", out.scalar_type()}, {"K", accumulate}, {"A", self.scalar_type()}});
  PlainLaunch launch(device, program, "cumulative");
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]).arg<cl_long>(out_step);
  launch.tensor(self).arg(layout.operands[1]).arg<cl_long>(self_step).arg<cl_long>(n).arg<cl_int>(product ? 1 : 0);
  launch.run(layout.shape.numel);
}

// Whether the plain kernel can take this call (float64 and complex fall back).
bool plain_scan(const at::Tensor& self, at::ScalarType result) {
  return plain_dtype(self.scalar_type()) && plain_dtype(result) && result != at::kBool;
}

// The three entry points of one scan (Product: cumprod, else cumsum), each with the ATen op it falls
// back to (Op::name, "aten::cumsum" and so on, names it in errors).
template <class Op, bool Product>
at::Tensor scan(const at::Tensor& self, std::int64_t dim, std::optional<at::ScalarType> dtype) {
  check_ocl(self, Op::name, "self");
  const at::ScalarType result = result_type(self, dtype);
  if (!plain_scan(self, result)) return fallback<Op>::call(self, dim, dtype);
  at::Tensor out = at::empty(self.sizes(), self.options().dtype(result));
  scan_into(self, dim, Product, out);
  return out;
}

template <class Op, bool Product>
at::Tensor& scan_out(const at::Tensor& self, std::int64_t dim, std::optional<at::ScalarType> dtype, at::Tensor& out) {
  check_ocl(self, Op::name, "self");
  check_ocl(out, Op::name, "out");
  const at::ScalarType result = result_type(self, dtype);
  if (!plain_scan(self, result) || out.scalar_type() != result) return fallback<Op>::call(self, dim, dtype, out);
  at::native::resize_output(out, self.sizes());
  scan_into(self, dim, Product, out);
  return out;
}

template <class Op, bool Product>
at::Tensor& scan_(at::Tensor& self, std::int64_t dim, std::optional<at::ScalarType> dtype) {
  check_ocl(self, Op::name, "self");
  TORCH_CHECK(!dtype || *dtype == self.scalar_type(), "provided dtype must match the dtype of self tensor in ",
              Product ? "cumprod" : "cumsum");
  if (!plain_scan(self, self.scalar_type())) return fallback<Op>::call(self, dim, dtype);
  scan_into(self, dim, Product, self);
  return self;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cumsum", scan<ATEN_OP(cumsum), false>);
  m.impl("cumsum.out", scan_out<ATEN_OP(cumsum_out), false>);
  m.impl("cumsum_", scan_<ATEN_OP(cumsum_), false>);
  m.impl("cumprod", scan<ATEN_OP(cumprod), true>);
  m.impl("cumprod.out", scan_out<ATEN_OP(cumprod_out), true>);
  m.impl("cumprod_", scan_<ATEN_OP(cumprod_), true>);
}

}  // namespace ocltune_torch
