// The tensor-core implicit-GEMM algorithm of conv2d (kernels/conv2d_igemm_mma.cl), math "tf32":
// the tensor-core GEMM's space (ops/gemm/gemm_mma.cpp) over the same per-group GEMMs as the FMA
// implicit GEMM, offered only where the GEMM offers it (NVIDIA, compute capability >= 8.0).
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {

SearchSpace igemm_tf32_space(const Conv2dShape& s, const DeviceInfo& device) {
  GemmShape g = implicit_gemm(s);
  g.math = MathMode::kTf32;
  const SearchSpace gemm = gemm_space(g, device);
  const auto mma = std::find_if(gemm.variants().begin(), gemm.variants().end(),
                                [](const SearchSpace::Variant& v) { return v.name == "mma_tf32"; });
  if (mma == gemm.variants().end()) return {};  // no tensor cores: the algorithm is absent
  SearchSpace one(mma->name);
  for (const Parameter& p : mma->parameters) one.add(p.name, p.values, p.meaning);
  for (const Constraint& c : mma->constraints) one.constrain(c.description, c.params, c.holds);
  // The gathered im2col matrix has no 16-byte rows to copy with cp.async: tiles go through
  // registers (STAGES = 0, so FRAG_DBUF = 0); the kernel keeps the plain launch order (GROUP_M = 1). Fewer tile
  // values than the GEMM, so that this algorithm does not crowd the others out of a random search.
  const SearchSpace space =
      restrict_values(drop_parameters(one, {{"MMA", 1}, {"STAGES", 0}, {"GROUP_M", 1}, {"FRAG_DBUF", 0}}),
                      {{"BM", {32, 64, 128}}, {"BN", {32, 64, 128}}, {"WM", {1, 2, 4}}, {"WN", {1, 2, 4}}});
  return algorithm_variant("implicit_gemm_tf32", kAlgoImplicitGemmTf32, space.variants().front());
}

Config igemm_tf32_default(const Conv2dShape& s) {
  // 64x64 tiles of four 32x32 warp tiles, shrunk to 32 along a GEMM dimension of 32 or less.
  const GemmShape g = implicit_gemm(s);
  return {{"ALGO", kAlgoImplicitGemmTf32},
          {"BM", g.m <= 32 ? 32 : 64},
          {"BN", g.n <= 32 ? 32 : 64},
          {"BK", 16},
          {"WM", 2},
          {"WN", 2},
          {"DBUF", 1},
          {"LDSM", 0},
          {"BVEC", 0},
          {"SWIZZLE", 0}};
}

void igemm_tf32_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, LaunchPlan& plan) {
  const GemmShape g = implicit_gemm(s);
  ProgramSource program =
      conv_program(std::vector<std::string>{"conv2d_igemm_gather.cl", "mma_tf32.cl", "conv2d_igemm_mma.cl"}, s, c,
                   {"BM", "BN", "BK", "WM", "WN", "DBUF", "LDSM", "BVEC", "SWIZZLE"});
  program.defines.emplace_back("DIR", std::to_string(static_cast<int>(s.dir)));
  const std::int64_t bm = at(c, "BM"), bn = at(c, "BN"), wm = at(c, "WM"), wn = at(c, "WN");
  plan.kernels.push_back(make_launch(std::move(program), "conv2d_igemm_mma", implicit_gemm_args(s, o),
                                     ceil_div(g.n, bn) * 32 * wn, ceil_div(g.m, bm) * wm, s.groups, 32 * wn, wm, 1));
  if (s.dir == ConvDirection::kBackwardWeight) add_bias_grad(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
