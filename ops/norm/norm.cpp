// Normalisation: shape, parameter spaces and default configurations (plans: ops/norm/norm_plan.cpp).
#include "ops/norm/norm.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "core/stored_tensor.h"
#include "harness/error.h"
#include "ops/reduce/reduce.h"
#include "ops/reduce/reduce_layout.h"

namespace ocltune {
namespace {

constexpr const char* kKindNames[] = {"layer_norm", "layer_norm_backward", "batch_norm", "batch_norm_backward"};

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

std::int64_t product(const std::vector<std::int64_t>& dims, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to && i < dims.size(); ++i) p *= dims[i];
  return p;
}

// The largest of `values` that is <= bound (the first when none is).
std::int64_t largest_within(std::initializer_list<std::int64_t> values, std::int64_t bound) {
  std::int64_t best = *values.begin();
  for (std::int64_t v : values) {
    if (v <= bound) best = v;
  }
  return best;
}

}  // namespace

const char* norm_kind_name(NormKind kind) { return kKindNames[static_cast<int>(kind)]; }

NormKind parse_norm_kind(const std::string& name) {
  for (int i = 0; i < 4; ++i) {
    if (name == kKindNames[i]) return static_cast<NormKind>(i);
  }
  throw Error(
      fmt::format("unknown normalisation '{}' (layer_norm, layer_norm_backward, batch_norm, batch_norm_backward)",
                  name.substr(0, 32)));
}

std::int64_t NormShape::rows() const { return product(dims, 0, static_cast<std::size_t>(axis)); }
std::int64_t NormShape::n() const { return product(dims, static_cast<std::size_t>(axis), dims.size()); }
std::int64_t NormShape::plane() const { return product(dims, 2, dims.size()); }
std::int64_t NormShape::elements() const { return product(dims, 0, dims.size()); }

std::string NormShape::key() const {
  if (is_batch_norm(kind)) return fmt::format("dims={},kind={}", dims_text(dims), norm_kind_name(kind));
  std::string k = fmt::format("axis={},dims={},kind={}", axis, dims_text(dims), norm_kind_name(kind));
  if (!prologue.empty()) k += ",prologue=" + prologue.key();
  return k;
}

nlohmann::json NormShape::to_json() const {
  nlohmann::json j = {{"op", "norm"}, {"kind", norm_kind_name(kind)}, {"dims", dims}, {"dtype", dtype_name(dtype)}};
  if (!is_batch_norm(kind)) j["axis"] = axis;
  if (eps != 1e-5f) j["eps"] = eps;
  if (kind == NormKind::kBatch && momentum != 0.1f) j["momentum"] = momentum;
  if (!prologue.empty()) j["prologue"] = prologue.to_json();
  return j;
}

NormShape NormShape::from_json(const nlohmann::json& j) {
  check_known_fields(j, {"kind", "dims", "axis", "eps", "momentum", "dtype", "prologue"});
  NormShape s;
  s.kind = parse_norm_kind(string_field(j, "kind", "layer_norm"));
  s.dims = int_list_field(j, "dims", 4, 0, kMaxDimension);
  s.axis = is_batch_norm(s.kind)
               ? 1
               : static_cast<int>(int_field(j, "axis", 0, 3, static_cast<std::int64_t>(s.dims.size()) - 1));
  s.eps = static_cast<float>(number_field(j, "eps", 1e-5));
  s.momentum = static_cast<float>(number_field(j, "momentum", 0.1));
  s.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  if (j.contains("prologue")) s.prologue = Prologue::from_json(j["prologue"]);
  s.validate();
  return s;
}

void NormShape::validate() const {
  const char* name = norm_kind_name(kind);
  if (dims.empty() || dims.size() > 4) throw Error(fmt::format("{}: a tensor of 1 to 4 dimensions", name));
  // layer_norm may have empty outer dimensions (no rows); normalised dimensions are never empty.
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const bool outer = !is_batch_norm(kind) && static_cast<int>(d) < axis;
    if (dims[d] < (outer ? 0 : 1))
      throw Error(fmt::format("{}: dimension {} must be at least {}", name, d, outer ? 0 : 1));
  }
  if (elements() > kMaxDimension) throw Error(fmt::format("{}: more than 2^31-1 elements", name));
  if (!(eps > 0.0f) || !(momentum >= 0.0f && momentum <= 1.0f))
    throw Error(fmt::format("{}: eps > 0, 0 <= momentum <= 1", name));
  if (is_batch_norm(kind)) {
    if (dims.size() < 2) throw Error(fmt::format("{}: dims are [N, C, ...]", name));
    // PyTorch refuses training statistics of a single value per channel (unbiased variance).
    if (batch() * plane() < 2) throw Error(fmt::format("{}: more than one value per channel", name));
  } else if (axis < 0 || axis >= static_cast<int>(dims.size())) {
    throw Error(fmt::format("{}: axis {} outside 0..{}", name, axis, dims.size() - 1));
  }
  prologue.validate(name);
  if (kind != NormKind::kLayer && !prologue.empty()) throw Error(fmt::format("{} takes no prologue", name));
}

double NormShape::flops() const {
  return (is_backward(kind) ? 10.0 : 6.0 + static_cast<double>(prologue.steps.size())) *
         static_cast<double>(elements());
}

double NormShape::bytes() const {
  const double ds = static_cast<double>(dtype_bytes(dtype));
  const double e = static_cast<double>(elements());
  if (is_batch_norm(kind)) {
    const double c = static_cast<double>(channels());
    // forward: x, y; gamma, beta; save_mean, save_invstd written; running stats read and written.
    if (kind == NormKind::kBatch) return 2 * e * ds + 2 * c * ds + 2 * c * 4 + 4 * c * 4;
    // backward: dy, x, dx; save_mean, save_invstd, gamma read; dgamma, dbeta written.
    return 3 * e * ds + c * (8 + ds) + 2 * c * ds;
  }
  const double r = static_cast<double>(rows()), n = static_cast<double>(this->n());
  if (kind == NormKind::kLayer) return (2 + static_cast<double>(prologue.tensors())) * e * ds + 2 * n * ds + 2 * r * 4;
  return 3 * e * ds + 2 * r * 4 + n * ds + 2 * n * ds;
}

std::int64_t layer_norm_vectors_per_item(std::int64_t n, std::int64_t wpr, std::int64_t vw) {
  return (n + wpr * vw - 1) / (wpr * vw);
}

namespace {

// layer_norm forward with each row in registers (kernels/norm_layer.cl, WPR > 0): WPR work-items
// per row, WGS / WPR rows per work-group at a time, ROWS times in turn. A separate variant, so the
// sweeping variant's configurations keep their exact parameter set.
SearchSpace layer_norm_registers_space(const NormShape& shape, const DeviceInfo& device) {
  SearchSpace space("layer_norm (rows in registers)");
  space.add("WGS", {32, 64, 128, 256, 512}, "work-items per work-group")
      .add("WPR", {1, 4, 8, 16, 32, 64, 128}, "work-items per row (a GPU: 32 = one warp)")
      .add("VW", {1, 2, 4, 8, 16}, "vector width of loads and stores (4 x fp32: 16 bytes)")
      .add("ROWS", {1, 2, 4}, "rows per work-item slot, in turn");
  const std::int64_t max_wgs = static_cast<std::int64_t>(device.max_work_group_size);
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("WGS within the device limit and local memory (2 floats per work-item)", {"WGS"},
                  [=](const Config& c) { return at(c, "WGS") <= max_wgs && at(c, "WGS") * 8 <= local_bytes; });
  space.constrain("WPR <= WGS", {"WGS", "WPR"}, [](const Config& c) { return at(c, "WPR") <= at(c, "WGS"); });
  const std::int64_t n = shape.n();
  const std::int64_t n_cap = pow2_ceil(n);
  // Every work-item holds at least part of a row, and at most 64 floats (registers, not spills).
  space.constrain("WPR * VW <= next_pow2(n), ceil(n / (WPR * VW)) * VW <= 64", {"WPR", "VW"}, [=](const Config& c) {
    const std::int64_t wpr = at(c, "WPR"), vw = at(c, "VW");
    return wpr * vw <= n_cap && layer_norm_vectors_per_item(n, wpr, vw) * vw <= 64;
  });
  const std::int64_t rows_cap = pow2_ceil(shape.rows());
  space.constrain("ROWS * WGS / WPR <= next_pow2(rows)", {"WGS", "WPR", "ROWS"},
                  [=](const Config& c) { return at(c, "ROWS") * at(c, "WGS") / at(c, "WPR") <= rows_cap; });
  return space;
}

}  // namespace

SearchSpace norm_space(const NormShape& shape, const DeviceInfo& device) {
  // Not on a CPU: PoCL runs a work-group's work-items in turn between barriers, so 32-512 of them
  // holding rows in registers only spill; with a small budget they would crowd out the sweeping
  // configurations that win there (WGS = 1, 16-wide vectors, 4-64 rows).
  if (shape.kind == NormKind::kLayer && shape.rows() > 0 && device.type != DeviceType::kCpu) {
    SearchSpace sweeping = norm_sweeping_space(shape, device);
    SearchSpace registers = layer_norm_registers_space(shape, device);
    // A row of more than 64 x 128 elements has no register configuration.
    if (registers.enumerate(1).empty()) return sweeping;
    return SearchSpace::unite({std::move(sweeping), std::move(registers)});
  }
  return norm_sweeping_space(shape, device);
}

SearchSpace norm_sweeping_space(const NormShape& shape, const DeviceInfo& device) {
  const bool batch = is_batch_norm(shape.kind);
  SearchSpace space(norm_kind_name(shape.kind));
  space
      .add("WGS", {1, 4, 16, 64, 256},
           batch ? "work-items per work-group (striding over a plane)" : "work-items sharing a row")
      .add("VW", {1, 2, 4, 8, 16}, "vector width of loads and stores");
  const std::int64_t max_wgs = static_cast<std::int64_t>(device.max_work_group_size);
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("WGS within the device limit and local memory (3 floats per work-item)", {"WGS"},
                  [=](const Config& c) { return at(c, "WGS") <= max_wgs && at(c, "WGS") * 12 <= local_bytes; });
  const std::int64_t seg_cap = pow2_ceil(batch ? shape.plane() : shape.n());
  space.constrain(batch ? "WGS * VW <= next_pow2(plane)" : "WGS * VW <= next_pow2(n)", {"WGS", "VW"},
                  [=](const Config& c) { return at(c, "WGS") * at(c, "VW") <= seg_cap; });
  if (!batch) {
    space.add("ROWS", {1, 4, 16, 64},
              is_backward(shape.kind) ? "rows per work-group (per partial dgamma/dbeta)" : "rows per work-group");
    if (!is_backward(shape.kind)) space.add("WELFORD", {0, 1}, "Welford statistics in one read (1) or two reads (0)");
    const std::int64_t rows_cap = pow2_ceil(shape.rows());
    space.constrain("ROWS <= next_pow2(rows)", {"ROWS"}, [=](const Config& c) { return at(c, "ROWS") <= rows_cap; });
    return space;
  }
  space.add("SPLIT", {1, 4, 16, 64}, "work-groups per channel for the statistics (> 1: partials, then a combine)")
      .add("FUSED", {0, 1}, "the statistics work-group also normalises its channel")
      .add("ROWS", {1, 4, 16, 64}, "planes per work-group of the apply kernel");
  if (shape.kind == NormKind::kBatch)
    space.add("WELFORD", {0, 1}, "Welford statistics in one read (1) or two reads (0)");
  const std::int64_t batch_cap = pow2_ceil(shape.batch());
  space.constrain("SPLIT <= next_pow2(batch)", {"SPLIT"}, [=](const Config& c) { return at(c, "SPLIT") <= batch_cap; });
  space.constrain("FUSED needs SPLIT = 1; ROWS is unused (1) when FUSED", {"SPLIT", "FUSED", "ROWS"},
                  [](const Config& c) { return at(c, "FUSED") == 0 || (at(c, "SPLIT") == 1 && at(c, "ROWS") == 1); });
  const std::int64_t planes_cap = pow2_ceil(shape.batch() * shape.channels());
  space.constrain("ROWS <= next_pow2(batch * channels)", {"ROWS"},
                  [=](const Config& c) { return at(c, "ROWS") <= planes_cap; });
  if (shape.kind == NormKind::kBatch) {
    space.constrain("two-read statistics need SPLIT = 1", {"SPLIT", "WELFORD"},
                    [](const Config& c) { return at(c, "WELFORD") == 1 || at(c, "SPLIT") == 1; });
  }
  return space;
}

// Rules per device type (docs/decisions/0036): one work-item with wide vectors per row or plane
// on a CPU, rows in turn while the device stays full; a GPU's work-group as wide as the row or
// plane allows; batch statistics split over the batch until the device is full.
Config norm_default_config(const NormShape& shape, const DeviceInfo& device) {
  const bool batch = is_batch_norm(shape.kind);
  const bool cpu = device.type == DeviceType::kCpu;
  const std::int64_t segment = batch ? shape.plane() : shape.n();
  const std::int64_t vw = default_vector_width(segment, device);
  const std::int64_t wgs = fill_work_group(pow2_ceil(segment) / vw, device, 12);
  const std::int64_t wanted = wanted_work_groups(wgs, device);
  Config c = {{"WGS", wgs}, {"VW", vw}};
  if (!batch) {
    const std::int64_t rows = cpu ? rows_per_group(shape.rows(), wanted, segment) : 1;
    // Backward: partial dgamma/dbeta per 16 rows keeps their traffic a small fraction of dy's.
    c["ROWS"] = shape.kind == NormKind::kLayerBackward
                    ? std::max(rows, largest_within({1, 4, 16}, pow2_ceil(shape.rows())))
                    : rows;
    if (shape.kind == NormKind::kLayer) c["WELFORD"] = 0;
    return c;
  }
  std::int64_t split = 1;
  for (std::int64_t v : {4, 16, 64}) {
    if (shape.channels() * split >= wanted || v > pow2_ceil(shape.batch())) break;
    split = v;
  }
  c["SPLIT"] = split;
  c["FUSED"] = 0;
  c["ROWS"] = cpu ? rows_per_group(shape.batch() * shape.channels(), wanted, segment) : 1;
  if (shape.kind == NormKind::kBatch) c["WELFORD"] = 1;
  return c;
}

std::vector<Config> norm_seed_configs(const NormShape& shape, const DeviceInfo& device) {
  if (device.type != DeviceType::kGpu || shape.kind != NormKind::kLayer) return {};
  // A GPU's layer_norm over short rows (BERT's 768 .. 4096): a warp (or two) per row with the row
  // in registers, 16-byte vectors, 4-8 rows per work-group; not yet measured (the sweeping
  // variant's best on the H200 at [4096, 768] was 0.80 of the copy bandwidth).
  std::vector<Config> seeds;
  for (const auto& [wgs, wpr, vw, rows] :
       {std::tuple{256, 32, 4, 1}, std::tuple{128, 32, 4, 1}, std::tuple{256, 64, 4, 1}, std::tuple{256, 32, 4, 2},
        std::tuple{512, 128, 4, 1}}) {
    seeds.push_back({{"WGS", wgs}, {"WPR", wpr}, {"VW", vw}, {"ROWS", rows}});
  }
  return seeds;
}

}  // namespace ocltune
