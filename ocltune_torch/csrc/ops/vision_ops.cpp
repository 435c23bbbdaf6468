// torchvision's detection ops on the device: roi_align, its backward and nms on plain kernels
// (plain/kernels/plain_vision.cl), what fasterrcnn's RoI heads and its box post-processing dispatch
// (the backward in training). torchvision registers the operators (torch.ops.torchvision.*) when it is imported; the
// kernels here attach to them whenever that happens (the dispatcher keeps an implementation that
// arrives before its schema).
//
// nms follows torchvision's CUDA design: scores sorted on the device, a bit matrix of suppressions
// (one work item per box and 64 later boxes), one greedy pass, and the kept indices selected on the
// device; the matrix takes n * ceil(n / 64) * 8 bytes (2 MB for 4,000 boxes), so larger inputs run the
// counted CPU fallback. roi_align's backward scatters with float atomics, as torchvision's CUDA kernel
// does, so its sums vary in the last bits from run to run (torchvision marks it nondeterministic).
#include <cmath>
#include <limits>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// torchvision's ops are not in ATen's generated headers; the fallback reaches them by name.
struct TorchvisionNms {
  static constexpr const char* name = "torchvision::nms";
  static constexpr const char* overload_name = "";
  using schema = at::Tensor(const at::Tensor&, const at::Tensor&, double);
};
struct TorchvisionRoiAlign {
  static constexpr const char* name = "torchvision::roi_align";
  static constexpr const char* overload_name = "";
  using schema = at::Tensor(const at::Tensor&, const at::Tensor&, double, c10::SymInt, c10::SymInt, int64_t, bool);
};
struct TorchvisionRoiAlignBackward {
  static constexpr const char* name = "torchvision::_roi_align_backward";
  static constexpr const char* overload_name = "";
  using schema = at::Tensor(const at::Tensor&, const at::Tensor&, double, c10::SymInt, c10::SymInt, c10::SymInt,
                            c10::SymInt, c10::SymInt, c10::SymInt, int64_t, bool);
};

bool vision_dtype(at::ScalarType d) { return d == at::kFloat || d == at::kHalf || d == at::kBFloat16; }

// ---- roi_align ----

// Mirrors RoiAlignGeometry of plain_vision.cl.
struct RoiAlignGeometry {
  cl_long rois, channels, height, width, pooled_height, pooled_width;
  cl_float spatial_scale;
  cl_int sampling_ratio, aligned;
};

at::Tensor roi_align(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, int64_t pooled_height,
                     int64_t pooled_width, int64_t sampling_ratio, bool aligned) {
  check_ocl(input, "torchvision::roi_align", "input");
  check_same_device(input, rois, "torchvision::roi_align", "rois");
  // torchvision's own checks, with its messages.
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, "torchvision::roi_align: rois must have shape [K, 5], got ",
              rois.sizes());
  TORCH_CHECK(input.dim() == 4, "torchvision::roi_align: input must be 4-D [N, C, H, W], got ", input.sizes());
  TORCH_CHECK(input.scalar_type() == rois.scalar_type(), "torchvision::roi_align: input (", input.scalar_type(),
              ") and rois (", rois.scalar_type(), ") must have the same dtype");
  TORCH_CHECK(pooled_height > 0 && pooled_width > 0, "torchvision::roi_align: pooled sizes must be positive, got ",
              pooled_height, " x ", pooled_width);
  if (!vision_dtype(input.scalar_type())) {
    return fallback<TorchvisionRoiAlign>::call(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                               aligned);
  }
  at::Tensor out = at::zeros({rois.size(0), input.size(1), pooled_height, pooled_width}, input.options());
  if (out.numel() == 0 || input.numel() == 0) return out;
  const RoiAlignGeometry g{rois.size(0),
                           input.size(1),
                           input.size(2),
                           input.size(3),
                           pooled_height,
                           pooled_width,
                           static_cast<float>(spatial_scale),
                           static_cast<cl_int>(sampling_ratio),
                           aligned ? 1 : 0};
  const int device = input.device().index();
  cl_program program =
      plain_program(device, "plain_vision.cl", {{"A", input.scalar_type()}, {"O", input.scalar_type()}});
  PlainLaunch launch(device, program, "roi_align");
  // Named: the packed copies must live until the launch is enqueued.
  const at::Tensor packed_input = input.contiguous(), packed_rois = rois.contiguous();
  launch.arg(g).tensor_at(packed_input).tensor_at(packed_rois).tensor_at(out);
  launch.run(out.numel());
  return out;
}

at::Tensor roi_align_backward(const at::Tensor& grad, const at::Tensor& rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t batch_size, int64_t channels,
                              int64_t height, int64_t width, int64_t sampling_ratio, bool aligned) {
  check_ocl(grad, "torchvision::_roi_align_backward", "grad");
  check_same_device(grad, rois, "torchvision::_roi_align_backward", "rois");
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5,
              "torchvision::_roi_align_backward: rois must have shape [K, 5], got ", rois.sizes());
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == rois.size(0) && grad.size(1) == channels &&
                  grad.size(2) == pooled_height && grad.size(3) == pooled_width,
              "torchvision::_roi_align_backward: grad must be [K, C, pooled_height, pooled_width] = [", rois.size(0),
              ", ", channels, ", ", pooled_height, ", ", pooled_width, "], got ", grad.sizes());
  TORCH_CHECK(grad.scalar_type() == rois.scalar_type(), "torchvision::_roi_align_backward: grad (", grad.scalar_type(),
              ") and rois (", rois.scalar_type(), ") must have the same dtype");
  if (!vision_dtype(grad.scalar_type())) {
    return fallback<TorchvisionRoiAlignBackward>::call(grad, rois, spatial_scale, pooled_height, pooled_width,
                                                       batch_size, channels, height, width, sampling_ratio, aligned);
  }
  // Float atomics: as torchvision's CUDA kernel, it raises (or warns) under
  // torch.use_deterministic_algorithms(True).
  at::globalContext().alertNotDeterministic("roi_align_backward on ocl (float atomics)");
  // Summed in float whatever the dtype, and rounded once at the end.
  at::Tensor grad_input = at::zeros({batch_size, channels, height, width}, grad.options().dtype(at::kFloat));
  if (grad.numel() == 0 || grad_input.numel() == 0) return grad_input.to(grad.scalar_type());
  const RoiAlignGeometry g{rois.size(0),
                           channels,
                           height,
                           width,
                           pooled_height,
                           pooled_width,
                           static_cast<float>(spatial_scale),
                           static_cast<cl_int>(sampling_ratio),
                           aligned ? 1 : 0};
  const int device = grad.device().index();
  // The forward's program (the backward's float buffer is typed in the kernel): no second build.
  cl_program program = plain_program(device, "plain_vision.cl", {{"A", grad.scalar_type()}, {"O", grad.scalar_type()}});
  PlainLaunch launch(device, program, "roi_align_backward");
  const at::Tensor packed_grad = grad.contiguous(), packed_rois = rois.contiguous();
  launch.arg(g).tensor_at(packed_grad).tensor_at(packed_rois).tensor_at(grad_input);
  launch.run(grad.numel());
  return grad_input.to(grad.scalar_type());
}

// ---- nms ----

// The largest float not above t: `iou > t` in double, as torchvision's CPU kernel compares a float
// IoU with the double threshold, is `iou > threshold_below(t)` in float.
float threshold_below(double t) {
  float f = static_cast<float>(t);
  if (static_cast<double>(f) > t) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

constexpr std::int64_t kNmsMaskBytes = std::int64_t{256} << 20;

at::Tensor nms(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  check_ocl(dets, "torchvision::nms", "dets");
  check_same_device(dets, scores, "torchvision::nms", "scores");
  // torchvision's own checks, with its messages.
  TORCH_CHECK(dets.dim() == 2, "boxes should be a 2d tensor, got ", dets.dim(), "D");
  TORCH_CHECK(dets.size(1) == 4, "boxes should have 4 elements in dimension 1, got ", dets.size(1));
  TORCH_CHECK(scores.dim() == 1, "scores should be a 1d tensor, got ", scores.dim(), "D");
  TORCH_CHECK(dets.size(0) == scores.size(0), "boxes and scores should have same number of elements in ",
              "dimension 0, got ", dets.size(0), " and ", scores.size(0));
  TORCH_CHECK(dets.scalar_type() == scores.scalar_type(), "boxes (", dets.scalar_type(), ") and scores (",
              scores.scalar_type(), ") should have the same type");
  const std::int64_t n = dets.size(0);
  if (n == 0) return at::empty({0}, dets.options().dtype(at::kLong));
  const std::int64_t words = (n + 63) / 64;
  if (!vision_dtype(dets.scalar_type()) || n * words * 8 > kNmsMaskBytes) {
    return fallback<TorchvisionNms>::call(dets, scores, iou_threshold);
  }
  const at::Tensor order = std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));
  const at::Tensor boxes = dets.index_select(0, order).contiguous();
  // 64-bit words, as int64 tensors: their element offsets count in words, as the kernels index them.
  at::Tensor mask = at::empty({n * words}, dets.options().dtype(at::kLong));
  at::Tensor removed = at::empty({words}, dets.options().dtype(at::kLong));
  at::Tensor keep = at::empty({n}, dets.options().dtype(at::kByte));
  const int device = dets.device().index();
  cl_program program = plain_program(device, "plain_vision.cl", {{"A", dets.scalar_type()}, {"O", dets.scalar_type()}});
  {
    PlainLaunch launch(device, program, "nms_mask");
    launch.arg<cl_long>(n).arg<cl_long>(words).arg<cl_float>(threshold_below(iou_threshold)).tensor_at(boxes);
    launch.tensor_at(mask);
    launch.run(n * words);
  }
  {
    PlainLaunch launch(device, program, "nms_keep");
    launch.arg<cl_long>(n).arg<cl_long>(words).tensor_at(mask).tensor_at(removed).tensor_at(keep);
    launch.run(1);
  }
  return order.masked_select(keep.to(at::kBool));
}

}  // namespace

TORCH_LIBRARY_IMPL(torchvision, PrivateUse1, m) {
  m.impl("nms", nms);
  m.impl("roi_align", roi_align);
  m.impl("_roi_align_backward", roi_align_backward);
}

}  // namespace ocltune_torch
