// Data movement on plain kernels: cat, flip, roll, arange, nonzero and masked_select; masked_scatter_
// and unfold_backward composed of them, index_put_ and add_; tril and triu of a copy and masked_fill_.
//
// cat and roll are copies into slices of the result (the copy kernel converts dtypes and takes any
// strides); flip is one copy through negated strides; nonzero and masked_select count set elements
// per block on the device, read the counts (their result's size must be known) and write in order.
#include <cmath>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Operators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

std::vector<std::int64_t> to_vector(at::IntArrayRef a) { return {a.begin(), a.end()}; }

// ---- cat ----

at::Tensor cat(const at::ITensorListRef& list, std::int64_t dim) {
  std::vector<at::Tensor> tensors(list.begin(), list.end());
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  // PyTorch skips 1-D tensors of size 0 (the legacy empty tensor) in any cat.
  const at::Tensor* like = nullptr;
  for (const at::Tensor& t : tensors) {
    if (!(t.dim() == 1 && t.numel() == 0)) {
      like = &t;
      break;
    }
  }
  at::ScalarType dtype = tensors[0].scalar_type();
  for (const at::Tensor& t : tensors) dtype = at::promote_types(dtype, t.scalar_type());
  const at::Tensor& first = like ? *like : tensors[0];
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    check_ocl(tensors[i], "cat", "tensors");
    check_same_device(first, tensors[i], "cat", "tensors");
    TORCH_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  }
  if (!plain_dtype(dtype)) return fallback<ATEN_OP(cat)>::call(list, dim);
  if (!like) return at::empty({0}, first.options().dtype(dtype));
  dim = at::maybe_wrap_dim(dim, like->dim());
  std::vector<std::int64_t> sizes = to_vector(like->sizes());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) continue;
    TORCH_CHECK(t.dim() == like->dim(), "Tensors must have same number of dimensions: got ", like->dim(), " and ",
                t.dim());
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      TORCH_CHECK(d == dim || t.size(d) == like->size(d), "Sizes of tensors must match except in dimension ", dim,
                  ". Expected size ", like->size(d), " but got size ", t.size(d), " for tensor number ", i,
                  " in the list.");
    }
    total += t.size(dim);
  }
  sizes[static_cast<std::size_t>(dim)] = total;
  at::Tensor out = at::empty(sizes, like->options().dtype(dtype));
  std::int64_t at_dim = 0;
  for (const at::Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;
    if (t.size(dim) > 0) out.narrow(dim, at_dim, t.size(dim)).copy_(t);
    at_dim += t.size(dim);
  }
  return out;
}

// ---- flip, roll ----

at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  check_ocl(self, "flip", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(flip)>::call(self, dims);
  std::vector<bool> flipped(static_cast<std::size_t>(self.dim()), false);
  for (std::int64_t d : dims) {
    const std::int64_t w = at::maybe_wrap_dim(d, self.dim());
    TORCH_CHECK(!flipped[static_cast<std::size_t>(w)], "dims has duplicates, original flip dims size=", dims.size());
    flipped[static_cast<std::size_t>(w)] = true;
  }
  at::Tensor out = at::empty(self.sizes(), self.options());
  if (out.numel() == 0) return out;
  // self read through negated strides from the last element of each flipped dim.
  std::vector<std::int64_t> strides = to_vector(self.strides());
  std::int64_t offset = element_offset(self);
  for (std::size_t d = 0; d < strides.size(); ++d) {
    if (!flipped[d]) continue;
    offset += (self.size(static_cast<std::int64_t>(d)) - 1) * strides[d];
    strides[d] = -strides[d];
  }
  const int device = self.device().index();
  const PlainLayout layout =
      plain_layout_of(to_vector(out.sizes()), {to_vector(out.strides()), strides}, {element_offset(out), offset});
  cl_program program = plain_elementwise_program(device,
                                                 {{"O", out.scalar_type()},
                                                  {"K", out.scalar_type()},
                                                  {"A", self.scalar_type()},
                                                  {"B", at::kBool},
                                                  {"C", at::kBool}},
                                                 "copy");
  PlainLaunch launch(device, program, "copy");
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]).tensor(self).arg(layout.operands[1]);
  launch << scalar_arg(0, out.scalar_type()) << scalar_arg(0, out.scalar_type());
  launch.run(layout.shape.numel);
  return out;
}

// out = self rolled by `shift` along dim: two slice copies.
void roll_into(const at::Tensor& out, const at::Tensor& self, std::int64_t shift, std::int64_t dim) {
  const std::int64_t n = self.size(dim);
  const std::int64_t s = ((shift % n) + n) % n;
  if (s == 0) {
    out.copy_(self);
    return;
  }
  out.narrow(dim, s, n - s).copy_(self.narrow(dim, 0, n - s));
  out.narrow(dim, 0, s).copy_(self.narrow(dim, n - s, s));
}

at::Tensor roll(const at::Tensor& self, at::IntArrayRef shifts, at::IntArrayRef dims) {
  check_ocl(self, "roll", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(roll)>::call(self, shifts, dims);
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {  // the flattened tensor
    at::Tensor flat = self.contiguous().view({-1});
    at::Tensor out = at::empty_like(flat);
    if (flat.numel() > 0) roll_into(out, flat, shifts[0], 0);
    return out.view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  at::Tensor current = self;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = at::maybe_wrap_dim(dims[i], self.dim());
    at::Tensor out = at::empty(self.sizes(), self.options());
    if (self.numel() > 0) roll_into(out, current, shifts[i], d);
    current = out;
  }
  return dims.empty() ? self.clone() : current;
}

// ---- arange ----

at::Tensor& arange_out(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  check_ocl(out, "arange", "out");
  const at::ScalarType type = out.scalar_type();
  if (!plain_dtype(type) || type == at::kBool) return fallback<ATEN_OP(arange_start_out)>::call(start, end, step, out);
  const double xstart = start.to<double>(), xend = end.to<double>(), xstep = step.to<double>();
  TORCH_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(xstart) && std::isfinite(xend), "unsupported range: ", xstart, " -> ", xend);
  TORCH_CHECK(((xstep > 0) && (xend >= xstart)) || ((xstep < 0) && (xend <= xstart)),
              "upper bound and larger bound inconsistent with step sign");
  double size_d;
  if (type == at::kLong) {  // PyTorch's exact integer count
    const std::int64_t s = start.to<std::int64_t>(), e = end.to<std::int64_t>(), st = step.to<std::int64_t>();
    TORCH_CHECK(st != 0, "step must be nonzero");
    const std::int64_t sgn = (st > 0) - (st < 0);
    size_d = static_cast<double>((e - s + st - sgn) / st);  // integer division, as PyTorch's
  } else {
    size_d = std::ceil((xend - xstart) / xstep);
  }
  TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<std::int64_t>::max()),
              "invalid size, possible overflow?");
  const auto size = static_cast<std::int64_t>(size_d);
  if (out.numel() != size) out.resize_({size});
  if (size == 0) return out;
  at::Tensor dense = out.is_contiguous() ? out : at::empty({size}, out.options());
  const int device = out.device().index();
  const at::ScalarType compute = at::isFloatingType(type) ? at::kFloat : at::kLong;
  cl_program program =
      plain_program(device, "plain_compact.cl", {{"O", type}, {"K", compute}, {"A", at::kBool}, {"B", at::kBool}});
  PlainLaunch launch(device, program, "arange");
  launch.arg<cl_long>(size).tensor(dense).arg<cl_long>(element_offset(dense));
  launch << scalar_arg(start, compute) << scalar_arg(step, compute);
  launch.run(size);
  if (!dense.is_same(out)) out.copy_(dense);
  return out;
}

// ---- nonzero, masked_select ----

struct Blocks {
  std::int64_t block = 1, count = 0;
  at::Tensor offsets;  // on the device: the first output row of each block
  std::int64_t total = 0;
};

// Counts the set elements of `a` (seen with `layout`, row-major) per block; offsets and total.
Blocks count_set(const at::Tensor& a, const PlainLayout& layout, const at::Tensor& like) {
  Blocks b;
  const std::int64_t n = layout.shape.numel;
  b.block = std::max<std::int64_t>(256, (n + 4095) / 4096);
  b.count = (n + b.block - 1) / b.block;
  const int device = like.device().index();
  at::Tensor counts = at::empty({b.count}, like.options().dtype(at::kLong));
  cl_program program = plain_program(device, "plain_compact.cl",
                                     {{"A", a.scalar_type()}, {"B", at::kBool}, {"O", at::kLong}, {"K", at::kLong}});
  PlainLaunch launch(device, program, "count_blocks");
  launch.arg(layout.shape).tensor(a).arg(layout.operands[0]).arg<cl_long>(b.block).arg<cl_long>(b.count);
  launch.tensor_at(counts).run(b.count);
  at::Tensor host = counts.cpu();
  at::Tensor offsets = at::empty({b.count}, host.options());
  const std::int64_t* c = host.const_data_ptr<std::int64_t>();
  std::int64_t* o = offsets.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < b.count; ++i) {
    o[i] = b.total;
    b.total += c[i];
  }
  b.offsets = offsets.to(like.device());
  return b;
}

at::Tensor nonzero(const at::Tensor& self) {
  check_ocl(self, "nonzero", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(nonzero)>::call(self);
  TORCH_CHECK(self.dim() <= kPlainMaxDims, "ocltune_torch: nonzero of more than ", kPlainMaxDims, " dims");
  const std::int64_t nd = self.dim();
  if (self.numel() == 0) return at::empty({0, nd}, self.options().dtype(at::kLong));
  const PlainLayout layout = plain_layout(self.sizes(), {&self}, /*keep_order=*/true);
  const Blocks b = count_set(self, layout, self);
  // [nd, total] written, [total, nd] returned: column-major, as the CPU's and CUDA's nonzero and the meta
  // function torch.compile traces with lay it out (each index column contiguous for index_put_).
  at::Tensor columns = at::empty({nd, b.total}, self.options().dtype(at::kLong));
  at::Tensor out = columns.t();
  if (b.total == 0 || nd == 0) return out;
  KernelShape dims;
  dims.ndim = nd;
  dims.numel = self.numel();
  for (std::int64_t d = 0; d < nd; ++d) dims.sizes[d] = self.size(d);
  const int device = self.device().index();
  cl_program program = plain_program(device, "plain_compact.cl",
                                     {{"A", self.scalar_type()}, {"B", at::kBool}, {"O", at::kLong}, {"K", at::kLong}});
  PlainLaunch launch(device, program, "nonzero_write");
  launch.arg(layout.shape).tensor(self).arg(layout.operands[0]).arg<cl_long>(b.block).arg<cl_long>(b.count);
  launch.tensor_at(b.offsets).arg(dims).tensor_at(columns).arg<cl_long>(b.total).run(b.count);
  return out;
}

at::Tensor masked_select(const at::Tensor& self, const at::Tensor& mask) {
  check_ocl(self, "masked_select", "self");
  TORCH_CHECK(mask.scalar_type() == at::kBool || mask.scalar_type() == at::kByte,
              "masked_select: expected BoolTensor for mask");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(masked_select)>::call(self, mask);
  check_same_device(self, mask, "masked_select", "mask");
  const std::vector<std::int64_t> sizes = to_vector(at::infer_size(self.sizes(), mask.sizes()));
  const at::Tensor m = mask.expand(sizes), v = self.expand(sizes);
  std::int64_t numel = 1;
  for (std::int64_t s : sizes) numel *= s;
  if (numel == 0) return at::empty({0}, self.options());
  const PlainLayout layout = plain_layout(sizes, {&m, &v}, /*keep_order=*/true);
  const Blocks b = count_set(m, layout, self);
  at::Tensor out = at::empty({b.total}, self.options());
  if (b.total == 0) return out;
  const int device = self.device().index();
  cl_program program =
      plain_program(device, "plain_compact.cl",
                    {{"A", m.scalar_type()}, {"B", self.scalar_type()}, {"O", self.scalar_type()}, {"K", at::kLong}});
  PlainLaunch launch(device, program, "masked_select_write");
  launch.arg(layout.shape).tensor(m).arg(layout.operands[0]).tensor(v).arg(layout.operands[1]);
  launch.arg<cl_long>(b.block).arg<cl_long>(b.count).tensor_at(b.offsets).tensor_at(out).run(b.count);
  return out;
}

// ---- masked_scatter_, unfold_backward: compositions of the ops above and of index_put_ ----

// masked_scatter_: the elements of self where mask (broadcast to self) is set take source's first
// ones in row-major order, which is nonzero's order: one index_put_ of source's flat prefix at
// nonzero's positions.
at::Tensor& masked_scatter_(at::Tensor& self, const at::Tensor& mask_arg, const at::Tensor& source) {
  check_ocl(self, "masked_scatter_", "self");
  const at::Tensor mask = mask_arg.is_cpu() ? mask_arg.to(self.device()) : mask_arg;
  if (!plain_dtype(self.scalar_type()) || mask.scalar_type() != at::kBool ||
      source.scalar_type() != self.scalar_type() || !at::is_expandable_to(mask.sizes(), self.sizes())) {
    return fallback<ATEN_OP(masked_scatter_)>::call(self, mask_arg, source);  // the CPU raises its own errors
  }
  check_same_device(self, mask, "masked_scatter_", "mask");
  check_same_device(self, source, "masked_scatter_", "source");
  at::Tensor target = self.dim() == 0 ? self.view({1}) : self;
  const at::Tensor positions = at::nonzero(mask.expand(self.sizes()).reshape(target.sizes()));
  const std::int64_t n = positions.size(0);
  TORCH_CHECK(source.numel() >= n, "Number of elements of source < number of ones in mask");
  if (n == 0) return self;
  c10::List<std::optional<at::Tensor>> indices;
  for (std::int64_t d = 0; d < target.dim(); ++d) indices.push_back(positions.select(1, d));
  target.index_put_(indices, source.reshape({-1}).narrow(0, 0, n));
  return self;
}

// unfold_backward: each window's gradient added where the window lies in the input. The j-th
// elements of all windows are one view of the input (stride `step` along dim) in which no two windows
// meet, so `size` in-place adds do it without atomics.
at::Tensor unfold_backward(const at::Tensor& grad, c10::SymIntArrayRef input_sizes_arg, std::int64_t dim,
                           std::int64_t size, std::int64_t step) {
  check_ocl(grad, "unfold_backward", "grad_in");
  const at::IntArrayRef input_sizes = C10_AS_INTARRAYREF_SLOW(input_sizes_arg);
  if (!plain_dtype(grad.scalar_type()) || grad.dim() != 1 + static_cast<std::int64_t>(input_sizes.size()) || size < 1 ||
      step < 1) {
    return fallback_symint<ATEN_OP(unfold_backward)>::call(grad, input_sizes_arg, dim, size, step);
  }
  if (input_sizes.empty()) {  // a 0-dim input unfolds to [1]: the gradient is its element
    at::Tensor grad_input = at::zeros({}, grad.options());
    if (grad.numel() == 1) grad_input.copy_(grad.reshape({}));
    return grad_input;
  }
  dim = at::maybe_wrap_dim(dim, static_cast<std::int64_t>(input_sizes.size()));
  at::Tensor grad_input = at::zeros(input_sizes, grad.options());
  if (grad.numel() == 0) return grad_input;
  const at::Tensor windows = grad_input.unfold(dim, size, step);
  TORCH_CHECK(windows.sizes() == grad.sizes(), "unfold_backward: grad_in of sizes ", grad.sizes(),
              " for windows of sizes ", windows.sizes());
  for (std::int64_t j = 0; j < size; ++j) windows.select(-1, j).add_(grad.select(-1, j));
  return grad_input;
}

// ---- tril, triu ----

// Where tril (lower) or triu zeroes the last two dims: column - row above the diagonal (tril) or below
// it (triu), from two aranges on the device, [rows, cols], broadcast over any batch dims.
at::Tensor triangle_zeros(const at::Tensor& self, std::int64_t diagonal, bool lower) {
  const std::int64_t rows = self.size(-2), cols = self.size(-1);
  const at::TensorOptions index = self.options().dtype(at::kLong);
  const at::Tensor offset = at::arange(cols, index).view({1, cols}) - at::arange(rows, index).view({rows, 1});
  return lower ? offset.gt(diagonal) : offset.lt(diagonal);
}

at::Tensor& triangle_out(const char* op, const at::Tensor& self, std::int64_t diagonal, bool lower, at::Tensor& out) {
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
  check_same_device(self, out, op, "out");
  at::native::resize_output(out, self.sizes());
  if (!out.is_same(self)) out.copy_(self);
  if (out.numel() > 0) out.masked_fill_(triangle_zeros(self, diagonal, lower), 0);
  return out;
}

at::Tensor tril(const at::Tensor& self, c10::SymInt diagonal) {
  check_ocl(self, "tril", "self");
  if (!plain_dtype(self.scalar_type())) return fallback_symint<ATEN_OP(tril)>::call(self, diagonal);
  at::Tensor out = at::empty(self.sizes(), self.options());  // contiguous, as its meta function allocates it
  return triangle_out("tril", self, diagonal.expect_int(), true, out);
}
at::Tensor triu(const at::Tensor& self, c10::SymInt diagonal) {
  check_ocl(self, "triu", "self");
  if (!plain_dtype(self.scalar_type())) return fallback_symint<ATEN_OP(triu)>::call(self, diagonal);
  at::Tensor out = at::empty(self.sizes(), self.options());  // contiguous, as its meta function allocates it
  return triangle_out("triu", self, diagonal.expect_int(), false, out);
}
at::Tensor& tril_(at::Tensor& self, c10::SymInt diagonal) {
  check_ocl(self, "tril_", "self");
  if (!plain_dtype(self.scalar_type())) return fallback_symint<ATEN_OP(tril_)>::call(self, diagonal);
  return triangle_out("tril_", self, diagonal.expect_int(), true, self);
}
at::Tensor& triu_(at::Tensor& self, c10::SymInt diagonal) {
  check_ocl(self, "triu_", "self");
  if (!plain_dtype(self.scalar_type())) return fallback_symint<ATEN_OP(triu_)>::call(self, diagonal);
  return triangle_out("triu_", self, diagonal.expect_int(), false, self);
}
at::Tensor& tril_out(const at::Tensor& self, c10::SymInt diagonal, at::Tensor& out) {
  check_ocl(self, "tril.out", "self");
  if (!plain_dtype(self.scalar_type()) || out.scalar_type() != self.scalar_type()) {
    return fallback_symint<ATEN_OP(tril_out)>::call(self, diagonal, out);
  }
  return triangle_out("tril", self, diagonal.expect_int(), true, out);
}
at::Tensor& triu_out(const at::Tensor& self, c10::SymInt diagonal, at::Tensor& out) {
  check_ocl(self, "triu.out", "self");
  if (!plain_dtype(self.scalar_type()) || out.scalar_type() != self.scalar_type()) {
    return fallback_symint<ATEN_OP(triu_out)>::call(self, diagonal, out);
  }
  return triangle_out("triu", self, diagonal.expect_int(), false, out);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("cat", cat);
  m.impl("flip", flip);
  m.impl("roll", roll);
  m.impl("arange.start_out", arange_out);
  m.impl("nonzero", nonzero);
  m.impl("masked_select", masked_select);
  m.impl("masked_scatter_", masked_scatter_);
  m.impl("unfold_backward", unfold_backward);
  m.impl("tril", tril);
  m.impl("tril_", tril_);
  m.impl("tril.out", tril_out);
  m.impl("triu", triu);
  m.impl("triu_", triu_);
  m.impl("triu.out", triu_out);
}

}  // namespace ocltune_torch
