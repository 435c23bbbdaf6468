// upsample_bilinear2d and upsample_nearest2d with their backward ops on plain kernels
// (plain/kernels/plain_upsample.cl): F.interpolate's "bilinear" and "nearest" modes on 4-D inputs, as
// segmentation heads (deeplabv3, fcn) and feature pyramids (torchvision's FPN) run them. Interpolation
// has nothing to tune (one gather per output element), so it is not a family (decision 0034).
//
// Each op takes its out= form (what the functional forms of these structured ops call); the
// functional forms are registered too, so that neither goes through the CPU. float32, float16 and
// bfloat16, any input strides (a packed copy first); other dtypes take the counted fallback.
#include <cmath>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/Operators.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// Mirrors UpsampleGeometry of plain_upsample.cl.
struct UpsampleGeometry {
  cl_long planes, h, w, oh, ow;
  cl_float scale_h, scale_w;
  cl_int align_corners;
};

// area_pixel_compute_scale of ATen's UpSample.h for the linear modes, in float as the CPU's kernels
// compute it for float inputs: (in - 1) / (out - 1) with align_corners, else 1 / scale where the
// caller gave a positive scale, else in / out.
float linear_scale(std::int64_t in, std::int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (scale && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// compute_scales_value for nearest: 1 / scale where given and positive, else in / out.
float nearest_scale(std::int64_t in, std::int64_t out, std::optional<double> scale) {
  if (scale && *scale > 0) return static_cast<float>(1.0 / *scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// What the kernels take: a 4-D ocl tensor of a float type the plain kernels compute in, indices that fit.
// A batch of 0 is fine; no channels (or rows, or columns) is PyTorch's "Non-empty 4D data tensor
// expected" error, which the fallback raises.
bool upsample_input(const at::Tensor& t) {
  const at::ScalarType d = t.scalar_type();
  return t.dim() == 4 && (d == at::kFloat || d == at::kHalf || d == at::kBFloat16) && t.size(1) > 0 &&
         t.numel() < (std::int64_t{1} << 40);
}

// out (grad_input for the backward kernels) = kernel(in) over planes of input sizes (h, w) and output
// sizes (oh, ow); `in` and `out` are the kernel's A and O operands, packed.
void run_upsample(const char* kernel, const at::Tensor& in, const at::Tensor& out, std::int64_t h, std::int64_t w,
                  std::int64_t oh, std::int64_t ow, float scale_h, float scale_w, bool align_corners,
                  std::int64_t items) {
  if (items == 0) return;
  const std::int64_t planes = in.size(0) * in.size(1);
  const UpsampleGeometry g{planes, h, w, oh, ow, scale_h, scale_w, align_corners ? 1 : 0};
  const int device = in.device().index();
  cl_program program = plain_program(device, "plain_upsample.cl", {{"A", in.scalar_type()}, {"O", out.scalar_type()}});
  PlainLaunch launch(device, program, kernel);
  launch.arg(g).tensor_at(in).tensor_at(out);
  launch.run(items);
}

// Writes `result` (packed, of out's sizes) into out, which may have any strides.
at::Tensor& into(at::Tensor& out, const at::Tensor& result) {
  if (out.is_contiguous()) return out;  // result is out itself
  return out.copy_(result);
}

// The packed tensor a kernel writes for out: out itself when it is packed, else a new one.
at::Tensor packed_target(const at::Tensor& out) {
  return out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
}

bool same_float_type(const at::Tensor& a, const at::Tensor& b) { return a.scalar_type() == b.scalar_type(); }

// What the backward kernels take: a gradient of the output's sizes for an input of input_size.
bool backward_takes(const at::Tensor& grad_output, const at::Tensor& grad_input, c10::IntArrayRef output_size,
                    c10::IntArrayRef input_size) {
  return upsample_input(grad_output) && output_size.size() == 2 && input_size.size() == 4 &&
         same_float_type(grad_output, grad_input) && grad_output.size(2) == output_size[0] &&
         grad_output.size(3) == output_size[1] && grad_output.size(0) == input_size[0] &&
         grad_output.size(1) == input_size[1] && input_size[1] > 0 && input_size[2] > 0 && input_size[3] > 0;
}

// ---- upsample_bilinear2d ----

at::Tensor& upsample_bilinear2d_out(const at::Tensor& self, c10::IntArrayRef output_size, bool align_corners,
                                    std::optional<double> scales_h, std::optional<double> scales_w, at::Tensor& out) {
  check_ocl(self, "upsample_bilinear2d", "self");
  check_ocl(out, "upsample_bilinear2d", "out");
  check_same_device(self, out, "upsample_bilinear2d", "out");
  if (!upsample_input(self) || output_size.size() != 2 || !same_float_type(self, out) || output_size[0] <= 0 ||
      output_size[1] <= 0 || self.size(2) <= 0 || self.size(3) <= 0) {
    return fallback<ATEN_OP(upsample_bilinear2d_out)>::call(self, output_size, align_corners, scales_h, scales_w, out);
  }
  const std::int64_t h = self.size(2), w = self.size(3), oh = output_size[0], ow = output_size[1];
  at::native::resize_output(out, {self.size(0), self.size(1), oh, ow});
  at::Tensor target = packed_target(out);
  run_upsample("upsample_bilinear", self.contiguous(), target, h, w, oh, ow,
               linear_scale(h, oh, align_corners, scales_h), linear_scale(w, ow, align_corners, scales_w),
               align_corners, target.numel());
  return into(out, target);
}

at::Tensor upsample_bilinear2d(const at::Tensor& self, c10::IntArrayRef output_size, bool align_corners,
                               std::optional<double> scales_h, std::optional<double> scales_w) {
  at::Tensor out = at::empty({0}, self.options());
  return upsample_bilinear2d_out(self, output_size, align_corners, scales_h, scales_w, out);
}

at::Tensor& upsample_bilinear2d_backward_out(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                             c10::IntArrayRef input_size, bool align_corners,
                                             std::optional<double> scales_h, std::optional<double> scales_w,
                                             at::Tensor& grad_input) {
  check_ocl(grad_output, "upsample_bilinear2d_backward", "grad_output");
  check_ocl(grad_input, "upsample_bilinear2d_backward", "grad_input");
  check_same_device(grad_output, grad_input, "upsample_bilinear2d_backward", "grad_input");
  if (!backward_takes(grad_output, grad_input, output_size, input_size)) {
    return fallback<ATEN_OP(upsample_bilinear2d_backward_grad_input)>::call(
        grad_output, output_size, input_size, align_corners, scales_h, scales_w, grad_input);
  }
  const std::int64_t h = input_size[2], w = input_size[3], oh = output_size[0], ow = output_size[1];
  at::native::resize_output(grad_input, input_size);
  at::Tensor target = packed_target(grad_input);
  run_upsample("upsample_bilinear_backward", grad_output.contiguous(), target, h, w, oh, ow,
               linear_scale(h, oh, align_corners, scales_h), linear_scale(w, ow, align_corners, scales_w),
               align_corners, target.numel());
  return into(grad_input, target);
}

at::Tensor upsample_bilinear2d_backward(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                        c10::IntArrayRef input_size, bool align_corners, std::optional<double> scales_h,
                                        std::optional<double> scales_w) {
  at::Tensor grad_input = at::empty({0}, grad_output.options());
  return upsample_bilinear2d_backward_out(grad_output, output_size, input_size, align_corners, scales_h, scales_w,
                                          grad_input);
}

// ---- upsample_nearest2d ----

at::Tensor& upsample_nearest2d_out(const at::Tensor& self, c10::IntArrayRef output_size, std::optional<double> scales_h,
                                   std::optional<double> scales_w, at::Tensor& out) {
  check_ocl(self, "upsample_nearest2d", "self");
  check_ocl(out, "upsample_nearest2d", "out");
  check_same_device(self, out, "upsample_nearest2d", "out");
  if (!upsample_input(self) || output_size.size() != 2 || !same_float_type(self, out) || output_size[0] <= 0 ||
      output_size[1] <= 0 || self.size(2) <= 0 || self.size(3) <= 0) {
    return fallback<ATEN_OP(upsample_nearest2d_out)>::call(self, output_size, scales_h, scales_w, out);
  }
  const std::int64_t h = self.size(2), w = self.size(3), oh = output_size[0], ow = output_size[1];
  at::native::resize_output(out, {self.size(0), self.size(1), oh, ow});
  at::Tensor target = packed_target(out);
  run_upsample("upsample_nearest", self.contiguous(), target, h, w, oh, ow, nearest_scale(h, oh, scales_h),
               nearest_scale(w, ow, scales_w), false, target.numel());
  return into(out, target);
}

at::Tensor upsample_nearest2d(const at::Tensor& self, c10::IntArrayRef output_size, std::optional<double> scales_h,
                              std::optional<double> scales_w) {
  at::Tensor out = at::empty({0}, self.options());
  return upsample_nearest2d_out(self, output_size, scales_h, scales_w, out);
}

at::Tensor& upsample_nearest2d_backward_out(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                            c10::IntArrayRef input_size, std::optional<double> scales_h,
                                            std::optional<double> scales_w, at::Tensor& grad_input) {
  check_ocl(grad_output, "upsample_nearest2d_backward", "grad_output");
  check_ocl(grad_input, "upsample_nearest2d_backward", "grad_input");
  check_same_device(grad_output, grad_input, "upsample_nearest2d_backward", "grad_input");
  if (!backward_takes(grad_output, grad_input, output_size, input_size)) {
    return fallback<ATEN_OP(upsample_nearest2d_backward_grad_input)>::call(grad_output, output_size, input_size,
                                                                           scales_h, scales_w, grad_input);
  }
  const std::int64_t h = input_size[2], w = input_size[3], oh = output_size[0], ow = output_size[1];
  at::native::resize_output(grad_input, input_size);
  at::Tensor target = packed_target(grad_input);
  run_upsample("upsample_nearest_backward", grad_output.contiguous(), target, h, w, oh, ow,
               nearest_scale(h, oh, scales_h), nearest_scale(w, ow, scales_w), false, target.numel());
  return into(grad_input, target);
}

at::Tensor upsample_nearest2d_backward(const at::Tensor& grad_output, c10::IntArrayRef output_size,
                                       c10::IntArrayRef input_size, std::optional<double> scales_h,
                                       std::optional<double> scales_w) {
  at::Tensor grad_input = at::empty({0}, grad_output.options());
  return upsample_nearest2d_backward_out(grad_output, output_size, input_size, scales_h, scales_w, grad_input);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_bilinear2d", upsample_bilinear2d);
  m.impl("upsample_bilinear2d.out", upsample_bilinear2d_out);
  m.impl("upsample_bilinear2d_backward", upsample_bilinear2d_backward);
  m.impl("upsample_bilinear2d_backward.grad_input", upsample_bilinear2d_backward_out);
  m.impl("upsample_nearest2d", upsample_nearest2d);
  m.impl("upsample_nearest2d.out", upsample_nearest2d_out);
  m.impl("upsample_nearest2d_backward", upsample_nearest2d_backward);
  m.impl("upsample_nearest2d_backward.grad_input", upsample_nearest2d_backward_out);
}

}  // namespace ocltune_torch
