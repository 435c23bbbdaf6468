// The depthwise algorithm of conv2d (kernels/conv2d_depthwise.cl), for groups == C: parameter
// spaces, untuned defaults and launch plans of the three directions.
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {

SearchSpace depthwise_space(const Conv2dShape& s, const DeviceInfo& device) {
  const DeviceLimits lim = device_limits(device);
  SearchSpace space("depthwise");
  space.add("ALGO", {kAlgoDepthwise}, "convolution algorithm");
  if (s.dir == ConvDirection::kBackwardWeight) {
    space.add("DW_WG", {16, 32, 64, 128, 256}, "work-items reducing one group of taps")
        .add("TAPS", {1, 2, 3, 4, 8, 9}, "filter taps per work-group, sharing each dy load");
    space.constrain("DW_WG within device limits", {"DW_WG"},
                    [=](const Config& c) { return at(c, "DW_WG") <= std::min(lim.max_wg, lim.max_x); });
    space.constrain("TAPS <= R*S", {"TAPS"},
                    [rs = s.r * s.s](const Config& c) { return at(c, "TAPS") <= std::max<std::int64_t>(1, rs); });
    return space;
  }
  const bool forward = s.dir == ConvDirection::kForward;
  const std::int64_t rows = forward ? s.p() : s.h, cols = forward ? s.q() : s.w;
  space.add("PPT", {1, 2, 4, 8}, "rows per work-item")
      .add("QPT", {1, 2, 4, 8}, "columns per work-item")
      .add("WGQ", {4, 8, 16, 32, 64}, "work-items along the columns")
      .add("WGP", {1, 2, 4, 8, 16}, "work-items along the rows");
  if (forward) space.add("LDS_IN", {0, 1}, "stage the input patch in local memory");
  const std::int64_t max_cols = std::max<std::int64_t>(4, next_pow2(cols)), max_rows = next_pow2(rows);
  space.constrain("WGQ * QPT <= next_pow2(columns)", {"WGQ", "QPT"},
                  [=](const Config& c) { return at(c, "WGQ") * at(c, "QPT") <= max_cols; });
  space.constrain("WGP * PPT <= next_pow2(rows)", {"WGP", "PPT"},
                  [=](const Config& c) { return at(c, "WGP") * at(c, "PPT") <= max_rows; });
  space.constrain("work-group size within device limits", {"WGQ", "WGP"}, [=](const Config& c) {
    return at(c, "WGQ") * at(c, "WGP") <= lim.max_wg && at(c, "WGQ") <= lim.max_x && at(c, "WGP") <= lim.max_y;
  });
  if (forward) {
    space.constrain("local memory fits the device", {"PPT", "QPT", "WGQ", "WGP", "LDS_IN"}, [=](const Config& c) {
      const std::int64_t ph = (at(c, "WGP") * at(c, "PPT") - 1) * s.stride_h + (s.r - 1) * s.dil_h + 1;
      const std::int64_t pw = (at(c, "WGQ") * at(c, "QPT") - 1) * s.stride_w + (s.s - 1) * s.dil_w + 1;
      return at(c, "LDS_IN") * ph * pw * 4 <= lim.local_bytes;
    });
  }
  return space;
}

Config depthwise_default(const Conv2dShape& s) {
  if (s.dir == ConvDirection::kBackwardWeight) return {{"ALGO", kAlgoDepthwise}, {"DW_WG", 64}, {"TAPS", 1}};
  const bool forward = s.dir == ConvDirection::kForward;
  const std::int64_t rows = next_pow2(forward ? s.p() : s.h), cols = next_pow2(forward ? s.q() : s.w);
  Config c = {{"ALGO", kAlgoDepthwise},
              {"PPT", 1},
              {"QPT", cols >= 32 ? 2 : 1},
              {"WGQ", std::clamp<std::int64_t>(cols, 4, 16)},
              {"WGP", std::min<std::int64_t>(rows, 4)}};
  if (forward) c["LDS_IN"] = 0;
  return c;
}

void depthwise_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, LaunchPlan& plan) {
  std::vector<KernelArg> args = shape_args(s);
  if (s.dir == ConvDirection::kBackwardWeight) {
    const std::int64_t wg = at(c, "DW_WG"), taps = at(c, "TAPS");
    args.insert(args.end(), {o.input, static_cast<cl_long>(o.input_offset), o.weight,
                             static_cast<cl_long>(o.weight_offset), o.output, static_cast<cl_long>(o.output_offset)});
    plan.kernels.push_back(make_launch(conv_program("conv2d_depthwise.cl", s, c, {"DW_WG", "TAPS"}),
                                       "conv2d_depthwise_bwd_weight", std::move(args), wg, ceil_div(s.r * s.s, taps),
                                       s.k, wg, 1, 1));
    add_bias_grad(s, o, plan);
    return;
  }
  const std::int64_t ppt = at(c, "PPT"), qpt = at(c, "QPT"), wgq = at(c, "WGQ"), wgp = at(c, "WGP");
  if (s.dir == ConvDirection::kForward) {
    const std::int64_t lds = at(c, "LDS_IN");
    const std::int64_t ph = (wgp * ppt - 1) * s.stride_h + (s.r - 1) * s.dil_h + 1;
    const std::int64_t pw = (wgq * qpt - 1) * s.stride_w + (s.s - 1) * s.dil_w + 1;
    args.insert(args.end(),
                {o.input, static_cast<cl_long>(o.input_offset), o.weight, static_cast<cl_long>(o.weight_offset),
                 bias_or(o, o.weight), static_cast<cl_long>(o.bias_offset), o.output,
                 static_cast<cl_long>(o.output_offset), LocalMemory{static_cast<std::size_t>(lds ? ph * pw * 4 : 4)}});
    plan.kernels.push_back(make_launch(
        conv_program("conv2d_depthwise.cl", s, c, {"PPT", "QPT", "WGQ", "WGP", "LDS_IN"}), "conv2d_depthwise_fwd",
        std::move(args), ceil_div(s.q(), wgq * qpt) * wgq, ceil_div(s.p(), wgp * ppt) * wgp, s.n * s.k, wgq, wgp, 1));
    return;
  }
  args.insert(args.end(), {o.input, static_cast<cl_long>(o.input_offset), o.weight,
                           static_cast<cl_long>(o.weight_offset), o.output, static_cast<cl_long>(o.output_offset)});
  plan.kernels.push_back(make_launch(conv_program("conv2d_depthwise.cl", s, c, {"PPT", "QPT", "WGQ", "WGP"}),
                                     "conv2d_depthwise_bwd_data", std::move(args), ceil_div(s.w, wgq * qpt) * wgq,
                                     ceil_div(s.h, wgp * ppt) * wgp, s.n * s.c, wgq, wgp, 1));
}

}  // namespace ocltune::conv2d_detail
