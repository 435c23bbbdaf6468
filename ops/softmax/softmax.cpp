// softmax / log_softmax: shape, parameter space, default configuration and launch plan.
#include "ops/softmax/softmax.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "core/stored_tensor.h"
#include "harness/error.h"
#include "ops/reduce/reduce.h"

namespace ocltune {
namespace {

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

ReducePass main_pass(const SoftmaxShape& s) {
  const ReduceLayout l = s.layout();
  return l.passes.empty() ? ReducePass{} : l.passes.front();
}

}  // namespace

std::string SoftmaxShape::key() const {
  return fmt::format("axis={},dims={},log={}", axis, dims_text(dims), log ? 1 : 0);
}

nlohmann::json SoftmaxShape::to_json() const {
  return {{"op", "softmax"}, {"dims", dims}, {"axis", axis}, {"log", log}, {"dtype", dtype_name(dtype)}};
}

SoftmaxShape SoftmaxShape::from_json(const nlohmann::json& j) {
  check_known_fields(j, {"dims", "axis", "log", "dtype"});
  SoftmaxShape s;
  s.dims = int_list_field(j, "dims", 4, 0, kMaxDimension);
  s.axis = static_cast<int>(int_field(j, "axis", 0, 3, static_cast<std::int64_t>(s.dims.size()) - 1));
  s.log = bool_field(j, "log", false);
  s.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  s.validate();
  return s;
}

void SoftmaxShape::validate() const {
  const ReduceLayout l = layout();  // throws for bad dims and axis
  if (l.elements > kMaxDimension) throw Error("softmax: more than 2^31-1 elements");
}

double SoftmaxShape::flops() const { return 5.0 * static_cast<double>(layout().elements); }

double SoftmaxShape::bytes() const {
  return 2.0 * static_cast<double>(layout().elements) * static_cast<double>(dtype_bytes(dtype));
}

namespace {

// One variant of the space: the original parameters, plus EXP and PREFETCH when `fast`.
SearchSpace softmax_variant(const SoftmaxShape& shape, const DeviceInfo& device, bool fast) {
  const ReducePass p = main_pass(shape);
  const bool strided = p.inner > 1;
  SearchSpace space(std::string(strided ? "columns" : "rows") + (fast ? " (polynomial exp / prefetch)" : ""));
  space
      .add("WGS", {1, 4, 16, 64, 256},
           strided ? "work-items per work-group (one VW-column each)" : "work-items sharing a row")
      .add("VW", {1, 2, 4, 8, 16}, "vector width of loads and stores")
      .add("ROWS", {1, 4, 16, 64}, "outer rows per work-group, in turn")
      .add("ONLINE", {0, 1}, "max and sum in one read, rescaling the sum (1), or two reads (0)")
      .add("CACHE", {0, 1}, "keep a row's exp(x - max) in local memory: one exp and no third read (rows)");
  if (fast) {
    space.add("EXP", {0, 1}, "exp: the built-in (0) or softmax.cl's polynomial for x - max <= 0 (1)");
    // Prefetch instructions exist only through Clang's builtin (PoCL's prefetch() is empty), so
    // only a CPU gets the knob; elsewhere it would only duplicate configurations.
    space.add("PREFETCH",
              device.type == DeviceType::kCpu ? std::vector<std::int64_t>{0, 1, 2} : std::vector<std::int64_t>{0},
              "rows, two reads: in the exp sweep prefetch the input PREFETCH rows ahead and the output row");
  }
  const std::int64_t max_wgs = static_cast<std::int64_t>(device.max_work_group_size);
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("WGS within the device limit and local memory", {"WGS"},
                  [=](const Config& c) { return at(c, "WGS") <= max_wgs && at(c, "WGS") * 8 <= local_bytes; });
  const std::int64_t outer_cap = pow2_ceil(p.outer);
  space.constrain("ROWS <= next_pow2(outer)", {"ROWS"}, [=](const Config& c) { return at(c, "ROWS") <= outer_cap; });
  const std::int64_t cap = pow2_ceil(strided ? p.inner : p.length);
  space.constrain(strided ? "WGS * VW <= next_pow2(inner)" : "WGS * VW <= next_pow2(length)", {"WGS", "VW"},
                  [=](const Config& c) { return at(c, "WGS") * at(c, "VW") <= cap; });
  const std::int64_t row_bytes = strided ? -1 : p.length * 4;
  space.constrain("CACHE: rows with two-read statistics, the row within local memory", {"CACHE", "ONLINE", "WGS"},
                  [=](const Config& c) {
                    if (at(c, "CACHE") == 0) return true;
                    return row_bytes >= 0 && at(c, "ONLINE") == 0 && row_bytes + at(c, "WGS") * 8 <= local_bytes;
                  });
  if (fast) {
    space.constrain("PREFETCH: rows with two-read statistics", {"PREFETCH", "ONLINE"},
                    [=](const Config& c) { return at(c, "PREFETCH") == 0 || (!strided && at(c, "ONLINE") == 0); });
    // EXP = 0 with PREFETCH = 0 is the first variant's kernel (absent defines are 0).
    space.constrain("EXP = 1 or PREFETCH > 0", {"EXP", "PREFETCH"},
                    [](const Config& c) { return at(c, "EXP") == 1 || at(c, "PREFETCH") > 0; });
  }
  return space;
}

}  // namespace

// Two variants: the original parameters (so configurations tuned before EXP and PREFETCH existed
// stay valid and mean the same kernel), and the same with the polynomial exp and prefetching.
SearchSpace softmax_space(const SoftmaxShape& shape, const DeviceInfo& device) {
  return SearchSpace::unite({softmax_variant(shape, device, false), softmax_variant(shape, device, true)});
}

// Rules per device type (docs/decisions/0036): one work-item per row (CPUs) or a work-group per
// row as wide as the row allows (GPUs); rows in turn per work-group on a CPU while the device stays
// full; on a CPU the row's exp kept in local memory where it fits (one exp per element, no third
// read). The first variant's kernel (the built-in exp), so defaults mean the same on every device.
Config softmax_default_config(const SoftmaxShape& shape, const DeviceInfo& device) {
  const ReducePass p = main_pass(shape);
  const bool cpu = device.type == DeviceType::kCpu;
  if (p.inner > 1) {
    const std::int64_t inner_cap = pow2_ceil(p.inner);
    const std::int64_t vw = cpu ? std::min<std::int64_t>(16, inner_cap) : 1;
    const std::int64_t wgs = fill_work_group(inner_cap / vw, device, 8);
    const std::int64_t column_groups = (p.inner + wgs * vw - 1) / (wgs * vw);
    const std::int64_t wanted = (wanted_work_groups(wgs, device) + column_groups - 1) / column_groups;
    const std::int64_t rows = cpu ? rows_per_group(p.outer, wanted, p.length * p.inner) : 1;
    return {{"WGS", wgs}, {"VW", vw}, {"ROWS", rows}, {"ONLINE", 0}, {"CACHE", 0}};
  }
  const std::int64_t vw = default_vector_width(p.length, device);
  const std::int64_t wgs = fill_work_group(pow2_ceil(p.length) / vw, device, 8);
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  const bool cache = cpu && p.length * 4 + wgs * 8 <= local_bytes;
  const std::int64_t rows = cpu ? rows_per_group(p.outer, wanted_work_groups(wgs, device), p.length) : 1;
  return {{"WGS", wgs}, {"VW", vw}, {"ROWS", rows}, {"ONLINE", 0}, {"CACHE", cache ? 1 : 0}};
}

std::vector<Config> softmax_seed_configs(const SoftmaxShape& shape, const DeviceInfo& device) {
  if (device.type != DeviceType::kCpu || main_pass(shape).inner > 1) return {};
  // PoCL, 2048 x 2048 fp32 rows: one work-item per row, 16-wide vectors, the polynomial exp with
  // the row's exp kept in local memory and the next row prefetched ran at 0.7-0.8 of the copy
  // bandwidth (the built-in exp without prefetching: 0.4-0.5).
  std::vector<Config> seeds;
  for (const auto& [rows, cache, prefetch] :
       {std::tuple{16, 1, 1}, std::tuple{64, 1, 1}, std::tuple{16, 1, 2}, std::tuple{16, 0, 1}, std::tuple{4, 1, 1}}) {
    seeds.push_back(
        {{"WGS", 1}, {"VW", 16}, {"ROWS", rows}, {"ONLINE", 0}, {"CACHE", cache}, {"EXP", 1}, {"PREFETCH", prefetch}});
  }
  return seeds;
}

LaunchPlan softmax_plan(const SoftmaxShape& shape, const SoftmaxOperands& operands, const Config& config) {
  shape.validate();
  if (operands.input_offset < 0 || operands.output_offset < 0) throw Error("softmax: negative buffer offset");
  LaunchPlan plan;
  const ReduceLayout layout = shape.layout();
  if (layout.passes.empty()) return plan;
  const ReducePass& p = layout.passes.front();
  const bool strided = p.inner > 1;
  const std::int64_t wgs = at(config, "WGS"), vw = at(config, "VW"), rows = at(config, "ROWS");
  std::int64_t groups = (p.outer + rows - 1) / rows;
  if (strided) groups *= (p.inner + wgs * vw - 1) / (wgs * vw);

  KernelLaunch k;
  k.program.files = {"storage.cl", "reduce_vec.cl", "softmax.cl"};
  k.program.defines = {dtype_define(shape.dtype), {"LOG", shape.log ? "1" : "0"}, {"STRIDED", strided ? "1" : "0"}};
  for (const auto& [name, value] : config) k.program.defines.emplace_back(name, std::to_string(value));
  k.kernel = "softmax";
  k.global = cl::NDRange(static_cast<std::size_t>(groups * wgs));
  k.local = cl::NDRange(static_cast<std::size_t>(wgs));
  k.args = {static_cast<cl_int>(p.outer),
            static_cast<cl_int>(p.length),
            static_cast<cl_int>(p.inner),
            operands.input,
            static_cast<cl_long>(operands.input_offset),
            operands.output,
            static_cast<cl_long>(operands.output_offset),
            LocalMemory{at(config, "CACHE") != 0 ? static_cast<std::size_t>(p.length) * 4 : 4}};
  plan.kernels.push_back(std::move(k));
  return plan;
}

}  // namespace ocltune
