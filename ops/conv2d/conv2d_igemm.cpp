// The implicit-GEMM algorithm of conv2d (kernels/conv2d_igemm.cl): the GEMM family's tiling space
// over the per-group GEMM dimensions of each direction, and its launch plan.
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"
#include "ops/gemm/gemm.h"

namespace ocltune::conv2d_detail {

bool phased_input_gradient(const Conv2dShape& s) {
  return s.dir == ConvDirection::kBackwardData && (s.stride_h > 1 || s.stride_w > 1) && s.dil_h == 1 && s.dil_w == 1;
}

std::int64_t phase_count(const Conv2dShape& s) { return phased_input_gradient(s) ? s.stride_h * s.stride_w : 1; }

GemmShape implicit_gemm(const Conv2dShape& s) {
  const std::int64_t cg = s.c_per_group(), kg = s.k_per_group(), rs = s.r * s.s;
  switch (s.dir) {
    case ConvDirection::kForward: return {.m = kg, .n = s.n * s.p() * s.q(), .k = cg * rs, .math = s.math};
    case ConvDirection::kBackwardData:
      if (phased_input_gradient(s)) {  // phase (0, 0): the most positions and taps of any phase
        return {.m = cg,
                .n = s.n * ceil_div(s.h, s.stride_h) * ceil_div(s.w, s.stride_w),
                .k = kg * ceil_div(s.r, s.stride_h) * ceil_div(s.s, s.stride_w),
                .math = s.math};
      }
      return {.m = cg, .n = s.n * s.h * s.w, .k = kg * rs, .math = s.math};
    default: return {.m = kg, .n = cg * rs, .k = s.n * s.p() * s.q(), .math = s.math};
  }
}

void add_phases(const Conv2dShape& s, ProgramSource& program) {
  program.defines.emplace_back("PHASED", phased_input_gradient(s) ? "1" : "0");
}

std::vector<KernelArg> implicit_gemm_args(const Conv2dShape& s, const Conv2dOperands& o) {
  cl::Buffer a, b, out;
  std::int64_t a_offset = 0, b_offset = 0, out_offset = 0;
  switch (s.dir) {
    case ConvDirection::kForward:
      a = o.weight, b = o.input, out = o.output;
      a_offset = o.weight_offset, b_offset = o.input_offset, out_offset = o.output_offset;
      break;
    case ConvDirection::kBackwardData:
      a = o.weight, b = o.output, out = o.input;
      a_offset = o.weight_offset, b_offset = o.output_offset, out_offset = o.input_offset;
      break;
    default:
      a = o.output, b = o.input, out = o.weight;
      a_offset = o.output_offset, b_offset = o.input_offset, out_offset = o.weight_offset;
      break;
  }
  std::vector<KernelArg> args = shape_args(s);
  args.insert(args.end(), {a, static_cast<cl_long>(a_offset), b, static_cast<cl_long>(b_offset), out,
                           static_cast<cl_long>(out_offset), bias_or(o, a), static_cast<cl_long>(o.bias_offset)});
  return args;
}

SearchSpace igemm_space(const Conv2dShape& s, const DeviceInfo& device) {
  // gemm.cl's space and constraints, without the parameters the gathering loads cannot use
  // (vector global loads, double buffering) and with fewer tile values, so that this variant does
  // not crowd the other algorithms out of a random search.
  GemmShape exact = implicit_gemm(s);
  exact.math =
      MathMode::kExact;  // the tensor-core variant is an algorithm of its own (ops/conv2d/conv2d_igemm_tf32.cpp)
  SearchSpace gemm = drop_parameters(gemm_space(exact, device), {{"VWL", 1}, {"DB", 0}, {"WTN", 0}});
  SearchSpace space = restrict_values(gemm, {{"MWG", {16, 32, 64, 128}},
                                             {"NWG", {16, 32, 64, 128}},
                                             {"KWG", {8, 16, 32}},
                                             {"WPTM", {1, 2, 4, 8}},
                                             {"WPTN", {1, 2, 4, 8}},
                                             {"VWM", {1, 2}},
                                             {"VWN", {1, 2}},
                                             {"KWI", {2}}});
  // Register rows/columns past the GEMM are wasted work (this prunes degenerate GEMMs, e.g. the
  // one-row GEMM of each depthwise group, the most).
  const GemmShape g = implicit_gemm(s);
  space.constrain("WPTM <= next_pow2(GM)", {"WPTM"},
                  [m = next_pow2(g.m)](const Config& c) { return at(c, "WPTM") <= std::max<std::int64_t>(m, 1); });
  space.constrain("WPTN <= next_pow2(GN)", {"WPTN"},
                  [n = next_pow2(g.n)](const Config& c) { return at(c, "WPTN") <= std::max<std::int64_t>(n, 1); });
  return algorithm_variant("implicit_gemm", kAlgoImplicitGemm, space.variants().front());
}

Config igemm_default(const Conv2dShape& s) {
  // gemm.cl's default tile, shrunk along a dimension of 16 or less.
  const GemmShape g = implicit_gemm(s);
  return {{"ALGO", kAlgoImplicitGemm},
          {"MWG", g.m <= 16 ? 16 : 32},
          {"NWG", g.n <= 16 ? 16 : 32},
          {"KWG", 16},
          {"WPTM", std::min<std::int64_t>(4, next_pow2(g.m))},
          {"WPTN", std::min<std::int64_t>(4, next_pow2(g.n))},
          {"VWM", 1},
          {"VWN", 1},
          {"SA", 1},
          {"SB", 1},
          {"KWI", 2}};
}

void igemm_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, LaunchPlan& plan) {
  const GemmShape g = implicit_gemm(s);
  std::vector<KernelArg> args = implicit_gemm_args(s, o);
  ProgramSource program = conv_program(std::vector<std::string>{"conv2d_igemm_gather.cl", "conv2d_igemm.cl"}, s, c,
                                       {"MWG", "NWG", "KWG", "WPTM", "WPTN", "VWM", "VWN", "SA", "SB", "KWI"});
  program.defines.emplace_back("DIR", std::to_string(static_cast<int>(s.dir)));
  add_phases(s, program);
  const std::int64_t mwg = at(c, "MWG"), nwg = at(c, "NWG");
  const std::int64_t mdimc = mwg / at(c, "WPTM"), ndimc = nwg / at(c, "WPTN");
  plan.kernels.push_back(make_launch(std::move(program), "conv2d_igemm", std::move(args), ceil_div(g.n, nwg) * ndimc,
                                     ceil_div(g.m, mwg) * mdimc, s.groups * phase_count(s), ndimc, mdimc, 1));
  if (s.dir == ConvDirection::kBackwardWeight) add_bias_grad(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
