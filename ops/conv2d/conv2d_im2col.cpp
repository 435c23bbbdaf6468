// The im2col algorithm of conv2d in fp32 (any groups but depthwise, any stride, padding and
// dilation): the images go in chunks of CHUNK; each chunk's im2col matrices (C*R*S taps x P*Q
// pixels per image, kernels/conv2d_im2col.cl) live in the workspace, and one batched GEMM per
// group runs on them with any of the GEMM family's variants, so on a CPU the CPU GEMM kernel
// (kernels/gemm_cpu.cl) does the work at GEMM speed where the direct and implicit-GEMM kernels,
// written for GPUs, run at 1-2% of the FMA peak. Per image n and group g (Kg = K / groups filters,
// CgRS = C / groups * R * S taps, rows of g's taps and filters contiguous):
//   fwd:        y[n][g] (Kg x PQ)      = w[g] (Kg x CgRS) * cols[n][g] (CgRS x PQ), then bias + act
//   bwd_data:   cols[n][g] (CgRS x PQ) = w[g]^T * dy[n][g] (Kg x PQ), then col2im into dx
//   bwd_weight: partial[n][g]          = dy[n][g] * cols[n][g]^T (Kg x CgRS), summed over the
//               images in order (no atomics), then the bias gradient
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {
namespace {

// The im2col matrices of one chunk stay within this many bytes, whatever CHUNK says.
constexpr std::int64_t kColumnsBytes = std::int64_t{256} << 20;
constexpr std::int64_t kIm2colWg = 64;  // IM2COL_WG of kernels/conv2d_im2col.cl

std::int64_t taps(const Conv2dShape& s) { return s.c_per_group() * s.r * s.s; }  // CgRS
std::int64_t pixels(const Conv2dShape& s) { return s.p() * s.q(); }              // PQ

// One group's GEMM over `images` images.
GemmShape group_gemm(const Conv2dShape& s, std::int64_t images) {
  const std::int64_t kg = s.k_per_group();
  switch (s.dir) {
    case ConvDirection::kForward: return {.m = kg, .n = pixels(s), .k = taps(s), .batch = images, .math = s.math};
    case ConvDirection::kBackwardData:
      return {.m = taps(s), .n = pixels(s), .k = kg, .batch = images, .trans_a = true, .math = s.math};
    default: return {.m = kg, .n = taps(s), .k = pixels(s), .batch = images, .trans_b = true, .math = s.math};
  }
}

// Images per chunk: CHUNK, within the workspace limits (at least one image).
std::int64_t chunk_images(const Conv2dShape& s, const Config& c) {
  const std::int64_t columns = s.c * s.r * s.s * pixels(s) * 4;
  std::int64_t images = std::min(at(c, "CHUNK"), s.n);
  images = std::min(images, std::max<std::int64_t>(1, kColumnsBytes / columns));
  if (s.dir == ConvDirection::kBackwardWeight) {
    images = std::min(images, std::max<std::int64_t>(1, kPartialBytes / (s.weight_elements() * 4)));
  }
  return std::max<std::int64_t>(1, images);
}

// The largest power of two of images, at most 64 and at most next_pow2(N), whose im2col matrices
// take at most 16 MiB: large enough for a batched GEMM to fill a device with small images, small
// enough for a CPU's caches to hold what the GEMM reads right after it was gathered.
std::int64_t default_chunk(const Conv2dShape& s) {
  const std::int64_t columns = s.c * s.r * s.s * pixels(s) * 4;
  std::int64_t chunk = 1;
  while (chunk < 64 && chunk < s.n && 2 * chunk * columns <= (std::int64_t{16} << 20)) chunk *= 2;
  return chunk;
}

// CHUNK in front of a GEMM-based space's every variant.
SearchSpace with_chunk(const SearchSpace& gemm_based, const Conv2dShape& s) {
  // Powers of two up to 64 and up to next_pow2(N): more images than the batch has are the same pass.
  std::vector<std::int64_t> chunks;
  for (std::int64_t chunk = 1; chunk <= std::min<std::int64_t>(64, next_pow2(s.n)); chunk *= 2) chunks.push_back(chunk);
  SearchSpace out;
  for (const SearchSpace::Variant& v : gemm_based.variants()) {
    SearchSpace part(v.name);
    for (const Parameter& p : v.parameters) {
      part.add(p.name, p.values, p.meaning);
      if (p.name == "ALGO") part.add("CHUNK", chunks, "images per im2col pass");
    }
    for (const Constraint& c : v.constraints) part.constrain(c.description, c.params, c.holds);
    out = SearchSpace::unite({std::move(out), std::move(part)});
  }
  return out;
}

KernelLaunch im2col_launch(const Conv2dShape& s, const Conv2dOperands& o, std::int64_t first, std::int64_t images,
                           const cl::Buffer& cols) {
  std::vector<KernelArg> args = shape_args(s);
  args.insert(args.end(), {o.input, static_cast<cl_long>(o.input_offset), static_cast<cl_int>(first), cols});
  return make_launch(conv_program("conv2d_im2col.cl", s, {}, {}), "conv2d_im2col", std::move(args),
                     ceil_div(pixels(s), kIm2colWg) * kIm2colWg, s.c * s.r * s.s, images, kIm2colWg, 1, 1);
}

KernelLaunch col2im_launch(const Conv2dShape& s, const Conv2dOperands& o, std::int64_t first, std::int64_t images,
                           const cl::Buffer& cols) {
  std::vector<KernelArg> args = shape_args(s);
  args.insert(args.end(), {cols, o.input, static_cast<cl_long>(o.input_offset), static_cast<cl_int>(first)});
  return make_launch(conv_program("conv2d_im2col.cl", s, {}, {}), "conv2d_col2im", std::move(args),
                     ceil_div(s.h * s.w, kIm2colWg) * kIm2colWg, s.c, images, kIm2colWg, 1, 1);
}

}  // namespace

SearchSpace im2col_space(const Conv2dShape& s, const DeviceInfo& device) {
  return with_chunk(gemm_based_space("im2col_gemm", kAlgoIm2col, group_gemm(s, s.n), device), s);
}

Config im2col_default(const Conv2dShape& s) {
  const GemmShape g = group_gemm(s, s.n);
  Config c = gemm_default_config();
  c["MWG"] = g.m <= 16 ? 16 : 32;
  c["NWG"] = g.n <= 16 ? 16 : 32;
  c["ALGO"] = kAlgoIm2col;
  c["CHUNK"] = default_chunk(s);
  return c;
}

Config im2col_cpu_default(const Conv2dShape& s) {
  Config c = gemm_cpu_default_config(group_gemm(s, s.n));
  c["ALGO"] = kAlgoIm2col;
  c["CHUNK"] = default_chunk(s);
  return c;
}

void im2col_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                 LaunchPlan& plan) {
  const Config gemm_config = gemm_part(c, {"CHUNK"});
  const std::int64_t kg = s.k_per_group(), cgrs = taps(s), pq = pixels(s);
  const std::int64_t image_columns = s.c * s.r * s.s * pq;  // one image's im2col matrix, all groups
  const std::int64_t per_chunk = chunk_images(s, c);
  const cl::Buffer cols = workspace.get(static_cast<std::size_t>(per_chunk * image_columns * 4), kColumnsSlot);
  // The weight gradient of a single image is written by its GEMMs; otherwise per-image partials
  // are summed into dw, chunk after chunk.
  const bool weight_grad = s.dir == ConvDirection::kBackwardWeight;
  const std::int64_t plane = s.weight_elements();
  const bool partials = weight_grad && s.n > 1;
  const cl::Buffer partial =
      partials ? workspace.get(static_cast<std::size_t>(per_chunk * plane * 4), kPartialSlot) : cl::Buffer();
  for (std::int64_t first = 0; first < s.n; first += per_chunk) {
    const std::int64_t images = std::min(per_chunk, s.n - first);
    if (s.dir != ConvDirection::kBackwardData) plan.kernels.push_back(im2col_launch(s, o, first, images, cols));
    const GemmShape g = group_gemm(s, images);
    const std::int64_t outputs = o.output_offset + first * s.k * pq;  // y or dy of the chunk's first image
    for (std::int64_t group = 0; group < s.groups; ++group) {
      GemmOperands m;
      const std::int64_t group_weights = o.weight_offset + group * kg * cgrs, group_taps = group * cgrs * pq,
                         group_outputs = outputs + group * kg * pq;
      if (s.dir == ConvDirection::kForward || s.dir == ConvDirection::kBackwardData) {
        const bool forward = s.dir == ConvDirection::kForward;
        m.a = o.weight;  // w[g] is Kg x CgRS in both directions; bwd_data reads it transposed
        m.a_offset = group_weights;
        m.lda = cgrs;
        m.b = forward ? cols : o.output;
        m.b_offset = forward ? group_taps : group_outputs;
        m.ldb = pq;
        m.stride_b = forward ? image_columns : s.k * pq;
        m.c = forward ? o.output : cols;
        m.c_offset = forward ? group_outputs : group_taps;
        m.ldc = pq;
        m.stride_c = forward ? s.k * pq : image_columns;
      } else {
        m.a = o.output;
        m.a_offset = group_outputs;
        m.lda = pq;
        m.stride_a = s.k * pq;
        m.b = cols;
        m.b_offset = group_taps;
        m.ldb = pq;
        m.stride_b = image_columns;
        m.c = partials ? partial : o.weight;
        m.c_offset = (partials ? 0 : o.weight_offset) + group * kg * cgrs;
        m.ldc = cgrs;
        m.stride_c = plane;
      }
      for (KernelLaunch& launch : gemm_plan(g, m, gemm_config, workspace).kernels) {
        plan.kernels.push_back(std::move(launch));
      }
    }
    if (s.dir == ConvDirection::kBackwardData) plan.kernels.push_back(col2im_launch(s, o, first, images, cols));
    if (partials) plan.kernels.push_back(sum_images_launch(images, plane, partial, o, first > 0));
  }
  if (s.dir == ConvDirection::kForward) add_bias_act(s, o, plan);
  if (weight_grad) add_bias_grad(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
