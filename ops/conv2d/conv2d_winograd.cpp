// The Winograd algorithm of conv2d (kernels/conv2d_winograd.cl + gemm.cl): F(2x2,3x3) or
// F(4x4,3x3) for forward and backward-data; transform tunables plus the GEMM family's space for the
// batched multiply over the transform points; the transformed tiles live in the workspace. They
// stay fp32 for 16-bit tensors too: the transforms read and write the tensors in their storage type
// (kernels/conv2d_winograd.cl), and the GEMM's operands are no user tensors, whose 16-bit form would
// round the transformed values (intermediates larger than the products) a second time.
#include "ops/conv2d/conv2d_algorithms.h"
#include "ops/gemm/gemm.h"

namespace ocltune::conv2d_detail {
namespace {

// The forward convolution Winograd computes: backward-data is dy convolved with the flipped,
// transposed filter, padded by 2 - pad, producing the H x W input gradient.
struct WinogradProblem {
  std::int64_t k_out, c_in;   // output and input channels of that convolution
  std::int64_t in_h, in_w;    // its input planes
  std::int64_t out_h, out_w;  // its output planes
  std::int64_t pad_top, pad_left;
  std::int64_t tiles(std::int64_t m, std::int64_t n) const { return n * ceil_div(out_h, m) * ceil_div(out_w, m); }
};

WinogradProblem winograd_problem(const Conv2dShape& s) {
  if (s.dir == ConvDirection::kForward) return {s.k, s.c, s.h, s.w, s.p(), s.q(), s.pad_h, s.pad_w};
  return {s.c, s.k, s.p(), s.q(), s.h, s.w, 2 - s.pad_h, 2 - s.pad_w};
}

// The batched GEMM over the (M+2)^2 transform points.
GemmShape point_gemm(const Conv2dShape& s, std::int64_t m) {
  const WinogradProblem w = winograd_problem(s);
  return {.m = w.k_out, .n = w.tiles(m, s.n), .k = w.c_in, .batch = (m + 2) * (m + 2)};
}

}  // namespace

SearchSpace winograd_space(const Conv2dShape& s, const DeviceInfo& device) {
  // The GEMM constraints are taken at F(2x2,3x3), the larger tile count; a smaller value list keeps
  // this variant about as large as the others in a random search.
  SearchSpace gemm = restrict_values(gemm_space(point_gemm(s, 2), device), {{"MWG", {16, 32, 64}},
                                                                            {"NWG", {16, 32, 64, 128}},
                                                                            {"KWG", {16, 32}},
                                                                            {"WPTM", {2, 4, 8}},
                                                                            {"WPTN", {2, 4, 8}},
                                                                            {"VWN", {1, 2}},
                                                                            {"VWL", {1, 4}},
                                                                            {"WTN", {0}}});
  gemm = drop_parameters(gemm, {{"DB", 0}, {"VWM", 1}, {"SB", 1}, {"KWI", 2}});
  const DeviceLimits lim = device_limits(device);
  SearchSpace space("winograd");
  space.add("ALGO", {kAlgoWinograd}, "convolution algorithm")
      .add("WINO_M", {2, 4}, "output tile of F(MxM, 3x3)")
      .add("WINO_WG", {64, 256}, "work-group size of the transform kernels")
      .add("WINO_TPI", {1, 2}, "adjacent tiles per work-item of the input and output transforms");
  space.constrain("WINO_WG within device limits", {"WINO_WG"},
                  [=](const Config& c) { return at(c, "WINO_WG") <= std::min(lim.max_wg, lim.max_x); });
  for (const Parameter& p : gemm.parameters()) space.add(p.name, p.values, p.meaning);
  for (const Constraint& c : gemm.variants().front().constraints) space.constrain(c.description, c.params, c.holds);
  return space;
}

Config winograd_default(const Conv2dShape& s, const DeviceInfo* gpu) {
  const GemmShape g = point_gemm(s, 2);
  Config c = gemm_default_config();
  for (const char* fixed : {"DB", "VWM", "SB", "KWI"}) c.erase(fixed);
  c["MWG"] = g.m <= 16 ? 16 : 32;
  c["NWG"] = g.n <= 16 ? 16 : 32;
  c["ALGO"] = kAlgoWinograd;
  c["WINO_M"] = 2;
  c["WINO_WG"] = 64;
  c["WINO_TPI"] = 1;
  return gpu ? on_gpu_tile(c, g, *gpu, winograd_space(s, *gpu)) : c;
}

void winograd_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                   LaunchPlan& plan) {
  const std::int64_t m = at(c, "WINO_M"), wg = at(c, "WINO_WG"), tpi = at(c, "WINO_TPI");
  const std::int64_t points = (m + 2) * (m + 2);
  const bool forward = s.dir == ConvDirection::kForward;
  const WinogradProblem w = winograd_problem(s);
  const std::int64_t tiles_h = ceil_div(w.out_h, m), tiles_w = ceil_div(w.out_w, m);
  const std::int64_t t = s.n * tiles_h * tiles_w;
  const auto floats = [](std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); };
  cl::Buffer u = workspace.get(floats(points * w.k_out * w.c_in), 0);
  cl::Buffer v = workspace.get(floats(points * w.c_in * t), 1);
  cl::Buffer mt = workspace.get(floats(points * w.k_out * t), 2);

  ProgramSource program = conv_program("conv2d_winograd.cl", s, c, {"WINO_M", "WINO_WG", "WINO_TPI"});
  program.defines.emplace_back("FLIP", forward ? "0" : "1");
  const auto launch_1d = [&](const char* kernel, std::vector<KernelArg> args, std::int64_t items) {
    plan.kernels.push_back(make_launch(program, kernel, std::move(args), ceil_div(items, wg) * wg, 1, 1, wg, 1, 1));
  };
  launch_1d(
      "conv2d_wino_weight",
      {static_cast<cl_int>(w.k_out), static_cast<cl_int>(w.c_in), o.weight, static_cast<cl_long>(o.weight_offset), u},
      w.k_out * w.c_in);
  const cl::Buffer& in = forward ? o.input : o.output;
  const std::int64_t in_offset = forward ? o.input_offset : o.output_offset;
  launch_1d("conv2d_wino_input",
            {static_cast<cl_int>(s.n), static_cast<cl_int>(w.c_in), static_cast<cl_int>(w.in_h),
             static_cast<cl_int>(w.in_w), static_cast<cl_int>(w.pad_top), static_cast<cl_int>(w.pad_left),
             static_cast<cl_int>(tiles_h), static_cast<cl_int>(tiles_w), in, static_cast<cl_long>(in_offset), v},
            s.n * w.c_in * tiles_h * ceil_div(tiles_w, tpi));

  // Every parameter but ALGO and WINO_* is gemm.cl's (whatever gemm_space declares now); the
  // ones this variant fixes keep gemm_default_config()'s values.
  Config gemm_config = gemm_default_config();
  for (const auto& [name, value] : c) {
    if (name != "ALGO" && name.rfind("WINO_", 0) != 0) gemm_config[name] = value;
  }
  const GemmShape gemm = point_gemm(s, m);
  for (KernelLaunch& launch : gemm_plan(gemm, packed_operands(gemm, u, v, mt), gemm_config, workspace).kernels) {
    plan.kernels.push_back(std::move(launch));
  }

  const cl::Buffer& out = forward ? o.output : o.input;
  const std::int64_t out_offset = forward ? o.output_offset : o.input_offset;
  launch_1d("conv2d_wino_output",
            {static_cast<cl_int>(s.n), static_cast<cl_int>(w.k_out), static_cast<cl_int>(w.out_h),
             static_cast<cl_int>(w.out_w), static_cast<cl_int>(tiles_h), static_cast<cl_int>(tiles_w), mt, out,
             static_cast<cl_long>(out_offset), bias_or(o, mt), static_cast<cl_long>(o.bias_offset)},
            s.n * w.k_out * tiles_h * ceil_div(tiles_w, tpi));
}

}  // namespace ocltune::conv2d_detail
