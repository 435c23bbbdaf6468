// index_select (so embedding), gather, scatter and scatter_add, scatter_reduce (and scatter's reduce
// forms), index_add, embedding_dense_backward, index.Tensor and _index_put_impl_ (index_put_, with
// accumulate; index_fill_ through it) on the plain kernels of plain/kernels/plain_index.cl.
//
// Indices are checked on the device: a kernel sets a flag for an index out of range and the op raises
// PyTorch's IndexError after reading it (one small blocking read per op). Accumulation is atomic in
// float32, int32 or int64; other dtypes accumulate in a float32 or int32 copy that is cast back.
#include "ocltune_torch/csrc/ops/index_ops.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
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

// The type atomic adds of `type` run in, and the ACCUMULATE code of plain_index.cl for it.
at::ScalarType accumulate_type(at::ScalarType type) {
  if (type == at::kFloat || type == at::kInt || type == at::kLong) return type;
  return at::isFloatingType(type) ? at::kFloat : at::kInt;
}
std::string accumulate_define(at::ScalarType type) {
  return std::string("#define ACCUMULATE ") + (type == at::kFloat ? "1" : type == at::kInt ? "2" : "3") + "\n";
}

at::Tensor index_on(const at::Tensor& index, const at::Tensor& self) {
  return index.is_cpu() ? index.to(self.device()) : index;
}

// Raises the op's IndexError when the kernel flagged an index.
void check_flag(const at::Tensor& flag, const char* op, std::int64_t dim, std::int64_t size) {
  const at::Tensor host = flag.cpu();
  const std::int64_t* f = host.const_data_ptr<std::int64_t>();
  if (f[0] == 0) return;
  if (dim >= 0) {
    TORCH_CHECK_INDEX(false, op, ": index ", f[1], " is out of bounds for dimension ", dim, " with size ", size);
  }
  TORCH_CHECK_INDEX(false, op, ": index ", f[1], " is out of bounds (index out of range in self)");
}

std::vector<std::int64_t> strides_with_zero(const at::Tensor& t, std::int64_t dim) {
  std::vector<std::int64_t> s = to_vector(t.strides());
  if (!s.empty()) s[static_cast<std::size_t>(dim)] = 0;
  return s;
}

// out[c] = a[c with c[dim] = index[c]] over `sizes`, with `a_strides` for a and `index_strides` for
// index (both against sizes).
void launch_gather(const char* op, const at::Tensor& out, const at::Tensor& a, std::vector<std::int64_t> a_strides,
                   std::int64_t dim, const at::Tensor& index, std::vector<std::int64_t> index_strides) {
  if (out.numel() == 0) return;
  const int device = out.device().index();
  const std::int64_t dim_stride = a.dim() == 0 ? 0 : a.stride(dim);
  const std::int64_t dim_size = a.dim() == 0 ? 1 : a.size(dim);
  a_strides[static_cast<std::size_t>(dim)] = 0;
  const PlainLayout layout =
      plain_layout_of(to_vector(out.sizes()), {to_vector(out.strides()), a_strides, index_strides},
                      {element_offset(out), element_offset(a), element_offset(index)});
  const at::Tensor flag = at::zeros({2}, out.options().dtype(at::kLong));
  cl_program program = plain_program(device, "plain_index.cl",
                                     {{"O", out.scalar_type()}, {"A", a.scalar_type()}, {"I", index.scalar_type()}});
  PlainLaunch launch(device, program, "gather");
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]).tensor(a).arg(layout.operands[1]);
  launch.tensor(index).arg(layout.operands[2]).arg<cl_long>(dim_stride).arg<cl_long>(dim_size).tensor_at(flag);
  launch.run(layout.shape.numel);
  check_flag(flag, op, dim, dim_size);
}

// Float sums and products through atomics land in whatever order the work-items run, so their
// result changes from run to run in the last bits. Under torch.use_deterministic_algorithms(True)
// they raise (or warn, with warn_only=True) as CUDA's ops without a deterministic kernel do. Integer
// accumulation, amax and amin do not depend on the order.
void alert_float_atomics(const char* op, at::ScalarType accumulated, int reduce) {
  if (accumulated == at::kFloat && (reduce == 0 || reduce == 1)) {
    at::globalContext().alertNotDeterministic(std::string(op) + " on ocl (float atomics)");
  }
}

// out[c with c[dim] = index[c]] (+)= src[c] or value over index's sizes; out has at least those sizes.
// `reduce` is plain_index.cl's REDUCE for accumulate (0 sum, 1 product, 2 amax, 3 amin).
void launch_scatter(const char* op, const at::Tensor& out, std::int64_t dim, const at::Tensor& index,
                    const at::Tensor* src, const c10::Scalar& value, bool accumulate, std::int64_t skip = -1,
                    int reduce = 0) {
  if (accumulate) alert_float_atomics(op, out.scalar_type(), reduce);
  if (index.numel() == 0) return;
  const int device = out.device().index();
  const std::int64_t dim_stride = out.dim() == 0 ? 0 : out.stride(dim);
  const std::int64_t dim_size = out.dim() == 0 ? 1 : out.size(dim);
  const at::Tensor& a = src ? *src : index;  // a stands in for the buffer when the value is a number
  std::vector<std::int64_t> a_strides = src ? to_vector(src->strides()) : std::vector<std::int64_t>(index.dim(), 0);
  if (a_strides.empty()) a_strides.push_back(0);
  std::vector<std::int64_t> out_strides = strides_with_zero(out, dim);
  std::vector<std::int64_t> index_strides = to_vector(index.strides());
  std::vector<std::int64_t> sizes = to_vector(index.sizes());
  if (sizes.empty()) {  // a 0-dim scatter: one element
    sizes = {1};
    out_strides = {0};
    index_strides = {0};
  }
  // A 0-dim out takes an index of one dim of any size (PyTorch sees out as one dim of size 1): every
  // element lands on its one element. Its stride list is empty, and plain_layout_of reads one stride
  // per dim of sizes.
  if (out.dim() == 0) out_strides.assign(sizes.size(), 0);
  a_strides.resize(sizes.size(), 0);
  const PlainLayout layout = plain_layout_of(sizes, {out_strides, a_strides, index_strides},
                                             {element_offset(out), element_offset(a), element_offset(index)});
  const at::Tensor flag = at::zeros({2}, out.options().dtype(at::kLong));
  cl_program program = plain_program(
      device, "plain_index.cl",
      {{"O", out.scalar_type()}, {"A", src ? src->scalar_type() : at::kLong}, {"I", index.scalar_type()}},
      accumulate ? accumulate_define(out.scalar_type()) + "#define REDUCE " + std::to_string(reduce) + "\n" : "");
  PlainLaunch launch(device, program, "scatter");
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]).tensor(a).arg(layout.operands[1]);
  launch.tensor(index).arg(layout.operands[2]).arg<cl_long>(dim_stride).arg<cl_long>(dim_size).tensor_at(flag);
  launch.arg<cl_long>(skip) << scalar_arg(value, out.scalar_type());
  launch.arg<cl_int>(src ? 0 : 1);
  launch.run(layout.shape.numel);
  check_flag(flag, op, dim, dim_size);
}

void check_index_dtype(const at::Tensor& index, const char* op, bool allow_int) {
  TORCH_CHECK(index.scalar_type() == at::kLong || (allow_int && index.scalar_type() == at::kInt), op,
              "(): Expected dtype int64", allow_int ? " or int32" : "", " for index");
}

// gather's and scatter's shape rules: index has self's number of dims and no larger size than self
// (src for scatter) in any dim but dim.
void check_gather_shapes(const char* op, const at::Tensor& self, std::int64_t dim, const at::Tensor& index,
                         const at::Tensor* src) {
  const std::int64_t nd = std::max<std::int64_t>(self.dim(), 1);
  TORCH_CHECK(std::max<std::int64_t>(index.dim(), 1) == nd, op, "(): Index tensor must have the same number of ",
              "dimensions as ", src ? "self tensor" : "input tensor");
  for (std::int64_t d = 0; d < index.dim(); ++d) {
    if (d != dim) {
      TORCH_CHECK(index.size(d) <= (self.dim() == 0 ? 1 : self.size(d)), "Size does not match at dimension ", d,
                  " expected index ", index.sizes(), " to be no larger than self ", self.sizes(),
                  " apart from dimension ", dim);
    }
    if (src) {
      TORCH_CHECK(index.size(d) <= (src->dim() == 0 ? 1 : src->size(d)), "Expected index ", index.sizes(),
                  " to be no larger than src ", src->sizes());
    }
  }
}

// ---- registered ops ----

at::Tensor index_select(const at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg) {
  check_ocl(self, "index_select", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(index_select)>::call(self, dim, index_arg);
  return ocl_index_select(self, dim, index_arg);
}

at::Tensor gather(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, bool sparse_grad) {
  check_ocl(self, "gather", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(gather)>::call(self, dim, index, sparse_grad);
  return ocl_gather(self, dim, index);
}

at::Tensor& scatter_impl(at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg, const at::Tensor* src,
                         const c10::Scalar& value, bool accumulate) {
  const char* op = accumulate ? "scatter_add" : "scatter";
  check_ocl(self, op, "self");
  check_plain_dtype(self.scalar_type(), op);
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor index = index_on(index_arg, self);
  if (index.numel() != 0) check_index_dtype(index, op, true);  // as PyTorch: int32 too, any if empty
  if (src) {
    TORCH_CHECK(src->scalar_type() == self.scalar_type(), op, "(): Expected self.dtype to be equal to src.dtype");
    check_same_device(self, *src, op, "src");
  }
  if (index.numel() == 0) return self;  // as PyTorch: no shape rules for an empty index
  check_gather_shapes(op, self, dim, index, src);
  at::assert_no_internal_overlap(self);
  const at::Tensor source = src && may_overlap(self, *src) ? src->clone() : src ? *src : at::Tensor();
  if (accumulate && accumulate_type(self.scalar_type()) != self.scalar_type()) {
    at::Tensor acc = self.to(accumulate_type(self.scalar_type()));
    launch_scatter(op, acc, dim, index, &source, 0, true);
    self.copy_(acc);
    return self;
  }
  launch_scatter(op, self, dim, index, src ? &source : nullptr, value, accumulate);
  return self;
}

at::Tensor& scatter_src_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return scatter_impl(self, dim, index, &src, 0, false);
}
at::Tensor& scatter_value_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Scalar& value) {
  return scatter_impl(self, dim, index, nullptr, value, false);
}
at::Tensor& scatter_add_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return scatter_impl(self, dim, index, &src, 0, true);
}
at::Tensor scatter_src(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return scatter_src_(out, dim, index, src);
}
at::Tensor scatter_value(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Scalar& value) {
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return scatter_value_(out, dim, index, value);
}
at::Tensor scatter_add(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return scatter_add_(out, dim, index, src);
}

// The result of an out= form: self copied into out (resized), unless they are the same tensor.
at::Tensor& out_from(const at::Tensor& self, at::Tensor& out) {
  at::native::resize_output(out, self.sizes());
  if (!out.is_same(self)) out.copy_(self);
  return out;
}

// ---- scatter_reduce, scatter with reduce, index_add ----

// scatter_reduce's reductions (and scatter's "add" and "multiply"), as plain_index.cl's REDUCE but mean,
// which is a sum divided by the count afterwards.
enum class Reduce { sum = 0, prod = 1, amax = 2, amin = 3, mean = 4 };

std::optional<Reduce> reduce_of(c10::string_view name) {
  if (name == "sum" || name == "add") return Reduce::sum;
  if (name == "prod" || name == "multiply") return Reduce::prod;
  if (name == "amax") return Reduce::amax;
  if (name == "amin") return Reduce::amin;
  if (name == "mean") return Reduce::mean;
  return std::nullopt;
}

// What scatter_reduce with include_self=False writes first where src goes (PyTorch's init values:
// infinities for the float types, the type's limits otherwise).
c10::Scalar reduce_identity(Reduce r, at::ScalarType type) {
  if (r == Reduce::sum || r == Reduce::mean) return 0;
  if (r == Reduce::prod) return 1;
  const bool max = r == Reduce::amax;
  if (at::isFloatingType(type)) return max ? -INFINITY : INFINITY;
  switch (type) {
    case at::kBool: return !max;
    case at::kByte: return max ? 0 : 255;
    case at::kChar: return max ? -128 : 127;
    case at::kShort:
      return max ? std::numeric_limits<std::int16_t>::lowest() : std::numeric_limits<std::int16_t>::max();
    case at::kInt: return max ? std::numeric_limits<std::int32_t>::lowest() : std::numeric_limits<std::int32_t>::max();
    default: return max ? std::numeric_limits<std::int64_t>::lowest() : std::numeric_limits<std::int64_t>::max();
  }
}

// True when the scatter kernels take the op as PyTorch's CPU would compute it; the CPU raises its own
// errors for the rest (index dtype, dtypes that differ, bool means).
bool reduce_on_device(const at::Tensor& self, const at::Tensor& index, const at::Tensor& src, std::optional<Reduce> r) {
  return r && plain_dtype(self.scalar_type()) && src.scalar_type() == self.scalar_type() &&
         (index.scalar_type() == at::kLong || index.scalar_type() == at::kInt) &&
         !(self.scalar_type() == at::kBool && *r == Reduce::mean);
}

// self[c with c[dim] = index[c]] = reduce(self there (unless !include_self), src[c] for every such c).
// Atomic updates in float32, int32 or int64 (a copy of those types for the others: 16-bit floats are
// exact there for amax and amin, and the integers' sums and products wrap to the same bits); a mean
// is divided in self's dtype as the CPU divides it (floor for the integers).
at::Tensor& scatter_reduce_impl(const char* op, at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg,
                                const at::Tensor& src, Reduce r, bool include_self) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor index = index_on(index_arg, self);
  check_same_device(self, src, op, "src");
  if (index.numel() == 0) return self;
  check_gather_shapes(op, self, dim, index, &src);
  at::assert_no_internal_overlap(self);
  const at::Tensor source = may_overlap(self, src) ? src.clone() : src;
  const at::ScalarType acc_type = accumulate_type(self.scalar_type());
  at::Tensor acc = acc_type == self.scalar_type() ? self : self.to(acc_type);
  if (!include_self) launch_scatter(op, acc, dim, index, nullptr, reduce_identity(r, self.scalar_type()), false);
  launch_scatter(op, acc, dim, index, &source, 0, true, -1, r == Reduce::mean ? 0 : static_cast<int>(r));
  if (!acc.is_same(self)) self.copy_(acc);
  if (r == Reduce::mean) {
    at::Tensor count = include_self ? at::ones_like(self) : at::zeros_like(self);
    ocl_scatter_add_(count, dim, index, at::ones_like(source));
    count.masked_fill_(count == 0, 1);
    if (at::isFloatingType(self.scalar_type())) {
      self.div_(count);
    } else {
      self.div_(count, "floor");
    }
  }
  return self;
}

at::Tensor& scatter_reduce_two_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                c10::string_view reduce, bool include_self) {
  check_ocl(self, "scatter_reduce_", "self");
  const std::optional<Reduce> r = reduce_of(reduce);
  if (!reduce_on_device(self, index, src, r)) {
    return fallback<ATEN_OP2(scatter_reduce_, two)>::call(self, dim, index, src, reduce, include_self);
  }
  return scatter_reduce_impl("scatter_reduce", self, dim, index, src, *r, include_self);
}
at::Tensor scatter_reduce_two(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                              c10::string_view reduce, bool include_self) {
  check_ocl(self, "scatter_reduce", "self");
  if (!reduce_on_device(self, index, src, reduce_of(reduce))) {
    return fallback<ATEN_OP2(scatter_reduce, two)>::call(self, dim, index, src, reduce, include_self);
  }
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return scatter_reduce_impl("scatter_reduce", out, dim, index, src, *reduce_of(reduce), include_self);
}
at::Tensor& scatter_reduce_two_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index,
                                   const at::Tensor& src, c10::string_view reduce, bool include_self, at::Tensor& out) {
  check_ocl(self, "scatter_reduce", "self");
  if (!reduce_on_device(self, index, src, reduce_of(reduce)) || out.scalar_type() != self.scalar_type()) {
    return fallback<ATEN_OP2(scatter_reduce, two_out)>::call(self, dim, index, src, reduce, include_self, out);
  }
  check_same_device(self, out, "scatter_reduce", "out");
  return scatter_reduce_impl("scatter_reduce", out_from(self, out), dim, index, src, *reduce_of(reduce), include_self);
}

// scatter with reduce="add" or "multiply" (PyTorch's older form): scatter_reduce's sum and prod with self.
bool scatter_reduce_form(const at::Tensor& self, const at::Tensor& index, const at::Tensor& src,
                         c10::string_view reduce) {
  const std::optional<Reduce> r = reduce_of(reduce);
  return (reduce == "add" || reduce == "multiply") && reduce_on_device(self, index, src, r);
}
at::Tensor& scatter_reduce_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                            c10::string_view reduce) {
  check_ocl(self, "scatter_", "self");
  if (!scatter_reduce_form(self, index, src, reduce)) {
    return fallback<ATEN_OP2(scatter_, reduce)>::call(self, dim, index, src, reduce);
  }
  return scatter_reduce_impl("scatter", self, dim, index, src, *reduce_of(reduce), true);
}
at::Tensor scatter_reduce(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                          c10::string_view reduce) {
  check_ocl(self, "scatter", "self");
  if (!scatter_reduce_form(self, index, src, reduce)) {
    return fallback<ATEN_OP2(scatter, reduce)>::call(self, dim, index, src, reduce);
  }
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return scatter_reduce_impl("scatter", out, dim, index, src, *reduce_of(reduce), true);
}
at::Tensor& scatter_reduce_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src,
                               c10::string_view reduce, at::Tensor& out) {
  check_ocl(self, "scatter", "self");
  if (!scatter_reduce_form(self, index, src, reduce) || out.scalar_type() != self.scalar_type()) {
    return fallback<ATEN_OP2(scatter, reduce_out)>::call(self, dim, index, src, reduce, out);
  }
  check_same_device(self, out, "scatter", "out");
  return scatter_reduce_impl("scatter", out_from(self, out), dim, index, src, *reduce_of(reduce), true);
}
// The number forms: src a tensor of the value with index's sizes.
at::Tensor value_src(const at::Tensor& self, const at::Tensor& index, const c10::Scalar& value) {
  return at::full(index.sizes(), value, self.options());
}
at::Tensor& scatter_value_reduce_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const c10::Scalar& value,
                                  c10::string_view reduce) {
  check_ocl(self, "scatter_", "self");
  if (!plain_dtype(self.scalar_type()) || !scatter_reduce_form(self, index, self, reduce)) {
    return fallback<ATEN_OP2(scatter_, value_reduce)>::call(self, dim, index, value, reduce);
  }
  return scatter_reduce_impl("scatter", self, dim, index, value_src(self, index, value), *reduce_of(reduce), true);
}
at::Tensor scatter_value_reduce(const at::Tensor& self, std::int64_t dim, const at::Tensor& index,
                                const c10::Scalar& value, c10::string_view reduce) {
  check_ocl(self, "scatter", "self");
  if (!plain_dtype(self.scalar_type()) || !scatter_reduce_form(self, index, self, reduce)) {
    return fallback<ATEN_OP2(scatter, value_reduce)>::call(self, dim, index, value, reduce);
  }
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return scatter_reduce_impl("scatter", out, dim, index, value_src(self, index, value), *reduce_of(reduce), true);
}

// index_add: self[..., index[i], ...] += alpha * source[..., i, ...], a scatter_add of source with
// index seen along dim (stride 0 elsewhere), so repeated indices accumulate atomically. False for
// arguments PyTorch's shape rules refuse, other dtypes and bool with an alpha but 1: the CPU
// raises or computes those.
bool is_one(const c10::Scalar& alpha) {
  if (alpha.isBoolean()) return alpha.toBool();
  return alpha.isIntegral(false) ? alpha.toLong() == 1 : alpha.toDouble() == 1.0;
}

bool index_add_on_device(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& source,
                         const c10::Scalar& alpha) {
  if (!plain_dtype(self.scalar_type()) || source.scalar_type() != self.scalar_type() || index.dim() > 1 ||
      (index.scalar_type() != at::kLong && index.scalar_type() != at::kInt) || self.dim() != source.dim() ||
      (self.scalar_type() == at::kBool && !is_one(alpha))) {
    return false;
  }
  if (dim < -std::max<std::int64_t>(self.dim(), 1) || dim >= std::max<std::int64_t>(self.dim(), 1)) return false;
  const std::int64_t d = at::maybe_wrap_dim(dim, self.dim());
  if (index.numel() != (source.dim() == 0 ? 1 : source.size(d))) return false;
  for (std::int64_t k = 0; k < self.dim(); ++k) {
    if (k != d && self.size(k) != source.size(k)) return false;
  }
  return true;
}

at::Tensor& index_add_impl(at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg, const at::Tensor& source,
                           const c10::Scalar& alpha) {
  at::Tensor index = index_on(index_arg, self);
  check_same_device(self, index, "index_add_", "index");
  check_same_device(self, source, "index_add_", "source");
  if (index.numel() == 0 || source.numel() == 0) return self;
  const bool scalar = self.dim() == 0;
  at::Tensor target = scalar ? self.view({1}) : self;
  at::Tensor src = scalar ? source.view({1}) : source;
  if (scalar) index = index.reshape({1});
  dim = at::maybe_wrap_dim(dim, target.dim());
  if (!is_one(alpha)) src = src * alpha;
  std::vector<std::int64_t> strides(static_cast<std::size_t>(src.dim()), 0);
  strides[static_cast<std::size_t>(dim)] = index.dim() == 0 ? 0 : index.stride(0);
  ocl_scatter_add_(target, dim, index.as_strided(src.sizes(), strides), src);
  return self;
}

at::Tensor& index_add_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& source,
                       const c10::Scalar& alpha) {
  check_ocl(self, "index_add_", "self");
  if (!index_add_on_device(self, dim, index, source, alpha)) {
    return fallback<ATEN_OP(index_add_)>::call(self, dim, index, source, alpha);
  }
  return index_add_impl(self, dim, index, source, alpha);
}
at::Tensor index_add(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& source,
                     const c10::Scalar& alpha) {
  check_ocl(self, "index_add", "self");
  if (!index_add_on_device(self, dim, index, source, alpha)) {
    return fallback<ATEN_OP(index_add)>::call(self, dim, index, source, alpha);
  }
  at::Tensor out = self.clone(at::MemoryFormat::Contiguous);
  return index_add_impl(out, dim, index, source, alpha);
}
at::Tensor& index_add_out(const at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& source,
                          const c10::Scalar& alpha, at::Tensor& out) {
  check_ocl(self, "index_add", "self");
  if (!index_add_on_device(self, dim, index, source, alpha) || out.scalar_type() != self.scalar_type()) {
    return fallback<ATEN_OP2(index_add, out)>::call(self, dim, index, source, alpha, out);
  }
  check_same_device(self, out, "index_add", "out");
  return index_add_impl(out_from(self, out), dim, index, source, alpha);
}

at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices_arg,
                                    std::int64_t num_weights, std::int64_t padding_idx, bool scale_grad_by_freq) {
  check_ocl(grad_output, "embedding_dense_backward", "grad_output");
  if (!plain_dtype(grad_output.scalar_type())) {
    return fallback<ATEN_OP(embedding_dense_backward)>::call(grad_output, indices_arg, num_weights, padding_idx,
                                                             scale_grad_by_freq);
  }
  const at::Tensor indices = index_on(indices_arg, grad_output).reshape({-1});
  check_index_dtype(indices, "embedding_backward", true);
  const std::int64_t n = indices.numel();
  const std::int64_t width = grad_output.numel() / std::max<std::int64_t>(n, 1);
  const at::ScalarType acc_type = accumulate_type(grad_output.scalar_type());
  at::Tensor acc = at::zeros({num_weights, width}, grad_output.options().dtype(acc_type));
  if (n > 0 && width > 0) {
    const at::Tensor grad = grad_output.reshape({n, width});
    // Row i of grad goes to row indices[i]: the index seen with stride 0 along the width.
    const at::Tensor index = indices.as_strided({n, width}, {indices.stride(0), 0});
    launch_scatter("embedding_backward", acc, 0, index, &grad, 0, true, padding_idx);
    if (scale_grad_by_freq) {
      at::Tensor counts = at::zeros({num_weights, 1}, grad_output.options().dtype(at::kFloat));
      const at::Tensor ones = at::ones({n, 1}, counts.options());
      launch_scatter("embedding_backward", counts, 0, indices.view({n, 1}), &ones, 0, true, padding_idx);
      acc.div_(counts.clamp_min(1.0).to(acc_type));
    }
  }
  return acc_type == grad_output.scalar_type() ? acc : acc.to(grad_output.scalar_type());
}

// ---- advanced indexing ----

// What index and index_put see: self restrided to the result's shape (stride 0 along the index dims)
// and each index tensor expanded to it, with the size and stride of the dim it indexes.
struct AdvancedIndexing {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> self_strides;
  std::vector<at::Tensor> indices;  // long or int, expanded to sizes
  std::vector<std::int64_t> indexed_sizes, indexed_strides;
};

AdvancedIndexing plan_indexing(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& list) {
  std::vector<at::Tensor> indices;  // one per dim of self from the left, undefined for ':'
  for (const std::optional<at::Tensor>& opt : list) {
    if (!opt || !opt->defined()) {
      indices.emplace_back();
      continue;
    }
    at::Tensor index = index_on(*opt, self);
    if (index.scalar_type() == at::kBool || index.scalar_type() == at::kByte) {
      const std::int64_t first = static_cast<std::int64_t>(indices.size());
      for (std::int64_t j = 0; j < index.dim(); ++j) {
        TORCH_CHECK_INDEX(first + j < self.dim() && index.size(j) == self.size(first + j), "The shape of the mask ",
                          index.sizes(), " at index ", j, " does not match the shape of the indexed tensor ",
                          self.sizes(), " at index ", first + j);
      }
      const at::Tensor nz = index.nonzero();
      for (std::int64_t j = 0; j < index.dim(); ++j) indices.push_back(nz.select(1, j));
    } else {
      TORCH_CHECK_INDEX(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
                        "tensors used as indices must be long, int, byte or bool tensors");
      check_same_device(self, index, "index", "indices");
      indices.push_back(index);
    }
  }
  TORCH_CHECK_INDEX(static_cast<std::int64_t>(indices.size()) <= self.dim(),
                    "too many indices for tensor of dimension ", self.dim(), " (got ", indices.size(), ")");
  indices.resize(static_cast<std::size_t>(self.dim()));
  std::vector<std::int64_t> broadcast;
  bool any = false;
  for (const at::Tensor& t : indices) {
    if (!t.defined()) continue;
    broadcast = any ? to_vector(at::infer_size(broadcast, t.sizes())) : to_vector(t.sizes());
    any = true;
  }
  TORCH_CHECK(any, "ocltune_torch: index without index tensors");
  // Index dims not adjacent: they go first, as in NumPy.
  std::vector<std::int64_t> order;
  bool adjacent = true;
  {
    int state = 0;  // 0 before, 1 inside, 2 after the index dims
    for (const at::Tensor& t : indices) {
      if (t.defined() && state == 2) adjacent = false;
      if (t.defined() && state == 0) state = 1;
      if (!t.defined() && state == 1) state = 2;
    }
  }
  at::Tensor src = self;
  if (!adjacent) {
    std::vector<at::Tensor> front, rest;
    std::vector<std::int64_t> perm;
    for (std::int64_t d = 0; d < self.dim(); ++d) {
      if (indices[static_cast<std::size_t>(d)].defined()) perm.push_back(d);
    }
    for (std::int64_t d = 0; d < self.dim(); ++d) {
      if (!indices[static_cast<std::size_t>(d)].defined()) perm.push_back(d);
    }
    std::vector<at::Tensor> permuted;
    for (std::int64_t d : perm) permuted.push_back(indices[static_cast<std::size_t>(d)]);
    indices = permuted;
    src = self.permute(perm);
  }
  AdvancedIndexing plan;
  std::size_t d = 0;
  const std::size_t nd = indices.size();
  std::vector<std::int64_t> before, after;
  while (d < nd && !indices[d].defined()) before.push_back(static_cast<std::int64_t>(d++));
  std::vector<std::size_t> indexed;
  while (d < nd && indices[d].defined()) indexed.push_back(d++);
  while (d < nd) after.push_back(static_cast<std::int64_t>(d++));
  TORCH_CHECK(indexed.size() <= 4, "ocltune_torch: index with more than 4 index tensors is not supported");
  for (std::int64_t b : before) {
    plan.sizes.push_back(src.size(b));
    plan.self_strides.push_back(src.stride(b));
  }
  for (std::int64_t s : broadcast) {
    plan.sizes.push_back(s);
    plan.self_strides.push_back(0);
  }
  for (std::int64_t a : after) {
    plan.sizes.push_back(src.size(a));
    plan.self_strides.push_back(src.stride(a));
  }
  const std::size_t nb = before.size(), nbc = broadcast.size();
  for (std::size_t k : indexed) {
    const at::Tensor e = indices[k].expand(broadcast);
    std::vector<std::int64_t> strides(plan.sizes.size(), 0);
    for (std::size_t j = 0; j < nbc; ++j) strides[nb + j] = e.stride(static_cast<std::int64_t>(j));
    plan.indices.push_back(e.as_strided(plan.sizes, strides));
    plan.indexed_sizes.push_back(src.size(static_cast<std::int64_t>(k)));
    plan.indexed_strides.push_back(src.stride(static_cast<std::int64_t>(k)));
  }
  return plan;
}

// The index kernels' shared arguments after (shape, out, out strides, a, a strides).
void launch_advanced(const char* kernel, const at::Tensor& out, const std::vector<std::int64_t>& out_strides,
                     const at::Tensor& a, const std::vector<std::int64_t>& a_strides, const AdvancedIndexing& plan,
                     bool accumulate) {
  if (accumulate) alert_float_atomics(kernel, out.scalar_type(), 0);
  std::int64_t numel = 1;
  for (std::int64_t s : plan.sizes) numel *= s;
  if (numel == 0) return;
  const int device = out.device().index();
  // The index dtype of the program: every index tensor has it (int ones become long otherwise).
  at::ScalarType itype = plan.indices[0].scalar_type();
  std::vector<at::Tensor> indices = plan.indices;
  for (const at::Tensor& t : indices) {
    if (t.scalar_type() != itype) itype = at::kLong;
  }
  for (at::Tensor& t : indices) {
    if (t.scalar_type() != itype) t = t.to(itype);
  }
  std::vector<std::vector<std::int64_t>> strides = {out_strides, a_strides};
  std::vector<std::int64_t> offsets = {element_offset(out), element_offset(a)};
  for (const at::Tensor& t : indices) {
    strides.push_back(to_vector(t.strides()));
    offsets.push_back(element_offset(t));
  }
  const PlainLayout layout = plain_layout_of(plan.sizes, strides, offsets);
  const at::Tensor flag = at::zeros({2}, out.options().dtype(at::kLong));
  cl_program program =
      plain_program(device, "plain_index.cl", {{"O", out.scalar_type()}, {"A", a.scalar_type()}, {"I", itype}},
                    accumulate ? accumulate_define(out.scalar_type()) : "");
  PlainLaunch launch(device, program, kernel);
  launch.arg(layout.shape).tensor(out).arg(layout.operands[0]).tensor(a).arg(layout.operands[1]);
  for (std::size_t k = 0; k < 4; ++k) {
    const std::size_t j = std::min(k, indices.size() - 1);
    launch.tensor(indices[j]).arg(layout.operands[2 + j]);
  }
  KernelStrides indexed_strides, indexed_sizes;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    indexed_strides.strides[k] = plan.indexed_strides[k];
    indexed_sizes.strides[k] = plan.indexed_sizes[k];
  }
  launch.arg<cl_int>(static_cast<cl_int>(indices.size())).arg(indexed_strides).arg(indexed_sizes).tensor_at(flag);
  launch.run(numel);
  check_flag(flag, "index", -1, 0);
}

at::Tensor index_tensor(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  check_ocl(self, "index", "self");
  if (!plain_dtype(self.scalar_type())) return fallback<ATEN_OP(index_Tensor)>::call(self, indices);
  const AdvancedIndexing plan = plan_indexing(self, indices);
  at::Tensor out = at::empty(plan.sizes, self.options());
  launch_advanced("index", out, to_vector(out.strides()), self, plan.self_strides, plan, false);
  return out;
}

at::Tensor& index_put_impl(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                           const at::Tensor& values_arg, bool accumulate, bool unsafe) {
  check_ocl(self, "index_put_", "self");
  if (!plain_dtype(self.scalar_type())) {
    return fallback<ATEN_OP(_index_put_impl_)>::call(self, indices, values_arg, accumulate, unsafe);
  }
  TORCH_CHECK(values_arg.scalar_type() == self.scalar_type(),
              "Index put requires the source and destination dtypes "
              "match, got ",
              self.scalar_type(), " for the destination and ", values_arg.scalar_type(), " for the source.");
  at::assert_no_internal_overlap(self);
  const at::Tensor values = values_arg.is_cpu() ? values_arg.to(self.device()) : values_arg;
  check_same_device(self, values, "index_put_", "values");
  const AdvancedIndexing plan = plan_indexing(self, indices);
  TORCH_CHECK(at::is_expandable_to(values.sizes(), plan.sizes), "shape mismatch: value tensor of shape ",
              values.sizes(), " cannot be broadcast to indexing result of shape ", at::IntArrayRef(plan.sizes));
  at::Tensor v = values.expand(plan.sizes);
  if (may_overlap(self, values)) v = v.clone();
  if (accumulate && accumulate_type(self.scalar_type()) != self.scalar_type()) {
    // Accumulate into a copy of the type atomics take, then cast back (the plan's strides are self's, so
    // the copy keeps self's layout).
    at::Tensor acc =
        at::empty_strided(self.sizes(), self.strides(), self.options().dtype(accumulate_type(self.scalar_type())));
    acc.copy_(self);
    const AdvancedIndexing acc_plan = plan_indexing(acc, indices);
    launch_advanced("index_put", acc, acc_plan.self_strides, v, to_vector(v.strides()), acc_plan, true);
    self.copy_(acc);
    return self;
  }
  launch_advanced("index_put", self, plan.self_strides, v, to_vector(v.strides()), plan, accumulate);
  return self;
}

// self.index_fill_(dim, index, value): index_put_ with every other dim whole, value a 0-dim tensor of
// self's dtype on the device (what fasterrcnn's samplers write their masks with).
at::Tensor& index_fill_value_(at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg,
                              const at::Tensor& value) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor index = index_on(index_arg, self);
  check_same_device(self, index, "index_fill_", "index");
  TORCH_CHECK_INDEX(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  at::Tensor target = self.dim() == 0 ? self.view({1}) : self;
  c10::List<std::optional<at::Tensor>> indices;
  for (std::int64_t d = 0; d < dim; ++d) indices.push_back(std::nullopt);
  indices.push_back(index.reshape({-1}));
  index_put_impl(target, indices, value.to(self.options()), false, false);
  return self;
}

at::Tensor& index_fill_scalar_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Scalar& value) {
  check_ocl(self, "index_fill_", "self");
  if (!plain_dtype(self.scalar_type())) {
    return fallback<ATEN_OP2(index_fill_, int_Scalar)>::call(self, dim, index, value);
  }
  return index_fill_value_(self, dim, index, at::scalar_tensor(value, self.options()));
}

at::Tensor& index_fill_tensor_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& value) {
  check_ocl(self, "index_fill_", "self");
  TORCH_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (!plain_dtype(self.scalar_type())) {
    return fallback<ATEN_OP2(index_fill_, int_Tensor)>::call(self, dim, index, value);
  }
  return index_fill_value_(self, dim, index, value);
}

}  // namespace

at::Tensor ocl_index_select(const at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg) {
  check_ocl(self, "index_select", "self");
  check_plain_dtype(self.scalar_type(), "index_select");
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor index = index_on(index_arg, self);
  check_same_device(self, index, "index_select", "index");
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  check_index_dtype(index, "index_select", true);
  if (self.dim() == 0) {
    TORCH_CHECK_INDEX(index.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ", index.numel(),
                      " value(s)");
  }
  std::vector<std::int64_t> sizes = to_vector(self.sizes());
  if (sizes.empty()) {
    at::Tensor out = at::empty({1}, self.options());
    launch_gather("index_select", out, self.view({1}), {1}, 0, index, {0});
    return out.squeeze(0);
  }
  sizes[static_cast<std::size_t>(dim)] = index.numel();
  at::Tensor out = at::empty(sizes, self.options());
  std::vector<std::int64_t> index_strides(sizes.size(), 0);
  index_strides[static_cast<std::size_t>(dim)] = index.dim() == 0 ? 0 : index.stride(0);
  if (out.numel() > 0) launch_gather("index_select", out, self, to_vector(self.strides()), dim, index, index_strides);
  return out;
}

at::Tensor ocl_gather(const at::Tensor& self, std::int64_t dim, const at::Tensor& index_arg) {
  check_ocl(self, "gather", "self");
  check_plain_dtype(self.scalar_type(), "gather");
  dim = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor index = index_on(index_arg, self);
  check_same_device(self, index, "gather", "index");
  at::Tensor out = at::empty(index.sizes(), self.options());
  if (out.numel() == 0) return out;  // as PyTorch: an empty index of any dtype and shape
  check_index_dtype(index, "gather", true);
  check_gather_shapes("gather", self, dim, index, nullptr);
  // A 0-dim self or index is one dim of size 1 to PyTorch (then dim is 0), and index's size along dim
  // is free: a 0-dim self gathers an index of any length, a 0-dim index picks one element of a vector.
  // Both as 1-dim views, which launch_gather's stride lists need.
  const at::Tensor from = self.dim() == 0 ? self.view({1}) : self;
  const at::Tensor at_index = index.dim() == 0 ? index.view({1}) : index;
  const at::Tensor to = out.dim() == 0 ? out.view({1}) : out;
  // self seen with index's sizes (index is no larger in any dim but dim, whose stride is dim_stride).
  launch_gather("gather", to, from, to_vector(from.strides()), dim, at_index, to_vector(at_index.strides()));
  return out;
}

at::Tensor& ocl_scatter_add_(at::Tensor& self, std::int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return scatter_add_(self, dim, index, src);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", index_select);
  m.impl("gather", gather);
  m.impl("scatter.src", scatter_src);
  m.impl("scatter.value", scatter_value);
  m.impl("scatter_.src", scatter_src_);
  m.impl("scatter_.value", scatter_value_);
  m.impl("scatter_add", scatter_add);
  m.impl("scatter_add_", scatter_add_);
  m.impl("scatter_reduce.two", scatter_reduce_two);
  m.impl("scatter_reduce_.two", scatter_reduce_two_);
  m.impl("scatter_reduce.two_out", scatter_reduce_two_out);
  m.impl("scatter.reduce", scatter_reduce);
  m.impl("scatter_.reduce", scatter_reduce_);
  m.impl("scatter.reduce_out", scatter_reduce_out);
  m.impl("scatter.value_reduce", scatter_value_reduce);
  m.impl("scatter_.value_reduce", scatter_value_reduce_);
  m.impl("index_add", index_add);
  m.impl("index_add_", index_add_);
  m.impl("index_add.out", index_add_out);
  m.impl("embedding_dense_backward", embedding_dense_backward);
  m.impl("index.Tensor", index_tensor);
  m.impl("_index_put_impl_", index_put_impl);
  m.impl("index_fill_.int_Scalar", index_fill_scalar_);
  m.impl("index_fill_.int_Tensor", index_fill_tensor_);
}

}  // namespace ocltune_torch
