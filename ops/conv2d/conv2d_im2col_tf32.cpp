// The im2col algorithm of conv2d on Hopper's warpgroup tensor cores (math "tf32", forward, groups
// = 1): the filter and each image's im2col matrix are packed into the workspace (rounded to TF32,
// in wgmma's K-major core matrices: kernels/gemm_pack_tf32.cl, conv2d_im2col_tf32.cl), the GEMM on
// packed operands multiplies them (ops/gemm/gemm_wgmma_packed.cpp), then bias and activation follow.
// Unlike the implicit GEMMs, no kernel of the hot loop gathers: the packing pass does, once per
// element, and the GEMM copies whole 16-byte rows of tiles with cp.async. The space is the GEMM
// variant's, present only where the GEMM offers it (NVIDIA compute capability 9.x).
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {

GemmShape im2col_gemm(const Conv2dShape& s) {
  return {.m = s.k, .n = s.p() * s.q(), .k = s.c * s.r * s.s, .batch = s.n, .math = MathMode::kTf32};
}

SearchSpace im2col_tf32_space(const Conv2dShape& s, const DeviceInfo& device) {
  const SearchSpace gemm = gemm_space(im2col_gemm(s), device);
  const auto packed = std::find_if(gemm.variants().begin(), gemm.variants().end(),
                                   [](const SearchSpace::Variant& v) { return v.name == "wgmma_packed_tf32"; });
  if (packed == gemm.variants().end()) return {};  // no wgmma: the algorithm is absent
  SearchSpace one(packed->name);
  for (const Parameter& p : packed->parameters) one.add(p.name, p.values, p.meaning);
  for (const Constraint& c : packed->constraints) one.constrain(c.description, c.params, c.holds);
  const SearchSpace space = drop_parameters(one, {{"WGMMA_PACKED", 1}});
  return algorithm_variant("im2col_gemm_tf32", kAlgoIm2colTf32, space.variants().front());
}

Config im2col_tf32_default(const Conv2dShape&) {
  // 64 x 64 tiles of one warpgroup, 3 stages of BK = 32: the fastest im2col configuration measured
  // on all four ResNet-50 layers of bench/gpu/targets-tf32.json (H200, probe38), whose GEMMs have
  // 64-512 rows, 49-3136 pixels per image and 256-4608 taps; small tiles keep 3-5 work-groups per SM.
  return {{"ALGO", kAlgoIm2colTf32},
          {"BM", 64},
          {"BN", 64},
          {"BK", 32},
          {"WGS", 1},
          {"STAGES", 3},
          {"LAG", 0},
          {"GROUP_M", 1}};
}

KernelLaunch im2col_pack_launch(const Conv2dShape& s, const Conv2dOperands& o, const PackedGemmSizes& sizes,
                                const cl::Buffer& dst) {
  std::vector<KernelArg> args = shape_args(s);
  args.insert(args.end(), {o.input, static_cast<cl_long>(o.input_offset), static_cast<cl_int>(sizes.k),
                           static_cast<cl_long>(sizes.rows_b * sizes.k), dst});
  return make_launch(conv_program(std::vector<std::string>{"gemm_pack_tf32.cl", "conv2d_im2col_tf32.cl"}, s, {}, {}),
                     "pack_im2col_tf32", std::move(args), sizes.k / 2, sizes.rows_b / 8, s.n, 32, 8, 1);
}

void im2col_tf32_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                      LaunchPlan& plan) {
  const GemmShape g = im2col_gemm(s);
  const PackedGemmSizes sizes = packed_gemm_sizes(g, c);
  const cl::Buffer a = workspace.get(static_cast<std::size_t>(sizes.rows_a * sizes.k * 4), kGemmPackSlotA);
  const cl::Buffer b = workspace.get(static_cast<std::size_t>(s.n * sizes.rows_b * sizes.k * 4), kGemmPackSlotB);
  // The filter (K x C x R x S) is the K x CRS matrix A, shared by every image.
  plan.kernels.push_back(
      pack_tf32_launch(1, o.weight, o.weight_offset, g.k, 0, true, g.m, g.k, sizes.rows_a, sizes.k, a));
  plan.kernels.push_back(im2col_pack_launch(s, o, sizes, b));
  GemmOperands y;  // each image's K x PQ output plane
  y.c = o.output;
  y.c_offset = o.output_offset;
  y.ldc = g.n;
  y.stride_c = g.m * g.n;
  plan.kernels.push_back(packed_gemm_launch(g, c, a, 0, b, sizes.rows_b * sizes.k, y));
  add_bias_act(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
