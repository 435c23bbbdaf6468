// Copies: ocl to ocl on the device, host to ocl and ocl to host with any strides, and _copy_from.
//
// On the device a copy is one clEnqueueCopyBuffer when both layouts are the same dense one, the C
// ABI's strided copy (elementwise with op NULL: strided source, packed destination) when the
// destination is dense, and a packed temporary plus clEnqueueCopyBufferRect when the destination has
// gaps (a slice), or the plain copy kernel (run_plain_elementwise, plain/plain_kernels.h), which also converts dtypes.
// What none of them can do goes through the host, which is always correct.
#include "ocltune_torch/csrc/device/copy.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/pinned.h"
#include "ocltune_torch/csrc/device/profiler.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

constexpr std::int64_t kMaxKernelElements = std::int64_t{1} << 30;  // the elementwise kernels' limit

// How the strided copy kernel moves elements of a type: its storage type and fp32 lanes per element.
struct CopyKind {
  int dtype = OCLTUNE_DTYPE_FP32;
  std::int64_t lanes = 1;
};

// The kernel loads and stores in its storage type without arithmetic, so fp32 moves any 4-byte pattern
// and 8- or 16-byte elements move as 2 or 4 fp32 lanes. 1- and 2-byte integers would pass through a
// conversion (fp16, bf16) that does not keep every bit pattern: they take the host.
std::optional<CopyKind> copy_kind(const at::Tensor& t) {
  if (const std::optional<int> d = ocltune_dtype_of(t.scalar_type())) return CopyKind{*d, 1};
  const auto item = static_cast<std::int64_t>(t.element_size());
  if (item % 4 == 0) return CopyKind{OCLTUNE_DTYPE_FP32, item / 4};
  return std::nullopt;
}

std::vector<std::int64_t> to_vector(at::IntArrayRef a) { return {a.begin(), a.end()}; }

// Dims ordered by the strides of `t`, largest first (stable), so a dense t reads as packed.
std::vector<std::int64_t> order_by_strides(const at::Tensor& t) {
  std::vector<std::int64_t> perm(static_cast<std::size_t>(t.dim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) { return t.stride(a) > t.stride(b); });
  return perm;
}

std::vector<std::int64_t> permuted(at::IntArrayRef values, const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> out;
  for (std::int64_t p : perm) out.push_back(values[static_cast<std::size_t>(p)]);
  return out;
}

bool ranges_overlap(const BufferRef& a, std::size_t a_bytes, const BufferRef& b, std::size_t b_bytes) {
  return a.buffer == b.buffer && a.offset < b.offset + b_bytes && b.offset < a.offset + a_bytes;
}

std::size_t span_bytes(const at::Tensor& t) {
  return static_cast<std::size_t>(span_elements(t.sizes(), t.strides())) * t.element_size();
}

// dst = src converted to dst's dtype by the plain copy kernel (any strides, src expanded to dst's
// sizes); false when a dtype is not a plain one.
bool plain_copy(const at::Tensor& dst, const at::Tensor& src) {
  const int device = dst.get_device();
  if (!plain_dtype(dst.scalar_type(), device) || !plain_dtype(src.scalar_type(), device)) return false;
  if (dst.numel() == 0) return true;
  at::Tensor from = src;
  if (may_overlap(dst, src)) {
    from = at::empty(src.sizes(), src.options());
    copy_on_device(from, src);
  }
  run_plain_elementwise("copy", dst, {from}, {"A"}, dst.scalar_type(), {0, 0});
  return true;
}

// The strided copy kernel: dst (packed `sizes`) = src read with `src_strides`. False when the kernel
// cannot take it (dtype, more than 4 merged dims, more elements than it indexes).
bool enqueue_gather(int device, std::vector<std::int64_t> sizes, std::vector<std::int64_t> src_strides,
                    const at::Tensor& src, const at::Tensor& dst) {
  const std::optional<CopyKind> kind = copy_kind(dst);
  if (!kind) return false;
  ocltune_tensor from = cl_tensor_of(src);
  ocltune_tensor to = cl_tensor_of(dst);
  if (kind->lanes > 1) {
    for (std::int64_t& s : src_strides) s *= kind->lanes;
    sizes.push_back(kind->lanes);
    src_strides.push_back(1);
    from.offset *= kind->lanes;
    to.offset *= kind->lanes;
  }
  if (sizes.size() > OCLTUNE_MAX_DIMS) return false;
  std::int64_t elements = 1;
  for (std::int64_t s : sizes) elements *= s;
  if (elements > kMaxKernelElements || from.offset + span_elements(sizes, src_strides) > 2 * kMaxKernelElements ||
      to.offset + elements > 2 * kMaxKernelElements) {
    return false;
  }
  ocltune_elementwise_args args;
  ocltune_elementwise_args_init(&args, nullptr, static_cast<int>(sizes.size()), sizes.data(), from.buffer, to.buffer);
  args.dtype = kind->dtype;
  args.a = strided_operand(sizes, src_strides, from);
  args.out = to;
  call_ocltune("copy", [&] { device_runtime(device).elementwise(args); });
  return true;
}

// A clEnqueueCopyBufferRect from a packed buffer into the layout `dst` has after merging (its strides
// in bytes as row and slice pitches), when that layout fits the three dims of a rectangle.
struct Rect {
  std::size_t region[3] = {0, 1, 1};
  std::size_t dst_row_pitch = 0, dst_slice_pitch = 0;
};

std::optional<Rect> rect_of(const MergedLayout& layout, std::size_t item) {
  std::vector<std::int64_t> sizes = layout.sizes;
  std::vector<std::int64_t> strides = layout.strides[0];
  if (strides.back() != 1) {  // the innermost dim is not a run of bytes: a run of one element inside it
    sizes.push_back(1);
    strides.push_back(1);
  }
  if (sizes.size() > 3) return std::nullopt;
  while (sizes.size() < 3) {
    sizes.insert(sizes.begin(), 1);
    strides.insert(strides.begin(), 0);
  }
  Rect r;
  r.region[0] = static_cast<std::size_t>(sizes[2]) * item;
  r.region[1] = static_cast<std::size_t>(sizes[1]);
  r.region[2] = static_cast<std::size_t>(sizes[0]);
  r.dst_row_pitch = sizes[1] == 1 ? r.region[0] : static_cast<std::size_t>(strides[1]) * item;
  r.dst_slice_pitch = sizes[0] == 1 ? r.region[1] * r.dst_row_pitch : static_cast<std::size_t>(strides[0]) * item;
  // OpenCL's rules for pitches: rows do not overlap, slices hold whole rows.
  if (r.dst_row_pitch < r.region[0] || r.dst_slice_pitch < r.region[1] * r.dst_row_pitch ||
      r.dst_slice_pitch % r.dst_row_pitch != 0) {
    return std::nullopt;
  }
  return r;
}

// Releases a cl_mem when it goes out of scope (the driver keeps it until enqueued commands finish).
struct MemRelease {
  cl_mem mem = nullptr;
  MemRelease() = default;
  MemRelease(const MemRelease&) = delete;
  MemRelease& operator=(const MemRelease&) = delete;
  ~MemRelease() {
    if (mem) clReleaseMemObject(mem);
  }
};

void enqueue_rect(int device, const Rect& r, const at::Tensor& packed_src, const at::Tensor& dst) {
  BufferRef from = buffer_of(packed_src);
  const BufferRef to = buffer_of(dst);
  cl_command_queue queue = device_queue(device);
  // A rectangle copy within one buffer must use one pitch on both sides, and the packed temporary
  // may come from dst's segment: then it is copied into a buffer of its own first. (A sub-buffer
  // would save the copy, but PoCL 3.1 crashes on rectangle copies from a sub-buffer of dst's buffer.)
  MemRelease own;
  if (from.buffer == to.buffer) {
    const std::size_t bytes = static_cast<std::size_t>(packed_src.numel()) * packed_src.element_size();
    cl_int err = CL_SUCCESS;
    own.mem = clCreateBuffer(device_context(device), CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check_cl(err, "clCreateBuffer");
    check_cl(clEnqueueCopyBuffer(queue, from.buffer, own.mem, from.offset, 0, bytes, 0, nullptr, nullptr),
             "clEnqueueCopyBuffer");
    from = BufferRef{own.mem, 0, bytes, device};
  }
  const std::size_t src_origin[3] = {from.offset, 0, 0};
  const std::size_t dst_origin[3] = {to.offset, 0, 0};
  check_cl(clEnqueueCopyBufferRect(queue, from.buffer, to.buffer, src_origin, dst_origin, r.region, r.region[0],
                                   r.region[0] * r.region[1], r.dst_row_pitch, r.dst_slice_pitch, 0, nullptr, nullptr),
           "clEnqueueCopyBufferRect");
}

// Reads the span of dst, writes host into it on the host, and writes the span back: for layouts
// no device copy can write. Ops enqueued by another thread in between on the untouched elements of
// the span would be overwritten, as with any read-modify-write.
void host_read_modify_write(const at::Tensor& dst, const at::Tensor& host) {
  const int device = dst.device().index();
  const BufferRef to = buffer_of(dst);
  const std::int64_t span = span_elements(dst.sizes(), dst.strides());
  at::Tensor whole = at::empty({span}, host.options());
  const std::size_t bytes = static_cast<std::size_t>(span) * dst.element_size();
  check_cl(clEnqueueReadBuffer(device_queue(device), to.buffer, CL_TRUE, to.offset, bytes, whole.data_ptr(), 0, nullptr,
                               nullptr),
           "clEnqueueReadBuffer");
  whole.as_strided(dst.sizes(), dst.strides()).copy_(host);
  check_cl(clEnqueueWriteBuffer(device_queue(device), to.buffer, CL_TRUE, to.offset, bytes, whole.const_data_ptr(), 0,
                                nullptr, nullptr),
           "clEnqueueWriteBuffer");
}

}  // namespace

void copy_on_device(const at::Tensor& dst, const at::Tensor& src) {
  TORCH_INTERNAL_ASSERT(dst.device() == src.device() && dst.scalar_type() == src.scalar_type() &&
                        dst.sizes() == src.sizes());
  if (dst.numel() == 0) return;
  const int device = dst.device().index();
  const std::size_t item = dst.element_size();
  const BufferRef to = buffer_of(dst);
  const BufferRef from = buffer_of(src);
  // Overlapping source and destination (x[1:] = x[:-1]): copy the source away first, since a buffer
  // copy refuses overlaps and a kernel could read what it has already written.
  if (ranges_overlap(to, span_bytes(dst), from, span_bytes(src))) {
    at::Tensor copy = at::empty(src.sizes(), src.options());
    copy_on_device(copy, src);
    copy_on_device(dst, copy);
    return;
  }
  const std::vector<std::int64_t> perm = order_by_strides(dst);
  const std::vector<std::int64_t> sizes = permuted(dst.sizes(), perm);
  const std::vector<std::int64_t> dst_strides = permuted(dst.strides(), perm);
  const std::vector<std::int64_t> src_strides = permuted(src.strides(), perm);
  const MergedLayout both = merge_dims(sizes, {dst_strides, src_strides});
  if (both.strides[0] == packed_strides(both.sizes)) {
    if (both.strides[1] == both.strides[0]) {
      const std::size_t bytes = static_cast<std::size_t>(dst.numel()) * item;
      TransferEvent event;
      check_cl(clEnqueueCopyBuffer(device_queue(device), from.buffer, to.buffer, from.offset, to.offset, bytes, 0,
                                   nullptr, event.slot()),
               "clEnqueueCopyBuffer");
      event.report(device, "Memcpy DtoD", bytes);
      return;
    }
    if (enqueue_gather(device, both.sizes, both.strides[1], src, dst)) return;
    if (plain_copy(dst, src)) return;
    write_from_host(dst, read_to_host(src));
    return;
  }
  // dst has gaps: the plain copy kernel writes it in one pass; else the source in dst's dim order
  // into a packed temporary, then one rectangle copy.
  if (plain_copy(dst, src)) return;
  if (const std::optional<Rect> rect = rect_of(merge_dims(sizes, {dst_strides}), item)) {
    at::Tensor packed = at::empty(sizes, dst.options());
    copy_on_device(packed, src.permute(perm));
    enqueue_rect(device, *rect, packed, dst);
    return;
  }
  host_read_modify_write(dst, read_to_host(src));
}

at::Tensor read_to_host(const at::Tensor& src) {
  const at::TensorOptions host_options = src.options().device(at::kCPU);
  if (src.numel() == 0) return at::empty(src.sizes(), host_options);
  const std::int64_t span = span_elements(src.sizes(), src.strides());
  // A sparse view (a column of a matrix) is packed on the device first rather than read whole.
  if (span > src.numel() && copy_kind(src)) {
    at::Tensor packed = at::empty(src.sizes(), src.options());
    const MergedLayout both = merge_dims(src.sizes(), {to_vector(packed.strides()), to_vector(src.strides())});
    if (enqueue_gather(src.device().index(), both.sizes, both.strides[1], src, packed)) return read_to_host(packed);
  }
  const BufferRef from = buffer_of(src);
  at::Tensor whole = at::empty({span}, host_options);
  const std::size_t bytes = static_cast<std::size_t>(span) * src.element_size();
  TransferEvent event;
  check_cl(clEnqueueReadBuffer(device_queue(src.device().index()), from.buffer, CL_TRUE, from.offset, bytes,
                               whole.data_ptr(), 0, nullptr, event.slot()),
           "clEnqueueReadBuffer");
  event.report(src.device().index(), "Memcpy DtoH", bytes);
  return whole.as_strided(src.sizes(), src.strides());
}

void write_from_host(const at::Tensor& dst, const at::Tensor& cpu_src) {
  TORCH_INTERNAL_ASSERT(cpu_src.is_cpu() && cpu_src.scalar_type() == dst.scalar_type() &&
                        cpu_src.sizes() == dst.sizes());
  if (dst.numel() == 0) return;
  const int device = dst.device().index();
  if (dst.is_non_overlapping_and_dense()) {
    // A dense tensor covers numel elements from its first one, in the order of its strides.
    at::Tensor staging = cpu_src;
    if (!(cpu_src.is_non_overlapping_and_dense() && cpu_src.strides() == dst.strides())) {
      staging = at::empty_strided(dst.sizes(), dst.strides(), cpu_src.options());
      staging.copy_(cpu_src);
    }
    const BufferRef to = buffer_of(dst);
    const std::size_t bytes = static_cast<std::size_t>(dst.numel()) * dst.element_size();
    TransferEvent event;
    check_cl(clEnqueueWriteBuffer(device_queue(device), to.buffer, CL_TRUE, to.offset, bytes, staging.const_data_ptr(),
                                  0, nullptr, event.slot()),
             "clEnqueueWriteBuffer");
    event.report(device, "Memcpy HtoD", bytes);
    return;
  }
  const std::vector<std::int64_t> perm = order_by_strides(dst);
  const std::vector<std::int64_t> sizes = permuted(dst.sizes(), perm);
  if (const std::optional<Rect> rect =
          rect_of(merge_dims(sizes, {permuted(dst.strides(), perm)}), dst.element_size())) {
    at::Tensor packed = at::empty(sizes, dst.options());
    write_from_host(packed, cpu_src.permute(perm));
    enqueue_rect(device, *rect, packed, dst);
    return;
  }
  host_read_modify_write(dst, cpu_src);
}

namespace {

// copy_ sends every copy that involves an ocl tensor here (self is the source).
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(self.defined() && dst.defined(), "ocltune_torch: _copy_from of an undefined tensor");
  TORCH_CHECK((self.is_cpu() || is_ocl(self)) && (dst.is_cpu() || is_ocl(dst)),
              "ocltune_torch: copies between ocl and ", self.is_cpu() || is_ocl(self) ? dst.device() : self.device(),
              " are not supported (only ocl and cpu)");
  if (dst.numel() == 0) return dst;
  at::assert_no_internal_overlap(dst);
  if (dst.is_cpu()) {
    dst.copy_(read_to_host(self));  // the host copy converts dtypes and broadcasts
    return dst;
  }
  if (is_ocl(self) && self.device() == dst.device() && self.scalar_type() == dst.scalar_type() && !self.is_conj() &&
      !self.is_neg()) {
    copy_on_device(dst, self.expand(dst.sizes()));
    return dst;
  }
  // A conversion on one device: the plain cast kernel (every pair of plain dtypes, any strides).
  if (is_ocl(self) && self.device() == dst.device() && !self.is_conj() && !self.is_neg() &&
      plain_copy(dst, self.expand(dst.sizes()))) {
    return dst;
  }
  // non_blocking from pinned memory in dst's layout: the write is enqueued and the host goes on (the
  // pinned block is kept until the write has read it). Every other copy waits, which is always correct.
  if (non_blocking && enqueue_write_from_pinned(dst, self)) return dst;
  // From the host, or a conversion the device cannot make (float64 without cl_khr_fp64, complex, another
  // device) through the host.
  at::Tensor host = self.is_cpu() ? self : read_to_host(self);
  host = host.to(dst.scalar_type()).resolve_conj().resolve_neg().expand(dst.sizes());
  write_from_host(dst, host);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return dst.copy_(self);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  check_ocl(self, "_local_scalar_dense", "self");
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(), " elements cannot be converted to Scalar");
  return read_to_host(self).item();
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
}

}  // namespace ocltune_torch
