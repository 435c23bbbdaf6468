// Reductions: shape, parameter space, default configuration and launch plan.
#include "ops/reduce/reduce.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "core/stored_tensor.h"
#include "harness/error.h"

namespace ocltune {
namespace {

constexpr const char* kKindNames[] = {"sum", "mean", "max", "min", "argmax", "argmin", "norm2"};

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

// RED_OP of kernels/reduce.cl: how two partial results combine.
int red_op(ReduceKind k) {
  switch (k) {
    case ReduceKind::kMax: return 1;
    case ReduceKind::kMin: return 2;
    case ReduceKind::kArgmax: return 3;
    case ReduceKind::kArgmin: return 4;
    default: return 0;
  }
}

// One launch of kernels/reduce.cl.
struct Stage {
  ReducePass pass;
  bool strided = false;
  bool square = false;
  int final = 0;
  float scale = 1.0f;
  bool in_f32 = false, out_f32 = false;
  Config tunables;
  cl::Buffer in, in_idx, out, out_idx;
  std::int64_t in_offset = 0, out_offset = 0;
  const Prologue* prologue = nullptr;  // the first stage's, with its operands
  const PrologueOperands* prologue_operands = nullptr;
};

KernelLaunch stage_launch(const ReduceShape& shape, const Stage& s) {
  const std::int64_t wgs = at(s.tunables, "WGS"), vw = at(s.tunables, "VW"), unroll = at(s.tunables, "UNROLL");
  const std::int64_t split = at(s.tunables, "SPLIT"), rows = at(s.tunables, "ROWS");
  const ReducePass& p = s.pass;
  // Row splits start at multiples of VW from the row start, so vectors never straddle two splits.
  const std::int64_t align = s.strided ? 1 : vw;
  const std::int64_t chunk = ((p.length + split - 1) / split + align - 1) / align * align;
  const std::int64_t row_groups = (p.outer + rows - 1) / rows;
  std::int64_t groups = split * row_groups;
  if (s.strided) groups *= (p.inner + wgs * vw * unroll - 1) / (wgs * vw * unroll);

  KernelLaunch k;
  k.program.files = {"storage.cl", "reduce_vec.cl", "elementwise_ops.cl", "prologue.cl", "reduce.cl"};
  k.program.defines = {dtype_define(shape.dtype),         {"RED_OP", std::to_string(red_op(shape.kind))},
                       {"SQUARE", s.square ? "1" : "0"},  {"FINAL", std::to_string(s.final)},
                       {"IN_F32", s.in_f32 ? "1" : "0"},  {"OUT_F32", s.out_f32 ? "1" : "0"},
                       {"STRIDED", s.strided ? "1" : "0"}};
  for (const auto& [name, value] : s.tunables) k.program.defines.emplace_back(name, std::to_string(value));
  k.kernel = "reduce";
  k.global = cl::NDRange(static_cast<std::size_t>(groups * wgs));
  k.local = cl::NDRange(static_cast<std::size_t>(wgs));
  k.args = {static_cast<cl_int>(p.outer),
            static_cast<cl_int>(p.length),
            static_cast<cl_int>(p.inner),
            static_cast<cl_int>(chunk),
            static_cast<cl_float>(s.scale),
            s.in,
            static_cast<cl_long>(s.in_offset),
            s.in_idx,
            s.out,
            static_cast<cl_long>(s.out_offset),
            s.out_idx};
  if (s.prologue && !s.prologue->empty()) s.prologue->add_to(k, *s.prologue_operands, s.in);
  return k;
}

// Secondary passes (combining partials, the outer run of two) read fp32 with plain loops.
Config secondary_tunables(const Config& config) {
  return {{"WGS", at(config, "WGS")}, {"VW", 1}, {"UNROLL", 1}, {"SPLIT", 1}, {"ROWS", 1}};
}

}  // namespace

const char* reduce_kind_name(ReduceKind kind) { return kKindNames[static_cast<int>(kind)]; }

ReduceKind parse_reduce_kind(const std::string& name) {
  for (int i = 0; i < 7; ++i) {
    if (name == kKindNames[i]) return static_cast<ReduceKind>(i);
  }
  throw Error(fmt::format("unknown reduction '{}' (sum, mean, max, min, argmax, argmin, norm2)", name.substr(0, 32)));
}

std::string ReduceShape::key() const {
  std::string k = fmt::format("axes={},dims={},keepdim={},kind={}", axes_text(axes), dims_text(dims), keepdim ? 1 : 0,
                              reduce_kind_name(kind));
  if (!prologue.empty()) k += ",prologue=" + prologue.key();
  return k;
}

nlohmann::json ReduceShape::to_json() const {
  nlohmann::json j = {{"op", "reduce"},
                      {"dims", dims},
                      {"axes", axes},
                      {"keepdim", keepdim},
                      {"kind", reduce_kind_name(kind)},
                      {"dtype", dtype_name(dtype)}};
  if (!prologue.empty()) j["prologue"] = prologue.to_json();
  return j;
}

ReduceShape ReduceShape::from_json(const nlohmann::json& j) {
  check_known_fields(j, {"dims", "axes", "keepdim", "kind", "dtype", "prologue"});
  ReduceShape s;
  s.dims = int_list_field(j, "dims", 4, 0, kMaxDimension);
  if (j.contains("axes")) {
    for (std::int64_t a : int_list_field(j, "axes", 4, 0, 3)) s.axes.push_back(static_cast<int>(a));
  } else {
    for (std::size_t d = 0; d < s.dims.size(); ++d) s.axes.push_back(static_cast<int>(d));  // PyTorch: dim=None
  }
  std::sort(s.axes.begin(), s.axes.end());
  s.keepdim = bool_field(j, "keepdim", false);
  s.kind = parse_reduce_kind(string_field(j, "kind", "sum"));
  s.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  if (j.contains("prologue")) s.prologue = Prologue::from_json(j["prologue"]);
  s.validate();
  return s;
}

void ReduceShape::validate() const {
  if (axes.empty()) throw Error("reduce: no axis to reduce");
  if (!std::is_sorted(axes.begin(), axes.end())) throw Error("reduce: axes must be ascending");
  const ReduceLayout l = layout();  // throws for bad dims and axes
  if (l.elements > kMaxDimension) throw Error("reduce: more than 2^31-1 elements");
  if (is_arg_kind(kind) && l.passes.size() > 1) {
    throw Error(fmt::format("reduce: {} needs adjacent reduced dimensions (one dim, or all)", reduce_kind_name(kind)));
  }
  prologue.validate("reduce");
  if (is_arg_kind(kind) && !prologue.empty())
    throw Error(fmt::format("reduce: {} takes no prologue", reduce_kind_name(kind)));
}

double ReduceShape::flops() const {
  const double n = static_cast<double>(layout().elements);
  return (kind == ReduceKind::kNorm2 ? 2 * n : n) + n * static_cast<double>(prologue.steps.size());
}

double ReduceShape::bytes() const {
  const ReduceLayout l = layout();
  const double in = static_cast<double>(l.elements) * static_cast<double>(dtype_bytes(dtype)) *
                    static_cast<double>(1 + prologue.tensors());
  const double out_size = is_arg_kind(kind) ? 8.0 : static_cast<double>(dtype_bytes(dtype));
  return in + static_cast<double>(l.outputs) * out_size;
}

SearchSpace reduce_space(const ReduceShape& shape, const DeviceInfo& device) {
  const ReduceLayout layout = shape.layout();
  const ReducePass p = layout.passes.empty() ? ReducePass{} : layout.passes.front();
  const bool strided = p.inner > 1;
  SearchSpace space(strided ? "columns" : "rows");
  space.add("WGS", {1, 4, 16, 64, 256}, "work-items per work-group")
      .add("VW", {1, 2, 4, 8, 16}, "vector width of loads")
      .add("UNROLL", {1, 2, 4},
           strided ? "vectors of adjacent columns per work-item" : "independent accumulators per work-item")
      .add("SPLIT", {1, 4, 16, 64, 256, 1024}, "work-groups per reduced range (> 1: two passes through fp32 partials)")
      .add("ROWS", {1, 4, 16, 64}, "outer rows per work-group, in turn");
  const std::int64_t max_wgs = static_cast<std::int64_t>(device.max_work_group_size);
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("WGS within the device limit and local memory", {"WGS"},
                  [=](const Config& c) { return at(c, "WGS") <= max_wgs && at(c, "WGS") * 8 <= local_bytes; });
  const std::int64_t outer_cap = pow2_ceil(p.outer);
  space.constrain("ROWS <= next_pow2(outer)", {"ROWS"}, [=](const Config& c) { return at(c, "ROWS") <= outer_cap; });
  if (strided) {
    const std::int64_t inner_cap = pow2_ceil(p.inner);
    space.constrain("WGS * VW * UNROLL <= next_pow2(inner) (no idle work-items)", {"WGS", "VW", "UNROLL"},
                    [=](const Config& c) { return at(c, "WGS") * at(c, "VW") * at(c, "UNROLL") <= inner_cap; });
    const std::int64_t length = p.length;
    space.constrain("SPLIT <= length", {"SPLIT"},
                    [=](const Config& c) { return at(c, "SPLIT") <= std::max<std::int64_t>(1, length); });
  } else {
    const std::int64_t length_cap = pow2_ceil(p.length);
    space.constrain("WGS * VW <= next_pow2(length) (no idle work-items)", {"WGS", "VW"},
                    [=](const Config& c) { return at(c, "WGS") * at(c, "VW") <= length_cap; });
    const std::int64_t length = p.length;
    space.constrain("SPLIT = 1 or each split gets a full step of the group", {"WGS", "VW", "UNROLL", "SPLIT"},
                    [=](const Config& c) {
                      return at(c, "SPLIT") == 1 ||
                             at(c, "SPLIT") * at(c, "WGS") * at(c, "VW") * at(c, "UNROLL") <= length;
                    });
  }
  return space;
}

std::int64_t default_work_group(std::int64_t bound, const DeviceInfo& device) {
  std::int64_t w = 1;
  for (std::int64_t v : {4, 16, 64}) {
    if (v <= bound && v <= static_cast<std::int64_t>(device.max_work_group_size)) w = v;
  }
  return w;
}

std::int64_t fill_work_group(std::int64_t bound, const DeviceInfo& device, std::int64_t local_bytes_per_item) {
  if (device.type == DeviceType::kCpu) return 1;
  std::int64_t w = 1;
  for (std::int64_t v : {4, 16, 64, 256}) {
    if (v <= bound && v <= static_cast<std::int64_t>(device.max_work_group_size) &&
        v * local_bytes_per_item <= static_cast<std::int64_t>(device.local_mem_bytes)) {
      w = v;
    }
  }
  return w;
}

std::int64_t default_vector_width(std::int64_t length, const DeviceInfo& device) {
  if (device.type != DeviceType::kCpu) return std::min<std::int64_t>(4, pow2_ceil(length));
  std::int64_t vw = 1;
  for (std::int64_t v : {2, 4, 8, 16}) {
    if (4 * v <= length) vw = v;
  }
  return vw;
}

std::int64_t wanted_work_groups(std::int64_t wgs, const DeviceInfo& device) {
  const std::int64_t units = std::max<std::int64_t>(1, device.compute_units);
  if (device.type == DeviceType::kCpu) return 8 * units;
  // 2048 resident work-items per compute unit (an NVIDIA SM; AMD's CU holds as many), at least 4
  // work-groups each.
  return units * std::max<std::int64_t>(4, 2048 / std::max<std::int64_t>(1, wgs));
}

std::int64_t rows_per_group(std::int64_t outer, std::int64_t wanted_groups, std::int64_t elements_per_row) {
  std::int64_t rows = 1;
  for (std::int64_t v : {4, 16, 64}) {
    // Rows in turn amortise a work-group's start; long rows need no help.
    if (v <= pow2_ceil(outer) && (outer + v - 1) / v >= wanted_groups && v * elements_per_row <= (1 << 16)) rows = v;
  }
  return rows;
}

// SPLIT for a default configuration: the fewest splits that give the device wanted_work_groups (a
// single work-group reducing a whole 1 GiB vector reached 8.5 GB/s of the H200's 4200), as long as
// every split keeps `step` elements (rows: a full step of the group; columns: one row) and at most
// `max_split`.
static std::int64_t default_split(std::int64_t groups, std::int64_t length, std::int64_t step, std::int64_t wanted,
                                  std::int64_t max_split = 1024) {
  std::int64_t split = 1;
  for (std::int64_t v : {1, 4, 16, 64, 256, 1024}) {
    if (v * step > length || v > max_split) break;
    split = v;
    if (groups * v >= wanted) break;
  }
  return split;
}

// Rules per device type (docs/decisions/0036-defaults-are-a-function-of-the-shape.md). A CPU
// (PoCL) runs a work-group's work-items as a loop, so one work-item with 16-wide vectors and
// independent accumulators is its fastest reducer (512 x 768 rows: 17 us against 989 for 64
// work-items of float4); a GPU wants 256-wide groups of float4 and enough of them to fill every
// compute unit.
Config reduce_default_config(const ReduceShape& shape, const DeviceInfo& device) {
  const ReduceLayout layout = shape.layout();
  const ReducePass p = layout.passes.empty() ? ReducePass{} : layout.passes.front();
  const bool cpu = device.type == DeviceType::kCpu;
  const std::int64_t max_vw = cpu ? 16 : 4;
  if (p.inner > 1) {
    // Columns: work-items (and vector lanes) on adjacent columns, the reduced range split over
    // work-groups until the device is full.
    const std::int64_t inner_cap = pow2_ceil(p.inner);
    const std::int64_t vw = std::min(max_vw, inner_cap);
    // Groups of 64 at most: with the splits capped (below), narrower groups are what fills the device
    // (4096x768 on the H200, SPLIT 64: 64 work items of float4 22 us; 256, one group per split, fewer
    // groups than SMs).
    const std::int64_t wgs =
        cpu ? (inner_cap / vw >= 4 ? 4 : 1) : std::min<std::int64_t>(64, fill_work_group(inner_cap / vw, device, 8));
    const std::int64_t groups = p.outer * ((p.inner + wgs * vw - 1) / (wgs * vw));
    // The combine pass of split columns is a column reduction of length SPLIT whose work items each
    // walk it alone: at most sqrt(length) splits, so that neither pass walks far. 4096x768 summed
    // over rows on the H200 (`ocltune eval`): SPLIT 1024 67 us (its combine pass 62 us), 64 22 us.
    std::int64_t balanced = 1;
    while (balanced * 4 * balanced * 4 <= p.length) balanced *= 4;
    const std::int64_t split = default_split(groups, p.length, 1, wanted_work_groups(wgs, device), balanced);
    return {{"WGS", wgs}, {"VW", vw}, {"UNROLL", 1}, {"SPLIT", split}, {"ROWS", 1}};
  }
  const std::int64_t length_cap = pow2_ceil(p.length);
  const std::int64_t vw = default_vector_width(p.length, device);
  const std::int64_t wgs = fill_work_group(length_cap / vw, device, 8);
  // Two accumulators where a row has two vectors per work-item (CPUs: the FP add latency).
  const std::int64_t unroll = cpu && p.length >= 2 * wgs * vw ? 2 : 1;
  const std::int64_t wanted = wanted_work_groups(wgs, device);
  const std::int64_t rows = cpu ? rows_per_group(p.outer, wanted, p.length) : 1;
  const std::int64_t row_groups = (p.outer + rows - 1) / rows;
  return {{"WGS", wgs},
          {"VW", vw},
          {"UNROLL", unroll},
          {"SPLIT", default_split(row_groups, p.length, wgs * vw * unroll, wanted)},
          {"ROWS", rows}};
}

LaunchPlan reduce_plan(const ReduceShape& shape, const ReduceOperands& operands, const Config& config,
                       Workspace& workspace) {
  shape.validate();
  if (operands.input_offset < 0 || operands.output_offset < 0) throw Error("reduce: negative buffer offset");
  shape.prologue.check_operands(operands.prologue, "reduce");
  const ReduceLayout layout = shape.layout();
  LaunchPlan plan;
  if (layout.passes.empty()) return plan;
  const bool arg = is_arg_kind(shape.kind);
  const int final = shape.kind == ReduceKind::kMean ? 1 : shape.kind == ReduceKind::kNorm2 ? 2 : 0;
  const float scale = static_cast<float>(1.0 / static_cast<double>(layout.reduced));

  cl::Buffer in = operands.input;
  std::int64_t in_offset = operands.input_offset;
  bool in_f32 = false;
  for (std::size_t i = 0; i < layout.passes.size(); ++i) {
    const ReducePass& pass = layout.passes[i];
    const bool last = i + 1 == layout.passes.size();
    const Config tunables = i == 0 ? config : secondary_tunables(config);
    const std::int64_t split = at(tunables, "SPLIT");
    const std::int64_t results = pass.outer * pass.inner;
    // Where this pass's results go: the output, or an fp32 intermediate for the next pass.
    cl::Buffer dest = last ? operands.output : workspace.get(static_cast<std::size_t>(results) * 4, 2);
    const std::int64_t dest_offset = last ? operands.output_offset : 0;

    Stage s;
    s.pass = pass;
    s.strided = pass.inner > 1;
    s.square = i == 0 && shape.kind == ReduceKind::kNorm2;
    s.in_f32 = in_f32;
    s.tunables = tunables;
    s.in = in;
    s.in_offset = in_offset;
    s.in_idx = in;  // unused unless the input holds partial (value, index) pairs
    if (i == 0) {
      s.prologue = &shape.prologue;
      s.prologue_operands = &operands.prologue;
    }
    if (split > 1) {
      const auto partials = static_cast<std::size_t>(split * results);
      s.out = workspace.get(partials * 4, 0);
      s.out_idx = arg ? workspace.get(partials * 4, 1) : s.out;
      s.out_f32 = true;
      plan.kernels.push_back(stage_launch(shape, s));

      Stage c;
      c.pass = {1, split, results};
      c.strided = true;
      c.in_f32 = true;
      c.tunables = secondary_tunables(config);
      c.in = s.out;
      c.in_idx = s.out_idx;
      c.out = dest;
      c.out_offset = dest_offset;
      c.out_idx = dest;
      c.out_f32 = !last;
      c.final = last ? final : 0;
      c.scale = scale;
      plan.kernels.push_back(stage_launch(shape, c));
    } else {
      s.out = dest;
      s.out_offset = dest_offset;
      s.out_idx = dest;
      s.out_f32 = !last;
      s.final = last ? final : 0;
      s.scale = scale;
      plan.kernels.push_back(stage_launch(shape, s));
    }
    in = dest;
    in_offset = 0;
    in_f32 = true;
  }
  return plan;
}

}  // namespace ocltune
