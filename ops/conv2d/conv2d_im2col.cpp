// The im2col algorithm of conv2d (any groups but depthwise, any stride, padding and
// dilation): the images go in chunks of CHUNK; each chunk's im2col matrices (C*R*S taps x P*Q
// pixels per image, kernels/conv2d_im2col.cl) live in the workspace, and one batched GEMM per
// group runs on them with any of the GEMM family's variants, so on a CPU the CPU GEMM kernel
// (kernels/gemm_cpu.cl) does the work at GEMM speed where the direct and implicit-GEMM kernels,
// written for GPUs, run at 1-2% of the FMA peak. The images of a chunk go side by side in blocks of
// WIDE (one GEMM of WIDE * P * Q columns per block, a batch entry per block): small images (7x7,
// 14x14) would otherwise make GEMMs of 49 or 196 columns, whose tiles a GPU fills poorly, and a
// weight gradient of one partial per image. Per block b and group g (Kg = K / groups filters,
// CgRS = C / groups * R * S taps, rows of g's taps and filters contiguous, WPQ = WIDE * P * Q):
//   fwd:        out[b][g] (Kg x WPQ)    = w[g] (Kg x CgRS) * cols[b][g] (CgRS x WPQ), then into y
//               (directly where WIDE is 1), then bias + act
//   bwd_data:   cols[b][g] (CgRS x WPQ) = w[g]^T * dy[b][g] (Kg x WPQ) (dy gathered into blocks
//               where WIDE > 1), then col2im into dx
//   bwd_weight: partial[b][g]           = dy[b][g] * cols[b][g]^T (Kg x CgRS), summed over the
//               blocks in order (no atomics; written to dw directly where one block holds every
//               image), then the bias gradient
// With 16-bit storage the im2col matrices, blocks and partials are of the type the GEMM variant
// reads (work_dtype): 16-bit for the variants on packed operands (tensor cores on NVIDIA), at the
// price of a second rounding where a GEMM's 16-bit C goes on into col2im's or the blocks' sums (the
// tolerance allows it; the GEMM family has no 16-bit-input, fp32-output GEMM); fp32 for every other
// variant, which would widen a 16-bit matrix into an fp32 copy first (an extra pass over a matrix
// nine times the input for 3x3 filters: twice the time of the fp32 convolution on PoCL). There the
// gathers read 16-bit and write fp32, the weights are widened once, the GEMMs run in fp32 on blocks
// (every direction goes through blocks) and the last pass rounds once.
#include <algorithm>
#include <numeric>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {
namespace {

// The im2col matrices of one chunk stay within this many bytes, whatever CHUNK says.
constexpr std::int64_t kColumnsBytes = std::int64_t{256} << 20;
constexpr std::int64_t kIm2colWg = 64;  // IM2COL_WG of kernels/conv2d_im2col.cl

std::int64_t taps(const Conv2dShape& s) { return s.c_per_group() * s.r * s.s; }  // CgRS
std::int64_t pixels(const Conv2dShape& s) { return s.p() * s.q(); }              // PQ

// A launch whose work-group size the driver chooses (the CPU kernels have no local memory).
KernelLaunch driver_local(KernelLaunch launch) {
  launch.local = cl::NullRange;
  return launch;
}

// One group's GEMM over `blocks` blocks of `wide` images.
GemmShape group_gemm(const Conv2dShape& s, std::int64_t blocks, std::int64_t wide) {
  const std::int64_t kg = s.k_per_group(), columns = wide * pixels(s);
  switch (s.dir) {
    case ConvDirection::kForward:
      return {.m = kg, .n = columns, .k = taps(s), .batch = blocks, .math = s.math, .dtype = s.dtype};
    case ConvDirection::kBackwardData:
      return {.m = taps(s), .n = columns, .k = kg, .batch = blocks, .trans_a = true, .math = s.math, .dtype = s.dtype};
    default:
      return {.m = kg, .n = taps(s), .k = columns, .batch = blocks, .trans_b = true, .math = s.math, .dtype = s.dtype};
  }
}

// Images per GEMM block in a chunk of `images`: WIDE (a power of two), or the largest power of two
// below it that divides the chunk (a last, shorter chunk).
std::int64_t block_images(const Config& c, std::int64_t images) { return std::gcd(at(c, "WIDE"), images); }

// The type of the im2col matrices, blocks and partials (see the top of the file).
DType work_dtype(const Conv2dShape& s, const Config& c) {
  return s.dtype != DType::kFp32 && !gemm_reads_16bit(gemm_part(c, {"CHUNK", "WIDE"})) ? DType::kFp32 : s.dtype;
}

// Images per chunk: CHUNK, within the workspace limits (at least one image).
std::int64_t chunk_images(const Conv2dShape& s, const Config& c) {
  const std::int64_t bytes = static_cast<std::int64_t>(dtype_bytes(work_dtype(s, c)));
  const std::int64_t columns = s.c * s.r * s.s * pixels(s) * bytes;
  std::int64_t images = std::min(at(c, "CHUNK"), s.n);
  images = std::min(images, std::max<std::int64_t>(1, kColumnsBytes / columns));
  if (s.dir == ConvDirection::kBackwardWeight) {
    images = std::min(images, std::max<std::int64_t>(1, kPartialBytes / (s.weight_elements() * bytes)));
  }
  return std::max<std::int64_t>(1, images);
}

// The largest power of two of images, at most 64 and at most next_pow2(N), whose im2col matrices
// take at most `bytes`: large enough for a batched GEMM to fill a device with small images, small
// enough for a CPU's caches (16 MiB) to hold what the GEMM reads right after it was gathered.
std::int64_t default_chunk(const Conv2dShape& s, DType work, std::int64_t bytes) {
  const std::int64_t columns = s.c * s.r * s.s * pixels(s) * static_cast<std::int64_t>(dtype_bytes(work));
  std::int64_t chunk = 1;
  while (chunk < 64 && chunk < s.n && 2 * chunk * columns <= bytes) chunk *= 2;
  return chunk;
}

// CHUNK and WIDE in front of a GEMM-based space's every variant.
SearchSpace with_chunk(const SearchSpace& gemm_based, const Conv2dShape& s) {
  // Powers of two up to 64 and up to next_pow2(N): more images than the batch has are the same pass.
  std::vector<std::int64_t> chunks;
  for (std::int64_t chunk = 1; chunk <= std::min<std::int64_t>(64, next_pow2(s.n)); chunk *= 2) chunks.push_back(chunk);
  SearchSpace out;
  for (const SearchSpace::Variant& v : gemm_based.variants()) {
    SearchSpace part(v.name);
    for (const Parameter& p : v.parameters) {
      part.add(p.name, p.values, p.meaning);
      if (p.name == "ALGO") {
        part.add("CHUNK", chunks, "images per im2col pass");
        part.add("WIDE", chunks, "images side by side in one GEMM (a block)");
      }
    }
    for (const Constraint& c : v.constraints) part.constrain(c.description, c.params, c.holds);
    part.constrain("a block is within a chunk", {"WIDE", "CHUNK"},
                   [](const Config& c) { return c.at("WIDE") <= c.at("CHUNK"); });
    // Blocks of more than 4096 pixels gain nothing over one GEMM per image (the GEMM is wide
    // already) and would multiply the space by each size: a GPU's space held a million points.
    const std::int64_t pq = pixels(s);
    part.constrain("a block of several images has at most 4096 pixels", {"WIDE"},
                   [pq](const Config& c) { return c.at("WIDE") == 1 || c.at("WIDE") * pq <= 4096; });
    out = SearchSpace::unite({std::move(out), std::move(part)});
  }
  return out;
}

// conv2d_im2col.cl for matrices and blocks of type `work`.
ProgramSource im2col_program(const Conv2dShape& s, DType work) {
  ProgramSource program = conv_program("conv2d_im2col.cl", s, {}, {});
  if (work != s.dtype) program.defines.emplace_back("WORK_FP32", "1");
  return program;
}

// The gather into the im2col matrices: per element on GPUs, per tap row on CPUs (`cpu`, the plans
// of the CPU GEMM variant; see kernels/conv2d_im2col.cl).
KernelLaunch im2col_launch(const Conv2dShape& s, const Conv2dOperands& o, std::int64_t first, std::int64_t images,
                           std::int64_t wide, const cl::Buffer& cols, DType work, bool cpu) {
  std::vector<KernelArg> args = shape_args(s);
  args.insert(args.end(), {o.input, static_cast<cl_long>(o.input_offset), static_cast<cl_int>(first),
                           static_cast<cl_int>(wide), cols});
  ProgramSource program = im2col_program(s, work);
  if (cpu)
    return driver_local(
        make_launch(std::move(program), "conv2d_im2col_cpu", std::move(args), s.c * s.r * s.s, images, 1, 1, 1, 1));
  return make_launch(std::move(program), "conv2d_im2col", std::move(args), ceil_div(pixels(s), kIm2colWg) * kIm2colWg,
                     s.c, images, kIm2colWg, 1, 1);
}

// The weights (all groups) widened into `w32` for GEMMs on fp32 matrices.
KernelLaunch widen_weights_launch(const Conv2dShape& s, const Conv2dOperands& o, const cl::Buffer& w32) {
  const std::int64_t count = s.weight_elements();
  return make_launch(im2col_program(s, DType::kFp32), "conv2d_widen_weights",
                     {static_cast<cl_long>(count), o.weight, static_cast<cl_long>(o.weight_offset), w32},
                     ceil_div(count, 256) * 256, 1, 1, 256, 1, 1);
}

// The scatter back from the im2col shape into dx: per element on GPUs, per input row on CPUs.
KernelLaunch col2im_launch(const Conv2dShape& s, const Conv2dOperands& o, std::int64_t first, std::int64_t images,
                           std::int64_t wide, const cl::Buffer& cols, DType work, bool cpu) {
  std::vector<KernelArg> args = shape_args(s);
  args.insert(args.end(), {cols, static_cast<cl_int>(wide), o.input, static_cast<cl_long>(o.input_offset),
                           static_cast<cl_int>(first)});
  ProgramSource program = im2col_program(s, work);
  if (cpu)
    return driver_local(
        make_launch(std::move(program), "conv2d_col2im_cpu", std::move(args), s.h, s.c, images, 1, 1, 1));
  return make_launch(std::move(program), "conv2d_col2im", std::move(args), ceil_div(s.h * s.w, kIm2colWg) * kIm2colWg,
                     s.c, images, kIm2colWg, 1, 1);
}

// dy (or y) of the chunk's images to their blocks (to_blocks), or back.
KernelLaunch blocks_launch(const Conv2dShape& s, const Conv2dOperands& o, std::int64_t first, std::int64_t images,
                           std::int64_t wide, const cl::Buffer& blocks, DType work, bool to_blocks) {
  std::vector<KernelArg> args = shape_args(s);
  const cl_long images_offset = static_cast<cl_long>(o.output_offset);
  if (to_blocks) {
    args.insert(args.end(), {o.output, images_offset, static_cast<cl_int>(first), static_cast<cl_int>(wide), blocks});
  } else {
    args.insert(args.end(), {blocks, static_cast<cl_int>(wide), o.output, images_offset, static_cast<cl_int>(first)});
  }
  return make_launch(im2col_program(s, work), to_blocks ? "conv2d_images_to_blocks" : "conv2d_blocks_to_images",
                     std::move(args), ceil_div(pixels(s), kIm2colWg) * kIm2colWg, s.k, images, kIm2colWg, 1, 1);
}

}  // namespace

SearchSpace im2col_space(const Conv2dShape& s, const DeviceInfo& device) {
  SearchSpace gemm = gemm_based_space("im2col_gemm", kAlgoIm2col, group_gemm(s, s.n, 1), device);
  // On a GPU both operands are staged in local memory (SA = SB = 1), as in every tuned H200 GEMM
  // and im2col row: a quarter of the space, which with CHUNK and WIDE ran to a million points.
  if (device.type == DeviceType::kGpu) gemm = restrict_values(gemm, {{"SA", {1}}, {"SB", {1}}});
  return with_chunk(gemm, s);
}

// A GPU's: chunks of up to 64 MiB of im2col matrices (a weight gradient's: up to kColumnsBytes), and
// blocks of at least 1024 pixels where the chunk has the images (GEMMs wide enough for 128-column
// tiles). A weight gradient's GEMMs have the filters x taps of one block each, a few tiles: its
// work-groups are the chunk's blocks times those tiles, so larger chunks fill the device. Measured on
// the H200 (ocltune eval, one tile): resnet's 64-channel 56x56 weight gradient took 1.24 ms at
// CHUNK 8, 1.07 at 16, 0.92 at 32; the 128-channel 28x28 one 0.69 at 16, 0.60 at 32.
Config im2col_default(const Conv2dShape& s, const DeviceInfo* gpu) {
  const GemmShape g = group_gemm(s, s.n, 1);
  Config c = gemm_default_config();
  c["MWG"] = g.m <= 16 ? 16 : 32;
  c["NWG"] = g.n <= 16 ? 16 : 32;
  c["ALGO"] = kAlgoIm2col;
  c["CHUNK"] = default_chunk(s, work_dtype(s, c),
                             s.dir == ConvDirection::kBackwardWeight ? kColumnsBytes : std::int64_t{64} << 20);
  std::int64_t wide = 1;
  while (wide < c["CHUNK"] && wide * pixels(s) < 1024) wide *= 2;
  c["WIDE"] = wide;
  if (!gpu) return c;
  // The tile is chosen for the GEMMs as launched: a chunk's blocks, times the groups.
  const std::int64_t chunk = chunk_images(s, c);
  GemmShape launched = group_gemm(s, chunk / block_images(c, chunk), block_images(c, chunk));
  launched.batch *= s.groups;
  return on_gpu_tile(c, launched, *gpu, im2col_space(s, *gpu));
}

// A CPU's: one image per GEMM, chunks whose matrices stay in the caches.
Config im2col_cpu_default(const Conv2dShape& s) {
  Config c = gemm_cpu_default_config(group_gemm(s, s.n, 1));
  c["ALGO"] = kAlgoIm2col;
  c["CHUNK"] = default_chunk(s, work_dtype(s, c), std::int64_t{16} << 20);
  c["WIDE"] = 1;
  return c;
}

void im2col_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                 LaunchPlan& plan) {
  const Config gemm_config = gemm_part(c, {"CHUNK", "WIDE"});
  const bool cpu = is_cpu_config(gemm_config);  // the CPU GEMM kernel: CPU-shaped gathers too
  const std::int64_t kg = s.k_per_group(), cgrs = taps(s), pq = pixels(s);
  const std::int64_t image_columns = s.c * s.r * s.s * pq;  // one image's im2col matrix, all groups
  const std::int64_t image_outputs = s.k * pq;              // one image's y or dy
  const std::int64_t per_chunk = chunk_images(s, c);
  const DType work = work_dtype(s, c);   // of the im2col matrices, blocks and partials
  const bool widened = work != s.dtype;  // fp32 matrices for 16-bit tensors: the GEMMs see no tensor
  const std::size_t bytes = dtype_bytes(work);
  const cl::Buffer cols = workspace.get(static_cast<std::size_t>(per_chunk * image_columns) * bytes, kColumnsSlot);
  // y or dy in blocks, where a chunk has blocks of more than one image or the GEMMs need fp32 copies.
  const bool any_blocks = (at(c, "WIDE") > 1 && per_chunk > 1) || widened;
  const cl::Buffer blocks =
      any_blocks ? workspace.get(static_cast<std::size_t>(per_chunk * image_outputs) * bytes, kBlocksSlot)
                 : cl::Buffer();
  // The weight gradient is written by the GEMMs where one block holds every image and is of dw's
  // type; otherwise the blocks' partials are summed into dw, chunk after chunk.
  const bool weight_grad = s.dir == ConvDirection::kBackwardWeight;
  const std::int64_t plane = s.weight_elements();
  const bool partials = weight_grad && (block_images(c, std::min(per_chunk, s.n)) < s.n || widened);
  // The weights as the fp32 GEMMs of the other directions read them.
  cl::Buffer weights = o.weight;
  std::int64_t weights_at = o.weight_offset;
  if (widened && !weight_grad) {
    weights = workspace.get(static_cast<std::size_t>(plane) * sizeof(float), kWeightsSlot);
    weights_at = 0;
    plan.kernels.push_back(widen_weights_launch(s, o, weights));
  }
  const cl::Buffer partial =
      partials ? workspace.get(static_cast<std::size_t>(per_chunk * plane) * bytes, kPartialSlot) : cl::Buffer();
  for (std::int64_t first = 0; first < s.n; first += per_chunk) {
    const std::int64_t images = std::min(per_chunk, s.n - first);
    const std::int64_t wide = block_images(c, images), block_count = images / wide, columns = wide * pq;
    // The GEMMs' view of y or dy: the tensor itself (one image per block), or its blocks.
    const bool in_blocks = wide > 1 || widened;
    const cl::Buffer& outputs = in_blocks ? blocks : o.output;
    const std::int64_t outputs_at = in_blocks ? 0 : o.output_offset + first * image_outputs;
    if (s.dir != ConvDirection::kBackwardData)
      plan.kernels.push_back(im2col_launch(s, o, first, images, wide, cols, work, cpu));
    if (s.dir != ConvDirection::kForward && in_blocks) {
      plan.kernels.push_back(blocks_launch(s, o, first, images, wide, blocks, work, true));
    }
    GemmShape g = group_gemm(s, block_count, wide);
    g.dtype = work;
    for (std::int64_t group = 0; group < s.groups; ++group) {
      GemmOperands m;
      const std::int64_t group_weights = weights_at + group * kg * cgrs, group_taps = group * cgrs * columns,
                         group_outputs = outputs_at + group * kg * columns;
      if (s.dir == ConvDirection::kForward || s.dir == ConvDirection::kBackwardData) {
        const bool forward = s.dir == ConvDirection::kForward;
        m.a = weights;  // w[g] is Kg x CgRS in both directions; bwd_data reads it transposed
        m.a_offset = group_weights;
        m.lda = cgrs;
        m.b = forward ? cols : outputs;
        m.b_offset = forward ? group_taps : group_outputs;
        m.ldb = columns;
        m.stride_b = forward ? wide * image_columns : wide * image_outputs;
        m.c = forward ? outputs : cols;
        m.c_offset = forward ? group_outputs : group_taps;
        m.ldc = columns;
        m.stride_c = forward ? wide * image_outputs : wide * image_columns;
      } else {
        m.a = outputs;
        m.a_offset = group_outputs;
        m.lda = columns;
        m.stride_a = wide * image_outputs;
        m.b = cols;
        m.b_offset = group_taps;
        m.ldb = columns;
        m.stride_b = wide * image_columns;
        m.c = partials ? partial : o.weight;
        m.c_offset = (partials ? 0 : o.weight_offset) + group * kg * cgrs;
        m.ldc = cgrs;
        m.stride_c = plane;
      }
      for (KernelLaunch& launch : gemm_plan(g, m, gemm_config, workspace).kernels) {
        plan.kernels.push_back(std::move(launch));
      }
    }
    if (s.dir == ConvDirection::kForward && in_blocks) {
      plan.kernels.push_back(blocks_launch(s, o, first, images, wide, blocks, work, false));
    }
    if (s.dir == ConvDirection::kBackwardData)
      plan.kernels.push_back(col2im_launch(s, o, first, images, wide, cols, work, cpu));
    if (partials) {
      plan.kernels.push_back(
          sum_images_launch(s, block_count, plane, partial, o, first > 0, first + images == s.n, workspace, work));
    }
  }
  if (s.dir == ConvDirection::kForward) add_bias_act(s, o, plan);
  if (weight_grad) add_bias_grad(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
