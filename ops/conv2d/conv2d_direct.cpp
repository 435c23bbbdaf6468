// The direct algorithm of conv2d in its three directions (kernels/conv2d_direct*.cl): parameter
// spaces, shape-aware untuned defaults and launch plans.
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {
namespace {

// The largest of `values` not above `limit` (the smallest value when all are above).
std::int64_t largest_at_most(std::initializer_list<std::int64_t> values, std::int64_t limit) {
  std::int64_t best = *values.begin();
  for (const std::int64_t v : values) {
    if (v <= limit && v > best) best = v;
  }
  return best;
}

// Constraints every direct variant has: register tile, work-group shape within the device, tiles
// no larger than the problem (to the next power of two), local memory.
void constrain_tiles(SearchSpace& space, const DeviceLimits& lim, const char* wg0, const char* wg1, const char* wg2,
                     std::int64_t min_wg) {
  const std::string a = wg0, b = wg1, c = wg2;
  space.constrain("work-group size within device limits", {a, b, c}, [=](const Config& cfg) {
    const std::int64_t x = at(cfg, a.c_str()), y = at(cfg, b.c_str()), z = at(cfg, c.c_str());
    return x * y * z <= lim.max_wg && x * y * z >= min_wg && x <= lim.max_x && y <= lim.max_y && z <= lim.max_z;
  });
}

// "wg * per_item <= max(floor, next_pow2(extent))": tiles may round the problem up, not exceed it.
void constrain_extent(SearchSpace& space, const char* wg, const char* per_item, std::int64_t extent,
                      std::int64_t floor) {
  const std::int64_t limit = std::max(floor, next_pow2(extent));
  const std::string a = wg, b = per_item;
  space.constrain(a + " * " + b + " <= next_pow2 of the extent", {a, b},
                  [=](const Config& cfg) { return at(cfg, a.c_str()) * at(cfg, b.c_str()) <= limit; });
}

SearchSpace forward_space(const Conv2dShape& s, const DeviceLimits& lim) {
  SearchSpace space("direct");
  space.add("ALGO", {kAlgoDirect}, "convolution algorithm")
      .add("KPT", {1, 2, 4, 8}, "output channels per work-item")
      .add("PPT", {1, 2}, "output rows per work-item")
      .add("QPT", {1, 2, 4}, "output columns per work-item")
      .add("WGQ", {4, 8, 16, 32}, "work-items along the output columns")
      .add("WGP", {1, 2, 4}, "work-items along the output rows")
      .add("WGK", {1, 4}, "work-items along the output channels")
      .add("CPS", {1, 4, 8}, "input channels per step")
      .add("LDS_IN", {0, 1}, "stage the input patch in local memory")
      .add("LDS_W", {0, 1}, "stage the weights in local memory");
  space.constrain("KPT * PPT * QPT <= 32 (accumulator registers)", {"KPT", "PPT", "QPT"},
                  [](const Config& c) { return at(c, "KPT") * at(c, "PPT") * at(c, "QPT") <= 32; });
  constrain_extent(space, "WGQ", "QPT", s.q(), 4);
  constrain_extent(space, "WGP", "PPT", s.p(), 1);
  constrain_extent(space, "WGK", "KPT", s.k_per_group(), 1);
  space.constrain("CPS <= next_pow2(C/groups)", {"CPS"}, [cg = next_pow2(s.c_per_group())](const Config& c) {
    return at(c, "CPS") <= std::max<std::int64_t>(1, cg);
  });
  constrain_tiles(space, lim, "WGQ", "WGP", "WGK", 4);
  space.constrain("local memory fits the device", {"KPT", "PPT", "QPT", "WGQ", "WGP", "WGK", "CPS", "LDS_IN", "LDS_W"},
                  [=](const Config& c) {
                    const std::int64_t ph = (at(c, "WGP") * at(c, "PPT") - 1) * s.stride_h + (s.r - 1) * s.dil_h + 1;
                    const std::int64_t pw = (at(c, "WGQ") * at(c, "QPT") - 1) * s.stride_w + (s.s - 1) * s.dil_w + 1;
                    const std::int64_t floats = at(c, "LDS_IN") * at(c, "CPS") * ph * pw +
                                                at(c, "LDS_W") * at(c, "WGK") * at(c, "KPT") * at(c, "CPS") * s.r * s.s;
                    return floats * 4 <= lim.local_bytes;
                  });
  return space;
}

SearchSpace backward_data_space(const Conv2dShape& s, const DeviceLimits& lim) {
  SearchSpace space("direct");
  space.add("ALGO", {kAlgoDirect}, "convolution algorithm")
      .add("CPT", {1, 2, 4, 8}, "input channels per work-item")
      .add("HPT", {1, 2}, "input rows per work-item")
      .add("WPT", {1, 2, 4}, "input columns per work-item")
      .add("WGW", {4, 8, 16, 32}, "work-items along the input columns")
      .add("WGH", {1, 2, 4}, "work-items along the input rows")
      .add("WGC", {1, 4}, "work-items along the input channels")
      .add("KPS", {1, 4, 8}, "output channels per step")
      .add("LDS_W", {0, 1}, "stage the weights in local memory");
  space.constrain("CPT * HPT * WPT <= 32 (accumulator registers)", {"CPT", "HPT", "WPT"},
                  [](const Config& c) { return at(c, "CPT") * at(c, "HPT") * at(c, "WPT") <= 32; });
  // Tiles cover one stride phase of dx: ceil(H/stride) x ceil(W/stride) pixels.
  constrain_extent(space, "WGW", "WPT", ceil_div(s.w, s.stride_w), 4);
  constrain_extent(space, "WGH", "HPT", ceil_div(s.h, s.stride_h), 1);
  constrain_extent(space, "WGC", "CPT", s.c_per_group(), 1);
  space.constrain("KPS <= next_pow2(K/groups)", {"KPS"}, [kg = next_pow2(s.k_per_group())](const Config& c) {
    return at(c, "KPS") <= std::max<std::int64_t>(1, kg);
  });
  constrain_tiles(space, lim, "WGW", "WGH", "WGC", 4);
  space.constrain("local memory fits the device", {"CPT", "WGC", "KPS", "LDS_W"}, [=](const Config& c) {
    return at(c, "LDS_W") * at(c, "WGC") * at(c, "CPT") * at(c, "KPS") * s.r * s.s * 4 <= lim.local_bytes;
  });
  return space;
}

// The weight gradient's partial sums of SPLIT image chunks: each chunk's kernel writes one K x Cg x R x S
// plane of the workspace and conv2d_sum_images adds them in order (no atomics: the result does not
// depend on the launch geometry).
constexpr std::int64_t kSplitBytes = std::int64_t{64} << 20;

SearchSpace backward_weight_space(const Conv2dShape& s, const DeviceLimits& lim, bool split) {
  SearchSpace space(split ? "direct_split" : "direct");
  space.add("ALGO", {kAlgoDirect}, "convolution algorithm")
      .add("KPT", {1, 2, 4, 8}, "output channels per work-item")
      .add("CPT", {1, 2, 4, 8}, "input channels per work-item")
      .add("WGC", {1, 2, 4, 8, 16}, "work-items along the input channels")
      .add("WGK", {1, 2, 4, 8, 16}, "work-items along the output channels")
      .add("RED", {1, 2, 4, 8, 16, 32, 64}, "work-items splitting the reduction over output positions");
  // A variant of its own, so that a row without SPLIT (recorded before it existed) stays valid.
  if (split) {
    space.add("SPLIT", {2, 4, 8, 16, 32, 64}, "work-groups splitting the images (partial sums, then one pass)");
    space.constrain("SPLIT <= N, and the partial sums fit the workspace", {"SPLIT"}, [=](const Config& c) {
      return at(c, "SPLIT") <= s.n && at(c, "SPLIT") * s.weight_elements() * 4 <= kSplitBytes;
    });
  }
  space.constrain("KPT * CPT <= 32 (accumulator registers)", {"KPT", "CPT"},
                  [](const Config& c) { return at(c, "KPT") * at(c, "CPT") <= 32; });
  constrain_extent(space, "WGC", "CPT", s.c_per_group(), 1);
  constrain_extent(space, "WGK", "KPT", s.k_per_group(), 1);
  space.constrain("RED <= next_pow2(P*Q)", {"RED"}, [pq = next_pow2(s.p() * s.q())](const Config& c) {
    return at(c, "RED") <= std::max<std::int64_t>(1, pq);
  });
  constrain_tiles(space, lim, "WGC", "WGK", "RED", 1);
  space.constrain("local memory fits the device", {"WGC", "WGK", "RED"},
                  [=](const Config& c) { return at(c, "WGC") * at(c, "WGK") * at(c, "RED") * 4 <= lim.local_bytes; });
  return space;
}

}  // namespace

SearchSpace direct_space(const Conv2dShape& s, const DeviceInfo& device) {
  const DeviceLimits lim = device_limits(device);
  switch (s.dir) {
    case ConvDirection::kForward: return forward_space(s, lim);
    case ConvDirection::kBackwardData: return backward_data_space(s, lim);
    default: {
      SearchSpace whole = backward_weight_space(s, lim, false);
      // The split variant where it has a point: two images or more, two partial planes fit.
      if (s.n < 2 || 2 * s.weight_elements() * 4 > kSplitBytes) return whole;
      return SearchSpace::unite({std::move(whole), backward_weight_space(s, lim, true)});
    }
  }
}

Config direct_default(const Conv2dShape& s) {
  // At most 64 work-items and 32 accumulators, tiles no larger than the problem, no local memory.
  switch (s.dir) {
    case ConvDirection::kForward:
      return {{"ALGO", kAlgoDirect},
              {"KPT", largest_at_most({1, 2}, next_pow2(s.k_per_group()))},
              {"PPT", 1},
              {"QPT", next_pow2(s.q()) >= 32 ? 2 : 1},
              {"WGQ", largest_at_most({4, 8, 16}, next_pow2(s.q()))},
              {"WGP", largest_at_most({1, 2, 4}, next_pow2(s.p()))},
              {"WGK", 1},
              {"CPS", largest_at_most({1, 4}, next_pow2(s.c_per_group()))},
              {"LDS_IN", 0},
              {"LDS_W", 0}};
    case ConvDirection::kBackwardData:
      return {{"ALGO", kAlgoDirect},
              {"CPT", largest_at_most({1, 2}, next_pow2(s.c_per_group()))},
              {"HPT", 1},
              {"WPT", next_pow2(ceil_div(s.w, s.stride_w)) >= 32 ? 2 : 1},
              {"WGW", largest_at_most({4, 8, 16}, next_pow2(ceil_div(s.w, s.stride_w)))},
              {"WGH", largest_at_most({1, 2, 4}, next_pow2(ceil_div(s.h, s.stride_h)))},
              {"WGC", 1},
              {"KPS", largest_at_most({1, 4}, next_pow2(s.k_per_group()))},
              {"LDS_W", 0}};
    default: {
      const std::int64_t wgc = largest_at_most({1, 4, 8}, next_pow2(s.c_per_group()));
      const std::int64_t wgk = largest_at_most({1, 4, 8}, next_pow2(s.k_per_group()));
      const std::int64_t red = largest_at_most({1, 4, 16, 64}, std::min(64 / (wgc * wgk), next_pow2(s.p() * s.q())));
      const std::int64_t kpt = largest_at_most({1, 2}, next_pow2(s.k_per_group()) / wgk);
      const std::int64_t cpt = largest_at_most({1, 2}, next_pow2(s.c_per_group()) / wgc);
      Config c = {{"ALGO", kAlgoDirect}, {"KPT", kpt}, {"CPT", cpt}, {"WGC", wgc}, {"WGK", wgk}, {"RED", red}};
      // Few weights and many positions (a first layer: 3 input channels, a 224x224 image) give a few
      // thousand work-items, each summing hundreds of thousands of products: split the images until
      // there are about 64Ki work-items (a quarter of what a large GPU holds at once), while each
      // chunk keeps at least 4096 positions per work-item of the reduction.
      const std::int64_t items = ceil_div(s.c_per_group(), wgc * cpt) * ceil_div(s.k_per_group(), wgk * kpt) *
                                 s.groups * s.r * s.s * wgc * wgk * red;
      std::int64_t split = 1;
      while (split * 2 <= std::min<std::int64_t>(s.n, 64) && items * split * 2 <= 65536 &&
             s.n / (split * 2) * s.p() * s.q() >= 4096 * red && split * 2 * s.weight_elements() * 4 <= kSplitBytes) {
        split *= 2;
      }
      if (split > 1) c["SPLIT"] = split;
      return c;
    }
  }
}

void direct_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                 LaunchPlan& plan) {
  const std::int64_t cg = s.c_per_group(), kg = s.k_per_group();
  std::vector<KernelArg> args = shape_args(s);
  if (s.dir == ConvDirection::kForward) {
    const std::int64_t kpt = at(c, "KPT"), ppt = at(c, "PPT"), qpt = at(c, "QPT");
    const std::int64_t wgq = at(c, "WGQ"), wgp = at(c, "WGP"), wgk = at(c, "WGK"), cps = at(c, "CPS");
    const std::int64_t ph = (wgp * ppt - 1) * s.stride_h + (s.r - 1) * s.dil_h + 1;
    const std::int64_t pw = (wgq * qpt - 1) * s.stride_w + (s.s - 1) * s.dil_w + 1;
    const std::size_t patch_bytes = static_cast<std::size_t>(at(c, "LDS_IN") ? cps * ph * pw * 4 : 4);
    const std::size_t w_bytes = static_cast<std::size_t>(at(c, "LDS_W") ? wgk * kpt * cps * s.r * s.s * 4 : 4);
    args.insert(args.end(),
                {o.input, static_cast<cl_long>(o.input_offset), o.weight, static_cast<cl_long>(o.weight_offset),
                 bias_or(o, o.weight), static_cast<cl_long>(o.bias_offset), o.output,
                 static_cast<cl_long>(o.output_offset), LocalMemory{patch_bytes}, LocalMemory{w_bytes}});
    ProgramSource program =
        conv_program("conv2d_direct.cl", s, c, {"KPT", "PPT", "QPT", "WGQ", "WGP", "WGK", "CPS", "LDS_IN", "LDS_W"});
    plan.kernels.push_back(make_launch(std::move(program), "conv2d_direct_fwd", std::move(args),
                                       ceil_div(s.q(), wgq * qpt) * wgq, ceil_div(s.p(), wgp * ppt) * wgp,
                                       s.n * s.groups * ceil_div(kg, wgk * kpt) * wgk, wgq, wgp, wgk));
    return;
  }
  if (s.dir == ConvDirection::kBackwardData) {
    const std::int64_t cpt = at(c, "CPT"), hpt = at(c, "HPT"), wpt = at(c, "WPT");
    const std::int64_t wgw = at(c, "WGW"), wgh = at(c, "WGH"), wgc = at(c, "WGC"), kps = at(c, "KPS");
    const std::size_t w_bytes = static_cast<std::size_t>(at(c, "LDS_W") ? wgc * cpt * kps * s.r * s.s * 4 : 4);
    args.insert(args.end(),
                {o.input, static_cast<cl_long>(o.input_offset), o.weight, static_cast<cl_long>(o.weight_offset),
                 o.output, static_cast<cl_long>(o.output_offset), LocalMemory{w_bytes}});
    ProgramSource program =
        conv_program("conv2d_direct_bwd_data.cl", s, c, {"CPT", "HPT", "WPT", "WGW", "WGH", "WGC", "KPS", "LDS_W"});
    plan.kernels.push_back(make_launch(
        std::move(program), "conv2d_direct_bwd_data", std::move(args),
        ceil_div(ceil_div(s.w, s.stride_w), wgw * wpt) * wgw, ceil_div(ceil_div(s.h, s.stride_h), wgh * hpt) * wgh,
        s.n * s.groups * s.stride_h * s.stride_w * ceil_div(cg, wgc * cpt) * wgc, wgw, wgh, wgc));
    return;
  }
  const std::int64_t kpt = at(c, "KPT"), cpt = at(c, "CPT");
  const std::int64_t wgc = at(c, "WGC"), wgk = at(c, "WGK"), red = at(c, "RED");
  const std::int64_t split = c.count("SPLIT") ? at(c, "SPLIT") : 1;
  const std::int64_t plane = s.weight_elements();
  const cl::Buffer partial =
      split > 1 ? workspace.get(static_cast<std::size_t>(split * plane * 4), kSplitSlot) : cl::Buffer();
  args.insert(args.end(),
              {o.input, static_cast<cl_long>(o.input_offset), split > 1 ? partial : o.weight,
               static_cast<cl_long>(split > 1 ? 0 : o.weight_offset), o.output, static_cast<cl_long>(o.output_offset)});
  ProgramSource program = conv_program("conv2d_direct_bwd_weight.cl", s, c, {"KPT", "CPT", "WGC", "WGK", "RED"});
  if (split > 1) program.defines.emplace_back("SPLIT", std::to_string(split));
  plan.kernels.push_back(make_launch(std::move(program), "conv2d_direct_bwd_weight", std::move(args),
                                     ceil_div(cg, wgc * cpt) * wgc, ceil_div(kg, wgk * kpt) * wgk,
                                     s.groups * s.r * s.s * split * red, wgc, wgk, red));
  if (split > 1) plan.kernels.push_back(sum_images_launch(s, split, plane, partial, o, false, true, workspace));
  add_bias_grad(s, o, plan);
}

}  // namespace ocltune::conv2d_detail
