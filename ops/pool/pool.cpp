// Pooling: parameter spaces, default configurations and launch plans.
#include "ops/pool/pool.h"

#include <fmt/format.h>

#include "harness/buffer_extent.h"
#include "harness/error.h"

namespace ocltune {
namespace {

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

// The elementwise operands of adaptive average backward: the output gradient in, the input out.
ElementwiseOperands as_elementwise(const PoolOperands& o) {
  return {.out = o.out, .out_offset = o.out_offset, .inputs = {o.in}, .input_offsets = {o.in_offset}};
}

void check_fits(const cl::Buffer& buffer, std::int64_t offset, std::int64_t count, std::size_t element_bytes,
                const char* what) {
  if (offset < 0 || offset + count > (std::int64_t{1} << 31) - 1)
    throw Error(fmt::format("pool: bad offset of {}", what));
  check_buffer_extent(buffer(), offset, count, element_bytes, "pool", what);
}

}  // namespace

SearchSpace pool_space(const PoolShape& shape, const DeviceInfo& device) {
  if (shape.kind == PoolKind::kAdaptiveAvg && shape.backward) {
    return elementwise_space(shape.adaptive_backward_as_elementwise(), device);
  }
  const auto max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  if (shape.kind == PoolKind::kAdaptiveAvg) {
    SearchSpace space("adaptive_avg_forward");
    space.add("SPLIT", {1, 4, 16, 64}, "work-items that share a plane (reduced in local memory)")
        .add("WG", {32, 64, 128, 256}, "work-group size")
        .add("VW", {1, 4}, "width of the loads");
    space.constrain("WG <= device max work-group size", {"WG"}, [=](const Config& c) { return at(c, "WG") <= max_wg; });
    space.constrain("SPLIT <= WG", {"SPLIT", "WG"}, [](const Config& c) { return at(c, "SPLIT") <= at(c, "WG"); });
    const std::int64_t plane = next_pow2(shape.h * shape.w);
    space.constrain("SPLIT <= next_pow2(H*W)", {"SPLIT"}, [=](const Config& c) { return at(c, "SPLIT") <= plane; });
    return space;
  }
  SearchSpace space(shape.backward ? "pool_backward" : "pool_forward");
  space.add("WPT", {1, 2, 4, 8}, shape.backward ? "inputs along W per work-item" : "outputs along W per work-item")
      .add("LX", {4, 8, 16, 32, 64}, "work-group extent along W (column tiles)")
      .add("LY", {1, 2, 4, 8}, "work-group extent along rows");
  const auto max_x =
      static_cast<std::int64_t>(device.max_work_item_sizes.empty() ? max_wg : device.max_work_item_sizes[0]);
  const auto max_y =
      static_cast<std::int64_t>(device.max_work_item_sizes.size() < 2 ? max_wg : device.max_work_item_sizes[1]);
  space.constrain("LX * LY within device limits, at least 16", {"LX", "LY"}, [=](const Config& c) {
    const std::int64_t lx = at(c, "LX"), ly = at(c, "LY");
    return lx * ly <= max_wg && lx <= max_x && ly <= max_y && lx * ly >= 16;
  });
  // Tiles wider than the row, or more tile columns than the row has, only idle work-items.
  const std::int64_t width = shape.backward ? shape.w : shape.out_w();
  space.constrain("WPT * LX <= max(next_pow2(row length), 16)", {"WPT", "LX"}, [=](const Config& c) {
    return at(c, "WPT") * at(c, "LX") <= std::max<std::int64_t>(next_pow2(width), 16);
  });
  return space;
}

Config pool_default_config(const PoolShape& shape) {
  if (shape.kind == PoolKind::kAdaptiveAvg) {
    return shape.backward ? elementwise_default_config() : Config{{"SPLIT", 1}, {"WG", 64}, {"VW", 1}};
  }
  return {{"WPT", 1}, {"LX", 16}, {"LY", 4}};
}

// docs/decisions/0036. Adaptive average: a GPU shares each plane among work-items until the launch
// holds 2048 work-items per compute unit; a CPU gives a work-item a plane. Windows: on a CPU a
// work-item takes up to 4 outputs along a row (16 x 1 work-groups), a GPU keeps 16 x 4 groups.
Config pool_default_config(const PoolShape& shape, const DeviceInfo& device) {
  const bool cpu = device.type == DeviceType::kCpu;
  const auto max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  if (shape.kind == PoolKind::kAdaptiveAvg) {
    if (shape.backward) return elementwise_default_config(shape.adaptive_backward_as_elementwise(), device);
    const std::int64_t plane = shape.h * shape.w;
    std::int64_t wg = 32;
    if (!cpu) {
      for (std::int64_t v : {64, 128, 256}) {
        if (v <= max_wg) wg = v;
      }
    }
    if (wg > max_wg) return pool_default_config(shape);
    std::int64_t split = 1;
    if (!cpu) {
      const std::int64_t wanted = 2048 * std::max<std::int64_t>(1, device.compute_units);
      for (std::int64_t v : {4, 16, 64}) {
        if (shape.planes() * split >= wanted || v > next_pow2(plane) || v > wg) break;
        split = v;
      }
    }
    return {{"SPLIT", split}, {"WG", wg}, {"VW", plane >= 16 * split ? 4 : 1}};
  }
  if (!cpu) return pool_default_config(shape);
  const std::int64_t width = shape.backward ? shape.w : shape.out_w();
  std::int64_t wpt = 1;
  for (std::int64_t v : {2, 4}) {
    if (v * 16 <= std::max<std::int64_t>(next_pow2(width), 16)) wpt = v;
  }
  return {{"WPT", wpt}, {"LX", 16}, {"LY", 1}};
}

std::vector<std::string> pool_kernel_files(const PoolShape& shape) {
  if (shape.kind == PoolKind::kAdaptiveAvg && shape.backward)
    return {"storage.cl", "elementwise_ops.cl", "elementwise.cl"};
  return {"storage.cl", "pool.cl"};
}

LaunchPlan pool_plan(const PoolShape& s, const PoolOperands& o, const Config& config) {
  s.validate();
  if (s.kind == PoolKind::kAdaptiveAvg && s.backward) {
    return elementwise_plan(s.adaptive_backward_as_elementwise(), as_elementwise(o), config);
  }
  const std::int64_t planes = s.planes(), oh = s.out_h(), ow = s.out_w();
  const std::int64_t in_count = planes * (s.backward ? oh * ow : s.h * s.w);
  const std::int64_t out_count = planes * (s.backward ? s.h * s.w : oh * ow);
  if (planes == 0) return {};
  const std::size_t size = dtype_bytes(s.dtype);
  check_fits(o.in, o.in_offset, in_count, size, s.backward ? "the output gradient" : "the input");
  check_fits(o.out, o.out_offset, out_count, size, s.backward ? "the input gradient" : "the output");
  if (s.writes_indices() || s.reads_indices())
    check_fits(o.indices, o.indices_offset, planes * oh * ow, 8, "the indices");

  KernelLaunch launch;
  launch.program.files = pool_kernel_files(s);
  auto& defines = launch.program.defines;
  defines.push_back(dtype_define(s.dtype));
  const auto round_up = [](std::int64_t x, std::int64_t m) { return static_cast<std::size_t>((x + m - 1) / m * m); };
  if (s.kind == PoolKind::kAdaptiveAvg) {
    launch.kernel = "adaptive_avg_forward";
    const std::int64_t wg = at(config, "WG");
    launch.global = cl::NDRange(round_up(planes * at(config, "SPLIT"), wg));
    launch.local = cl::NDRange(static_cast<std::size_t>(wg));
    launch.args = {
        static_cast<cl_int>(planes),      static_cast<cl_int>(s.h * s.w), o.in, static_cast<cl_int>(o.in_offset), o.out,
        static_cast<cl_int>(o.out_offset)};
  } else {
    defines.emplace_back("POOL_MAX", s.kind == PoolKind::kMax ? "1" : "0");
    for (const auto& [name, value] :
         {std::pair{"KH", s.kh}, {"KW", s.kw}, {"SH", s.sh}, {"SW", s.sw}, {"PH", s.ph}, {"PW", s.pw}}) {
      defines.emplace_back(name, std::to_string(value));
    }
    defines.emplace_back("COUNT_INCLUDE_PAD", s.count_include_pad ? "1" : "0");
    defines.emplace_back("WITH_INDICES", s.writes_indices() ? "1" : "0");
    const std::int64_t wpt = at(config, "WPT"), lx = at(config, "LX"), ly = at(config, "LY");
    const std::int64_t width = s.backward ? s.w : ow, rows = s.backward ? s.h : oh;
    launch.global =
        cl::NDRange(round_up((width + wpt - 1) / wpt, lx), round_up(rows, ly), static_cast<std::size_t>(planes));
    launch.local = cl::NDRange(static_cast<std::size_t>(lx), static_cast<std::size_t>(ly), 1);
    launch.args = {static_cast<cl_int>(s.h),
                   static_cast<cl_int>(s.w),
                   static_cast<cl_int>(oh),
                   static_cast<cl_int>(ow),
                   o.in,
                   static_cast<cl_int>(o.in_offset)};
    if (s.backward) {
      launch.kernel = "pool_backward";
      if (s.reads_indices()) {
        launch.args.emplace_back(o.indices);
        launch.args.emplace_back(static_cast<cl_int>(o.indices_offset));
      }
      launch.args.emplace_back(o.out);
      launch.args.emplace_back(static_cast<cl_int>(o.out_offset));
    } else {
      launch.kernel = "pool_forward";
      launch.args.emplace_back(o.out);
      launch.args.emplace_back(static_cast<cl_int>(o.out_offset));
      if (s.writes_indices()) {
        launch.args.emplace_back(o.indices);
        launch.args.emplace_back(static_cast<cl_int>(o.indices_offset));
      }
    }
  }
  for (const auto& [name, value] : config) defines.emplace_back(name, std::to_string(value));
  return {{std::move(launch)}};
}

}  // namespace ocltune
