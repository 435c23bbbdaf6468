// max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d, adaptive_max_pool2d and their backward
// ops (contiguous NCHW, fp32, fp16, bf16; inputs are packed on the device first).
//
// Through ocltune's pool family where it has the kind: its windows have no dilation and no
// divisor_override, and its adaptive kind pools to 1x1; an adaptive average to other sizes whose
// windows are all alike (each input extent a multiple of the output's) is an avg_pool2d with window =
// stride = in / out. The rest (dilation, divisor_override, windows over 64, adaptive windows of
// different sizes, adaptive max) runs on plain kernels (plain/kernels/plain_pool.cl): they are corner cases
// the family's tuned search space and float64 reference do not cover, and a window walk has nothing
// to tune but the family's tiling. Max pooling's backward ops there are a scatter_add of the indices.
#include <array>
#include <optional>
#include <tuple>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/index_ops.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// A pooling window; the family takes those with dilation 1 and sides up to 64 (`family()`).
struct Window {
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool ceil_mode = false;
  std::int64_t dh = 1, dw = 1;
  bool family() const { return dh == 1 && dw == 1 && kh <= 64 && kw <= 64; }
  // The extent a window spans in the input, dilation included.
  std::int64_t span_h() const { return (kh - 1) * dh + 1; }
  std::int64_t span_w() const { return (kw - 1) * dw + 1; }
};

// (H, W) of one of PyTorch's per-axis lists: one value for both, or two; `empty` for an empty list.
std::optional<std::array<std::int64_t, 2>> pair_of(c10::IntArrayRef v,
                                                   std::optional<std::array<std::int64_t, 2>> empty) {
  if (v.empty()) return empty;
  if (v.size() == 1) return std::array<std::int64_t, 2>{v[0], v[0]};
  if (v.size() == 2) return std::array<std::int64_t, 2>{v[0], v[1]};
  return std::nullopt;
}

// PyTorch's pooling output extent (pooling_output_shape; k is the window's span, dilation included).
std::int64_t out_extent(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, bool ceil_mode) {
  const std::int64_t num = in + 2 * p - k + (ceil_mode ? s - 1 : 0);
  std::int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// The window of a 3-D [C, H, W] or 4-D [N, C, H, W] input of a kernel dtype, else nullopt (the CPU
// raises PyTorch's own errors for the arguments it refuses).
std::optional<Window> window_of(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode) {
  if (!kernel_dtype(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4)) return std::nullopt;
  const auto k = pair_of(kernel_size, std::nullopt);
  if (!k) return std::nullopt;
  const auto s = pair_of(stride, k), p = pair_of(padding, std::nullopt), d = pair_of(dilation, std::nullopt);
  if (!s || !p || !d) return std::nullopt;
  Window w{(*k)[0], (*k)[1], (*s)[0], (*s)[1], (*p)[0], (*p)[1], ceil_mode, (*d)[0], (*d)[1]};
  const std::int64_t h = self.size(-2), wd = self.size(-1);
  if (w.kh < 1 || w.kw < 1 || w.sh < 1 || w.sw < 1 || w.ph < 0 || w.pw < 0 || w.dh < 1 || w.dw < 1 || 2 * w.ph > w.kh ||
      2 * w.pw > w.kw || h < 1 || wd < 1 || self.numel() > (std::int64_t{1} << 30)) {
    return std::nullopt;
  }
  if (out_extent(h, w.span_h(), w.sh, w.ph, ceil_mode) < 1 || out_extent(wd, w.span_w(), w.sw, w.pw, ceil_mode) < 1) {
    return std::nullopt;
  }
  return w;
}

// Input sizes as [N, C, H, W] (a 3-D input has N = 1).
std::array<std::int64_t, 4> nchw_of(const at::Tensor& t) {
  if (t.dim() == 3) return {1, t.size(0), t.size(1), t.size(2)};
  return {t.size(0), t.size(1), t.size(2), t.size(3)};
}

// Sizes of a result like `self` (3-D or 4-D) with the last two dims replaced.
std::vector<std::int64_t> with_plane(const at::Tensor& self, std::int64_t h, std::int64_t w) {
  std::vector<std::int64_t> sizes(self.sizes().begin(), self.sizes().end());
  sizes[sizes.size() - 2] = h;
  sizes[sizes.size() - 1] = w;
  return sizes;
}

// One pool call; in, out (and indices) contiguous; `input` gives N, C, H, W (the forward input in
// both directions).
void run_pool(int kind, bool backward, const at::Tensor& input, const Window& w, bool count_include_pad,
              const at::Tensor& in, const at::Tensor& out, const at::Tensor& indices) {
  const auto [n, c, h, wd] = nchw_of(input);
  if (n * c == 0) return;
  const ocltune_tensor ti = cl_tensor_of(in), to = cl_tensor_of(out);
  ocltune_pool_args a;
  ocltune_pool_args_init(&a, kind, backward ? 1 : 0, n, c, h, wd, w.kh, w.kw, ti.buffer, to.buffer, nullptr);
  a.in_offset = ti.offset;
  a.out_offset = to.offset;
  a.stride_h = w.sh;
  a.stride_w = w.sw;
  a.pad_h = w.ph;
  a.pad_w = w.pw;
  a.ceil_mode = w.ceil_mode ? 1 : 0;
  a.count_include_pad = count_include_pad ? 1 : 0;
  a.return_indices = indices.defined() ? 1 : 0;
  if (indices.defined()) {
    const ocltune_tensor tx = cl_tensor_of(indices);
    a.indices = tx.buffer;
    a.indices_offset = tx.offset;
  }
  a.dtype = *ocltune_dtype_of(input.scalar_type());
  call_ocltune("pool", [&] { device_runtime(input.device().index()).pool(a); });
}

// ---- the corner cases on plain kernels (plain/kernels/plain_pool.cl) ----

// The kernels' struct PoolGeometry.
struct PoolGeometry {
  cl_long planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};

// One plain pool kernel over `items` work items (output elements, or input elements for the average
// backward ops); in, out (and indices) contiguous, `input` the forward input (N, C, H, W, dtype).
void run_plain_pool(const char* kernel, const at::Tensor& input, std::int64_t oh, std::int64_t ow, const Window& w,
                    std::int64_t items, const at::Tensor& in, const at::Tensor& out, const at::Tensor& indices,
                    bool count_include_pad = true, std::int64_t divisor = 0) {
  const auto [n, c, h, wd] = nchw_of(input);
  if (items == 0) return;
  const PoolGeometry g{n * c, h, wd, oh, ow, w.kh, w.kw, w.sh, w.sw, w.ph, w.pw, w.dh, w.dw};
  const int device = input.device().index();
  cl_program program = plain_program(device, "plain_pool.cl", {{"A", input.scalar_type()}, {"O", input.scalar_type()}});
  PlainLaunch launch(device, program, kernel);
  launch.arg(g).arg<cl_int>(count_include_pad ? 1 : 0).arg<cl_long>(divisor).tensor_at(in).tensor_at(out);
  launch.tensor_at(indices.defined() ? indices : out);  // a buffer the averages never touch
  launch.run(items);
}

// The gradient of a max pool from its indices (positions within each input plane): grad_output
// scattered and summed, as the CPU sums overlapping windows' gradients.
at::Tensor max_pool_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& indices) {
  const auto [n, c, h, wd] = nchw_of(self);
  at::Tensor grad_input = at::zeros({n * c, h * wd}, self.options());
  if (grad_input.numel() > 0 && grad_output.numel() > 0) {
    ocl_scatter_add_(grad_input, 1, indices.reshape({n * c, -1}), grad_output.reshape({n * c, -1}));
  }
  return grad_input.view(self.sizes());
}

// ---- registered ops ----

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self, c10::IntArrayRef kernel_size,
                                                           c10::IntArrayRef stride, c10::IntArrayRef padding,
                                                           c10::IntArrayRef dilation, bool ceil_mode) {
  check_ocl(self, "max_pool2d_with_indices", "self");
  const std::optional<Window> w = window_of(self, kernel_size, stride, padding, dilation, ceil_mode);
  if (!w) {
    return fallback<ATEN_OP(max_pool2d_with_indices)>::call(self, kernel_size, stride, padding, dilation, ceil_mode);
  }
  const std::int64_t oh = out_extent(self.size(-2), w->span_h(), w->sh, w->ph, ceil_mode);
  const std::int64_t ow = out_extent(self.size(-1), w->span_w(), w->sw, w->pw, ceil_mode);
  const auto sizes = with_plane(self, oh, ow);
  at::Tensor out = at::empty(sizes, self.options());
  at::Tensor indices = at::empty(sizes, self.options().dtype(at::kLong));
  if (out.numel() == 0) return {out, indices};
  if (w->family()) {
    run_pool(OCLTUNE_POOL_MAX, false, self, *w, true, self.contiguous(), out, indices);
  } else {
    run_plain_pool("max_pool", self, oh, ow, *w, out.numel(), self.contiguous(), out, indices);
  }
  return {out, indices};
}

at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                            c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode,
                                            const at::Tensor& indices) {
  check_ocl(self, "max_pool2d_with_indices_backward", "self");
  check_same_device(self, grad_output, "max_pool2d_with_indices_backward", "grad_output");
  check_same_device(self, indices, "max_pool2d_with_indices_backward", "indices");
  const std::optional<Window> w = window_of(self, kernel_size, stride, padding, dilation, ceil_mode);
  if (!w || grad_output.scalar_type() != self.scalar_type() || indices.scalar_type() != at::kLong ||
      grad_output.sizes() != indices.sizes()) {
    return fallback<ATEN_OP(max_pool2d_with_indices_backward)>::call(grad_output, self, kernel_size, stride, padding,
                                                                     dilation, ceil_mode, indices);
  }
  if (!w->family()) return max_pool_backward(grad_output, self, indices);
  at::Tensor grad_input = at::empty(self.sizes(), self.options());
  if (grad_input.numel() > 0) {
    run_pool(OCLTUNE_POOL_MAX, true, self, *w, true, grad_output.contiguous(), grad_input, indices.contiguous());
  }
  return grad_input;
}

// The output extents of avg_pool2d.
std::array<std::int64_t, 2> avg_extents(const at::Tensor& self, const Window& w) {
  return {out_extent(self.size(-2), w.kh, w.sh, w.ph, w.ceil_mode),
          out_extent(self.size(-1), w.kw, w.sw, w.pw, w.ceil_mode)};
}

at::Tensor avg_pool2d(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                      c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<std::int64_t> divisor_override) {
  check_ocl(self, "avg_pool2d", "self");
  const std::optional<Window> w = window_of(self, kernel_size, stride, padding, {1}, ceil_mode);
  if (!w || (divisor_override && *divisor_override == 0)) {  // the CPU raises for 0
    return fallback<ATEN_OP(avg_pool2d)>::call(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                               divisor_override);
  }
  const auto [oh, ow] = avg_extents(self, *w);
  at::Tensor out = at::empty(with_plane(self, oh, ow), self.options());
  if (out.numel() == 0) return out;
  if (w->family() && !divisor_override) {
    run_pool(OCLTUNE_POOL_AVG, false, self, *w, count_include_pad, self.contiguous(), out, {});
  } else {
    run_plain_pool("avg_pool", self, oh, ow, *w, out.numel(), self.contiguous(), out, {}, count_include_pad,
                   divisor_override.value_or(0));
  }
  return out;
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef kernel_size,
                               c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<std::int64_t> divisor_override) {
  check_ocl(self, "avg_pool2d_backward", "self");
  check_same_device(self, grad_output, "avg_pool2d_backward", "grad_output");
  const std::optional<Window> w = window_of(self, kernel_size, stride, padding, {1}, ceil_mode);
  if (!w || (divisor_override && *divisor_override == 0) || grad_output.scalar_type() != self.scalar_type() ||
      grad_output.dim() != self.dim()) {
    return fallback<ATEN_OP(avg_pool2d_backward)>::call(grad_output, self, kernel_size, stride, padding, ceil_mode,
                                                        count_include_pad, divisor_override);
  }
  const auto [oh, ow] = avg_extents(self, *w);
  at::Tensor grad_input = at::empty(self.sizes(), self.options());
  if (grad_input.numel() == 0) return grad_input;
  if (w->family() && !divisor_override) {
    run_pool(OCLTUNE_POOL_AVG, true, self, *w, count_include_pad, grad_output.contiguous(), grad_input, {});
  } else {
    run_plain_pool("avg_pool_backward", self, oh, ow, *w, grad_input.numel(), grad_output.contiguous(), grad_input, {},
                   count_include_pad, divisor_override.value_or(0));
  }
  return grad_input;
}

// How an adaptive pool to (oh, ow) runs: the family's 1x1 kind, an average pool of the family with
// uniform windows, or (`plain`) the plain kernels, whose windows may differ in size.
struct Adaptive {
  bool to_one = false;
  Window window;
  bool plain = false;
};

std::optional<Adaptive> adaptive_of(const at::Tensor& self, c10::IntArrayRef output_size) {
  if (!kernel_dtype(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4) || output_size.size() != 2) {
    return std::nullopt;
  }
  const std::int64_t h = self.size(-2), w = self.size(-1), oh = output_size[0], ow = output_size[1];
  if (h < 1 || w < 1 || oh < 1 || ow < 1 || self.numel() > (std::int64_t{1} << 30)) return std::nullopt;
  if (oh == 1 && ow == 1) return Adaptive{true, {}};
  if (h % oh != 0 || w % ow != 0 || h / oh > 64 || w / ow > 64) return Adaptive{false, {}, true};
  const std::int64_t kh = h / oh, kw = w / ow;
  return Adaptive{false, Window{kh, kw, kh, kw, 0, 0, false}};
}

at::Tensor adaptive_avg_pool2d(const at::Tensor& self, c10::IntArrayRef output_size) {
  check_ocl(self, "_adaptive_avg_pool2d", "self");
  const std::optional<Adaptive> a = adaptive_of(self, output_size);
  if (!a) {
    return fallback<ATEN_OP(_adaptive_avg_pool2d)>::call(self, output_size);
  }
  at::Tensor out = at::empty(with_plane(self, output_size[0], output_size[1]), self.options());
  if (out.numel() == 0) return out;
  if (a->plain) {
    run_plain_pool("adaptive_avg_pool", self, output_size[0], output_size[1], {}, out.numel(), self.contiguous(), out,
                   {});
  } else {
    run_pool(a->to_one ? OCLTUNE_POOL_ADAPTIVE_AVG : OCLTUNE_POOL_AVG, false, self, a->window, true, self.contiguous(),
             out, {});
  }
  return out;
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  check_ocl(self, "_adaptive_avg_pool2d_backward", "self");
  check_same_device(self, grad_output, "_adaptive_avg_pool2d_backward", "grad_output");
  const std::optional<Adaptive> a = grad_output.dim() == self.dim()
                                        ? adaptive_of(self, grad_output.sizes().slice(grad_output.dim() - 2))
                                        : std::nullopt;
  if (!a || grad_output.scalar_type() != self.scalar_type()) {
    return fallback<ATEN_OP(_adaptive_avg_pool2d_backward)>::call(grad_output, self);
  }
  at::Tensor grad_input = at::empty(self.sizes(), self.options());
  if (grad_input.numel() == 0) return grad_input;
  if (a->plain) {
    run_plain_pool("adaptive_avg_pool_backward", self, grad_output.size(-2), grad_output.size(-1), {},
                   grad_input.numel(), grad_output.contiguous(), grad_input, {});
  } else {
    run_pool(a->to_one ? OCLTUNE_POOL_ADAPTIVE_AVG : OCLTUNE_POOL_AVG, true, self, a->window, true,
             grad_output.contiguous(), grad_input, {});
  }
  return grad_input;
}

// adaptive_max_pool2d: the family has no adaptive max kind, so every size is a plain kernel.
std::tuple<at::Tensor, at::Tensor> adaptive_max_pool2d(const at::Tensor& self, c10::IntArrayRef output_size) {
  check_ocl(self, "adaptive_max_pool2d", "self");
  if (!adaptive_of(self, output_size)) return fallback<ATEN_OP(adaptive_max_pool2d)>::call(self, output_size);
  const auto sizes = with_plane(self, output_size[0], output_size[1]);
  at::Tensor out = at::empty(sizes, self.options());
  at::Tensor indices = at::empty(sizes, self.options().dtype(at::kLong));
  run_plain_pool("adaptive_max_pool", self, output_size[0], output_size[1], {}, out.numel(), self.contiguous(), out,
                 indices);
  return {out, indices};
}

at::Tensor adaptive_max_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                        const at::Tensor& indices) {
  check_ocl(self, "adaptive_max_pool2d_backward", "self");
  check_same_device(self, grad_output, "adaptive_max_pool2d_backward", "grad_output");
  check_same_device(self, indices, "adaptive_max_pool2d_backward", "indices");
  if (!kernel_dtype(self.scalar_type()) || (self.dim() != 3 && self.dim() != 4) ||
      grad_output.scalar_type() != self.scalar_type() || indices.scalar_type() != at::kLong ||
      grad_output.sizes() != indices.sizes() || grad_output.dim() != self.dim()) {
    return fallback<ATEN_OP(adaptive_max_pool2d_backward)>::call(grad_output, self, indices);
  }
  return max_pool_backward(grad_output, self, indices);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool2d_with_indices", max_pool2d_with_indices);
  m.impl("max_pool2d_with_indices_backward", max_pool2d_with_indices_backward);
  m.impl("avg_pool2d", avg_pool2d);
  m.impl("avg_pool2d_backward", avg_pool2d_backward);
  m.impl("_adaptive_avg_pool2d", adaptive_avg_pool2d);
  m.impl("_adaptive_avg_pool2d_backward", adaptive_avg_pool2d_backward);
  m.impl("adaptive_max_pool2d", adaptive_max_pool2d);
  m.impl("adaptive_max_pool2d_backward", adaptive_max_pool2d_backward);
}

}  // namespace ocltune_torch
