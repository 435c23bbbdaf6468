// The 1x1 algorithm of conv2d: a 1x1, stride-1, unpadded convolution is a GEMM per image on the
// NCHW planes, run by the GEMM family's kernels with its own space (in math "tf32" on NVIDIA also
// its tensor-core variant); bias and activation follow as an elementwise epilogue (the GEMM
// kernels are not changed for them). 16-bit tensors are the GEMM's 16-bit operands as they are, so
// the GEMM family's 16-bit variants (tensor cores on NVIDIA) serve them. The GEMM rounds its C to
// 16 bits: a result that goes on through the epilogue or the per-image sum is rounded twice
// (Conv2dEvaluation's tolerance allows it); keeping an fp32 C would need a GEMM of 16-bit inputs
// and fp32 output, which the family does not have.
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"
#include "ops/gemm/gemm.h"

namespace ocltune::conv2d_detail {
namespace {

// One GEMM per image (batched):
//   fwd:        y[n] (K x HW)  = w (K x C)    * x[n] (C x HW)
//   bwd_data:   dx[n] (C x HW) = w^T (C x K)  * dy[n] (K x HW)
//   bwd_weight: dw (K x C)     = sum over n of dy[n] (K x HW) * x[n]^T (HW x C): a batched GEMM
//               into per-image partials, then a pass that sums them
GemmShape plane_gemm(const Conv2dShape& s) {
  const std::int64_t hw = s.h * s.w;
  switch (s.dir) {
    case ConvDirection::kForward: return {.m = s.k, .n = hw, .k = s.c, .batch = s.n, .math = s.math, .dtype = s.dtype};
    case ConvDirection::kBackwardData:
      return {.m = s.c, .n = hw, .k = s.k, .batch = s.n, .trans_a = true, .math = s.math, .dtype = s.dtype};
    default: return {.m = s.k, .n = s.c, .k = hw, .trans_b = true, .math = s.math, .dtype = s.dtype};
  }
}

}  // namespace

SearchSpace gemm1x1_space(const Conv2dShape& s, const DeviceInfo& device) {
  return gemm_based_space("gemm1x1", kAlgoGemm1x1, plane_gemm(s), device);
}

Config gemm1x1_default(const Conv2dShape& s, const DeviceInfo* gpu) {
  const GemmShape g = plane_gemm(s);
  Config c = gemm_default_config();
  c["MWG"] = g.m <= 16 ? 16 : 32;
  c["NWG"] = g.n <= 16 ? 16 : 32;
  c["ALGO"] = kAlgoGemm1x1;
  if (!gpu) return c;
  GemmShape launched = g;  // the weight gradient's GEMM runs batched over the images (partials)
  if (s.dir == ConvDirection::kBackwardWeight && s.n > 1) launched.batch = s.n;
  return on_gpu_tile(c, launched, *gpu, gemm1x1_space(s, *gpu));
}

Config gemm1x1_cpu_default(const Conv2dShape& s) {
  Config c = gemm_cpu_default_config(plane_gemm(s));
  c["ALGO"] = kAlgoGemm1x1;
  return c;
}

void gemm1x1_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                  LaunchPlan& plan) {
  // Every parameter but ALGO is the GEMM's, whatever gemm_space declares now.
  const Config gemm_config = gemm_part(c);
  GemmShape g = plane_gemm(s);
  const std::int64_t hw = s.h * s.w;
  const auto append = [&](const GemmOperands& operands) {
    for (KernelLaunch& launch : gemm_plan(g, operands, gemm_config, workspace).kernels) {
      plan.kernels.push_back(std::move(launch));
    }
  };
  GemmOperands ops;
  if (s.dir == ConvDirection::kForward || s.dir == ConvDirection::kBackwardData) {
    const bool forward = s.dir == ConvDirection::kForward;
    ops.a = o.weight;
    ops.a_offset = o.weight_offset;
    ops.lda = s.c;  // w is K x C in both directions; bwd_data reads it transposed
    ops.stride_a = 0;
    ops.b = forward ? o.input : o.output;
    ops.b_offset = forward ? o.input_offset : o.output_offset;
    ops.ldb = hw;
    ops.stride_b = g.k * hw;
    ops.c = forward ? o.output : o.input;
    ops.c_offset = forward ? o.output_offset : o.input_offset;
    ops.ldc = hw;
    ops.stride_c = g.m * hw;
    append(ops);
    if (forward) add_bias_act(s, o, plan);
    return;
  }
  // Backward weight: one batched GEMM writes each image's partial dw into a workspace and one pass
  // sums them, instead of one accumulating GEMM per image (a batch-32 call planned 32 serial
  // launches). The workspace holds at most kPartialBytes; larger batches go in chunks of images.
  ops.a = o.output;
  ops.lda = hw;
  ops.b = o.input;
  ops.ldb = hw;
  if (s.n == 1) {  // one image: the GEMM writes dw itself (a partial and a sum would only cost time)
    ops.a_offset = o.output_offset;
    ops.b_offset = o.input_offset;
    ops.c = o.weight;
    ops.c_offset = o.weight_offset;
    ops.ldc = s.c;
    append(ops);
    add_bias_grad(s, o, plan);
    return;
  }
  const std::int64_t plane = s.k * s.c;
  const std::int64_t bytes = static_cast<std::int64_t>(dtype_bytes(s.dtype));  // the partials are the GEMM's C
  const std::int64_t per_chunk = std::clamp<std::int64_t>(kPartialBytes / (plane * bytes), 1, s.n);
  const cl::Buffer partial = workspace.get(static_cast<std::size_t>(per_chunk * plane * bytes), kPartialSlot);
  ops.stride_a = s.k * hw;
  ops.stride_b = s.c * hw;
  ops.c = partial;
  ops.c_offset = 0;
  ops.ldc = s.c;
  ops.stride_c = plane;
  g.beta = 0.0f;
  for (std::int64_t first = 0; first < s.n; first += per_chunk) {
    const std::int64_t images = std::min(per_chunk, s.n - first);
    g.batch = images;
    ops.a_offset = o.output_offset + first * s.k * hw;
    ops.b_offset = o.input_offset + first * s.c * hw;
    append(ops);
    plan.kernels.push_back(
        sum_images_launch(s, images, plane, partial, o, first > 0, first + images == s.n, workspace, s.dtype));
  }
  add_bias_grad(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
