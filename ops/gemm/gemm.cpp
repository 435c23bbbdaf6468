// GEMM: problem description, parameter space, launch geometry and FLOP/byte model.
#include "ops/gemm/gemm.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "harness/buffer_extent.h"
#include "harness/capability.h"
#include "harness/error.h"
#include "ops/gemm/gemm_variants.h"

namespace ocltune {
namespace gemm_detail {

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

std::int64_t at(const Config& c, const char* name) { return c.at(name); }

// Work-groups of gemm.cl's tiles of `c` over `shape` (every batch entry).
std::int64_t tile_groups(const GemmShape& shape, const Config& c) {
  return ((shape.m + at(c, "MWG") - 1) / at(c, "MWG")) * ((shape.n + at(c, "NWG") - 1) / at(c, "NWG")) * shape.batch;
}

std::vector<KernelArg> gemm_args(const GemmShape& s, const GemmOperands& o) {
  return {static_cast<cl_int>(s.m),         static_cast<cl_int>(s.n),
          static_cast<cl_int>(s.k),         static_cast<cl_float>(s.alpha),
          static_cast<cl_float>(s.beta),    o.a,
          static_cast<cl_long>(o.a_offset), static_cast<cl_int>(o.lda),
          static_cast<cl_long>(o.stride_a), o.b,
          static_cast<cl_long>(o.b_offset), static_cast<cl_int>(o.ldb),
          static_cast<cl_long>(o.stride_b), o.c,
          static_cast<cl_long>(o.c_offset), static_cast<cl_int>(o.ldc),
          static_cast<cl_long>(o.stride_c)};
}

void add_epilogue(const GemmShape& s, const GemmOperands& o, KernelLaunch& store) {
  if (s.act != Activation::kNone) store.program.defines.emplace_back("ACT", std::to_string(static_cast<int>(s.act)));
  if (s.bias) {
    store.program.defines.emplace_back("HAS_BIAS", "1");
    store.args.emplace_back(o.bias);
    store.args.emplace_back(static_cast<cl_long>(o.bias_offset));
  }
}

}  // namespace gemm_detail

using gemm_detail::at;
using gemm_detail::next_pow2;
using gemm_detail::tile_groups;

std::string GemmShape::key() const {
  return fmt::format("batch={},k={},layout={}{},m={},n={}", batch, k, trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n);
}

nlohmann::json GemmShape::to_json() const {
  nlohmann::json j = {{"op", "gemm"},      {"m", m}, {"n", n}, {"k", k}, {"batch", batch}, {"trans_a", trans_a},
                      {"trans_b", trans_b}};
  if (alpha != 1.0f) j["alpha"] = alpha;
  if (beta != 0.0f) j["beta"] = beta;
  if (math != MathMode::kExact) j["math"] = math_name(math);
  if (dtype != DType::kFp32) j["dtype"] = dtype_name(dtype);
  if (bias) j["bias"] = true;
  if (act != Activation::kNone) j["act"] = activation_name(act);
  return j;
}

GemmShape GemmShape::from_json(const nlohmann::json& j) {
  check_known_fields(j,
                     {"m", "n", "k", "batch", "trans_a", "trans_b", "alpha", "beta", "math", "dtype", "bias", "act"});
  GemmShape s;
  s.m = int_field(j, "m", 1, kMaxDimension);
  s.n = int_field(j, "n", 1, kMaxDimension);
  s.k = int_field(j, "k", 1, kMaxDimension);
  s.batch = int_field(j, "batch", 1, 65535, 1);
  s.trans_a = bool_field(j, "trans_a", false);
  s.trans_b = bool_field(j, "trans_b", false);
  s.alpha = float_field(j, "alpha", 1.0f);
  s.beta = float_field(j, "beta", 0.0f);
  s.math = parse_math(string_field(j, "math", "exact"));
  s.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  s.bias = bool_field(j, "bias", false);
  s.act = parse_activation(string_field(j, "act", "none"));
  // Within one matrix the kernels index with 32-bit ints (check_operands): a larger one can never
  // run, so it is refused with the shape rather than when the run reaches it.
  const std::pair<const char*, std::int64_t> matrices[] = {{"A", s.m * s.k}, {"B", s.k * s.n}, {"C", s.m * s.n}};
  for (const auto& [name, elements] : matrices) {
    if (elements > kMaxDimension) {
      throw Error(fmt::format("gemm: matrix {} of m={} n={} k={} has {} elements, more than 2^31-1", name, s.m, s.n,
                              s.k, elements));
    }
  }
  return s;
}

double GemmShape::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
}

double GemmShape::bytes() const {
  const double c_passes = beta != 0.0f ? 2.0 : 1.0;
  return static_cast<double>(dtype_bytes(dtype)) *
         (static_cast<double>(batch) *
              (static_cast<double>(m * k) + static_cast<double>(k * n) + c_passes * static_cast<double>(m * n)) +
          (bias ? static_cast<double>(n) : 0.0));
}

GemmOperands packed_operands(const GemmShape& shape, cl::Buffer a, cl::Buffer b, cl::Buffer c) {
  GemmOperands o;
  o.a = std::move(a);
  o.b = std::move(b);
  o.c = std::move(c);
  o.lda = shape.packed_lda();
  o.ldb = shape.packed_ldb();
  o.ldc = shape.packed_ldc();
  o.stride_a = shape.rows_a() * o.lda;
  o.stride_b = shape.rows_b() * o.ldb;
  o.stride_c = shape.m * o.ldc;
  return o;
}

void check_buffer_extents(const GemmShape& s, const GemmOperands& o, cl_mem a, cl_mem b, cl_mem c, cl_mem bias) {
  if (s.m <= 0 || s.n <= 0 || s.batch <= 0) return;
  // Each buffer holds its last batch entry's last row (a batch stride of 0 repeats one matrix).
  const auto extent = [&](std::int64_t stride, std::int64_t rows, std::int64_t ld, std::int64_t cols) {
    return (s.batch - 1) * stride + (rows - 1) * ld + cols;
  };
  const std::size_t bytes = dtype_bytes(s.dtype);
  if (a)
    check_buffer_extent(a, o.a_offset, extent(o.stride_a, s.rows_a(), o.lda, s.trans_a ? s.m : s.k), bytes, "gemm",
                        "A");
  if (b)
    check_buffer_extent(b, o.b_offset, extent(o.stride_b, s.rows_b(), o.ldb, s.trans_b ? s.k : s.n), bytes, "gemm",
                        "B");
  if (c) check_buffer_extent(c, o.c_offset, extent(o.stride_c, s.m, o.ldc, s.n), bytes, "gemm", "C");
  if (s.bias && bias) check_buffer_extent(bias, o.bias_offset, s.n, bytes, "gemm", "bias");
}

void check_operands(const GemmShape& s, const GemmOperands& o) {
  if (o.lda < s.packed_lda()) throw Error(fmt::format("gemm: lda {} < {}", o.lda, s.packed_lda()));
  if (o.ldb < s.packed_ldb()) throw Error(fmt::format("gemm: ldb {} < {}", o.ldb, s.packed_ldb()));
  if (o.ldc < s.packed_ldc()) throw Error(fmt::format("gemm: ldc {} < {}", o.ldc, s.packed_ldc()));
  if (o.a_offset < 0 || o.b_offset < 0 || o.c_offset < 0) throw Error("gemm: negative buffer offset");
  if (o.stride_a < 0 || o.stride_b < 0 || o.stride_c < 0) throw Error("gemm: negative batch stride");
  if (s.bias && o.bias_offset < 0) throw Error("gemm: negative bias offset");
  // Within one matrix the kernel indexes with 32-bit ints.
  if (s.rows_a() * o.lda > kMaxDimension || s.rows_b() * o.ldb > kMaxDimension || s.m * o.ldc > kMaxDimension) {
    throw Error("gemm: a matrix has more than 2^31 elements");
  }
  check_buffer_extents(s, o, o.a(), o.b(), o.c(), o.bias());
}

namespace {

SearchSpace fma_space(const GemmShape& shape, const DeviceInfo& device) {
  SearchSpace space("fma");
  space.add("MWG", {16, 32, 64, 128, 256}, "rows of C per work-group tile")
      .add("NWG", {16, 32, 64, 128, 256}, "columns of C per work-group tile")
      .add("KWG", {8, 16, 32}, "depth of the K tile loaded per step")
      .add("WPTM", {1, 2, 4, 8, 16}, "rows of C per work-item")
      .add("WPTN", {1, 2, 4, 8, 16, 32}, "columns of C per work-item")
      .add("VWM", {1, 2, 4, 8}, "runs of adjacent rows per work-item (vector reads of A)")
      .add("VWN", {1, 2, 4, 8, 16}, "runs of adjacent columns per work-item (vector reads of B, stores of C)")
      .add("SA", {0, 1}, "stage A through local memory")
      .add("SB", {0, 1}, "stage B through local memory")
      .add("VWL", {1, 4}, "vector width of global loads into local memory")
      .add("DB", {0, 1}, "double-buffer local memory, prefetching the next tile into registers")
      .add("KWI", {2, 8}, "unroll factor of the inner k loop")
      .add("WTN", {0, 4, 8, 16}, "work-items along N per warp of 32 (0: plain order)");

  // Tiles larger than the problem only waste work-items: allow up to the next power of two.
  const std::int64_t max_mwg = std::max<std::int64_t>(16, next_pow2(shape.m));
  const std::int64_t max_nwg = std::max<std::int64_t>(16, next_pow2(shape.n));
  space.constrain("MWG <= next_pow2(M)", {"MWG"}, [=](const Config& c) { return at(c, "MWG") <= max_mwg; });
  space.constrain("NWG <= next_pow2(N)", {"NWG"}, [=](const Config& c) { return at(c, "NWG") <= max_nwg; });
  space.constrain("MWG % WPTM == 0", {"MWG", "WPTM"},
                  [](const Config& c) { return at(c, "MWG") % at(c, "WPTM") == 0; });
  space.constrain("NWG % WPTN == 0", {"NWG", "WPTN"},
                  [](const Config& c) { return at(c, "NWG") % at(c, "WPTN") == 0; });
  // At least 4 accumulators (fewer never amortise the loads), unless the whole of C is smaller.
  const std::int64_t min_acc = std::min<std::int64_t>(4, next_pow2(shape.m) * next_pow2(shape.n));
  space.constrain("min(4, |C|) <= WPTM * WPTN <= 128 (accumulator registers)", {"WPTM", "WPTN"}, [=](const Config& c) {
    const std::int64_t acc = at(c, "WPTM") * at(c, "WPTN");
    return acc >= min_acc && acc <= 128;
  });
  // Work-group sizes: within the device's limits, and in the range that pays off on the device type
  // (a GPU wants no more than 1024; a CPU runs a work-group as a loop on one core, where a few dozen
  // work-items already amortise the loop). The GPU floor is 16, not a warp: the defaults of small
  // problems (conv2d's narrow layers through this GEMM: 16x16 tiles of 4x4) have 16 or 32 work-items,
  // and a default outside the space could win a tuning run yet never be proposed or borrowed.
  const bool gpu = device.type == DeviceType::kGpu;
  const auto max_wg = std::min<std::int64_t>(static_cast<std::int64_t>(device.max_work_group_size), gpu ? 1024 : 256);
  const std::int64_t min_wg = gpu ? 16 : 4;
  const auto max_x =
      static_cast<std::int64_t>(device.max_work_item_sizes.size() > 0 ? device.max_work_item_sizes[0] : max_wg);
  const auto max_y =
      static_cast<std::int64_t>(device.max_work_item_sizes.size() > 1 ? device.max_work_item_sizes[1] : max_wg);
  space.constrain("work-group size within device limits and useful for its type", {"MWG", "NWG", "WPTM", "WPTN"},
                  [=](const Config& c) {
                    const std::int64_t mdimc = at(c, "MWG") / at(c, "WPTM");
                    const std::int64_t ndimc = at(c, "NWG") / at(c, "WPTN");
                    const std::int64_t threads = mdimc * ndimc;
                    return threads <= max_wg && threads >= min_wg && ndimc <= max_x && mdimc <= max_y;
                  });
  space.constrain("WPTM % VWM == 0", {"WPTM", "VWM"},
                  [](const Config& c) { return at(c, "WPTM") % at(c, "VWM") == 0; });
  space.constrain("WPTN % VWN == 0", {"WPTN", "VWN"},
                  [](const Config& c) { return at(c, "WPTN") % at(c, "VWN") == 0; });
  // Vectors of 8 and 16 serve the unstaged path (direct vector loads that CPUs turn into wide
  // FMAs); from local memory 4 floats are the widest useful read.
  space.constrain("VWM <= 4 when A is staged", {"SA", "VWM"},
                  [](const Config& c) { return !at(c, "SA") || at(c, "VWM") <= 4; });
  space.constrain("VWN <= 4 when B is staged", {"SB", "VWN"},
                  [](const Config& c) { return !at(c, "SB") || at(c, "VWN") <= 4; });
  // Each work-item loads a whole number of VWL-vectors of every staged tile.
  space.constrain("staged tiles split evenly into VWL-vectors per work-item",
                  {"MWG", "NWG", "KWG", "WPTM", "WPTN", "SA", "SB", "VWL"}, [](const Config& c) {
                    const std::int64_t threads = (at(c, "MWG") / at(c, "WPTM")) * (at(c, "NWG") / at(c, "WPTN"));
                    const std::int64_t unit = threads * at(c, "VWL");
                    if (at(c, "SA") && (at(c, "MWG") * at(c, "KWG")) % unit != 0) return false;
                    if (at(c, "SB") && (at(c, "NWG") * at(c, "KWG")) % unit != 0) return false;
                    return true;
                  });
  space.constrain("VWL = 1 when nothing is staged (it would be unused)", {"SA", "SB", "VWL"},
                  [](const Config& c) { return at(c, "SA") || at(c, "SB") || at(c, "VWL") == 1; });
  space.constrain("DB needs a staged operand", {"SA", "SB", "DB"},
                  [](const Config& c) { return at(c, "SA") || at(c, "SB") || at(c, "DB") == 0; });
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("local memory fits the device", {"MWG", "NWG", "KWG", "SA", "SB", "DB"}, [=](const Config& c) {
    const std::int64_t floats =
        (at(c, "SA") * at(c, "MWG") + at(c, "SB") * at(c, "NWG")) * at(c, "KWG") * (1 + at(c, "DB"));
    return floats * 4 <= local_bytes;
  });
  space.constrain("KWG % KWI == 0", {"KWG", "KWI"}, [](const Config& c) { return at(c, "KWG") % at(c, "KWI") == 0; });
  // Warp blocks only where warps exist (GPUs, whole warps, a grid the blocks tile exactly) and
  // where they matter: the reads of staged tiles from local memory.
  space.constrain("WTN > 0 only on GPUs with both operands staged, tiling the work-item grid in warps of 32",
                  {"MWG", "NWG", "WPTM", "WPTN", "SA", "SB", "WTN"}, [=](const Config& c) {
                    const std::int64_t wtn = at(c, "WTN");
                    if (wtn == 0) return true;
                    if (!at(c, "SA") || !at(c, "SB")) return false;
                    const std::int64_t mdimc = at(c, "MWG") / at(c, "WPTM"), ndimc = at(c, "NWG") / at(c, "WPTN");
                    return gpu && (mdimc * ndimc) % 32 == 0 && ndimc % wtn == 0 && mdimc % (32 / wtn) == 0;
                  });
  return space;
}

// gemm.cl with K split into KSPLIT parts (gemm.cl's KSPLIT, summed by kernels/gemm_ksplit_sum.cl):
// a problem whose tiles leave the device short of work-groups (a weight gradient's few filters x
// taps over thousands of pixels) gets KSPLIT times more work-groups, each with a K KSPLIT times
// shorter. Offered where it can pay: on GPUs, each part at least two K tiles long, and only up to
// the split that fills the device (a split whose half already does only adds partials to sum).
SearchSpace ksplit_space(const GemmShape& shape, const DeviceInfo& device) {
  const SearchSpace fma = fma_space(shape, device);
  SearchSpace space("fma_ksplit");
  // KSPLIT first: with the tile parameters after it, the wave constraint prunes the enumeration
  // early (an empty variant is found out in a few thousand steps).
  space.add("KSPLIT", {2, 4, 8, 16}, "parts of K multiplied by separate work-groups, then summed");
  for (const Parameter& p : fma.parameters()) space.add(p.name, p.values, p.meaning);
  for (const Constraint& c : fma.variants().front().constraints) space.constrain(c.description, c.params, c.holds);
  const std::int64_t k = shape.k, batch = shape.batch;
  space.constrain("each part of K has at least two K tiles", {"KSPLIT", "KWG"},
                  [=](const Config& c) { return k >= 2 * at(c, "KSPLIT") * at(c, "KWG"); });
  space.constrain("batch * KSPLIT <= 65535 (the launch's third dimension)", {"KSPLIT"},
                  [=](const Config& c) { return batch * at(c, "KSPLIT") <= 65535; });
  const std::int64_t units = static_cast<std::int64_t>(device.compute_units);
  space.constrain(
      "half the split gives less than one wave of work-groups", {"MWG", "NWG", "WPTM", "WPTN", "KSPLIT"},
      [=](const Config& c) { return tile_groups(shape, c) * (at(c, "KSPLIT") / 2) < units * gemm_resident_groups(c); });
  return space;
}

}  // namespace

SearchSpace gemm_space(const GemmShape& shape, const DeviceInfo& device) {
  std::vector<SearchSpace> parts;
  parts.push_back(fma_space(shape, device));
  if (device.type == DeviceType::kGpu && shape.k >= 32) {
    SearchSpace split = ksplit_space(shape, device);
    if (!split.enumerate(1).empty()) parts.push_back(std::move(split));  // tiles that fill the device: none
  }
  if (shape.tensor_cores_allowed() && satisfies(device, nvidia_mma_tf32())) {
    parts.push_back(gemm_detail::mma_space(shape, device));
    parts.push_back(gemm_detail::mma_packed_space(shape, device));
  }
  if (shape.tensor_cores_allowed() && satisfies(device, nvidia_wgmma_tf32())) {
    parts.push_back(gemm_detail::wgmma_space(shape, device));
    parts.push_back(gemm_detail::wgmma_packed_space(shape, device));
  }
  if (satisfies(device, cpu_device())) parts.push_back(gemm_detail::cpu_space(shape, device));
  if (parts.size() == 1) return std::move(parts.front());
  return SearchSpace::unite(std::move(parts));
}

Config gemm_default_config() {
  return {{"MWG", 32}, {"NWG", 32}, {"KWG", 16}, {"WPTM", 4}, {"WPTN", 4}, {"VWM", 1}, {"VWN", 1},
          {"SA", 1},   {"SB", 1},   {"VWL", 1},  {"DB", 0},   {"KWI", 2},  {"WTN", 0}};
}

Config gemm_default_config(const GemmShape& shape) {
  Config c = gemm_default_config();
  if (shape.m <= 16) c["MWG"] = 16;
  if (shape.n <= 16) c["NWG"] = 16;
  return c;
}

const std::vector<Config>& gemm_gpu_tiles() {
  // MWG, NWG, KWG, WPTM, WPTN, VWM, VWN, DB: tiles that won tuned H200 rows (256x128 at 4096^3,
  // 128x128 at 4096x2304x768, 64x64 at 3072x768x4096 TN), the first GPU seeds (gemm_seeds.cpp); all
  // stage both operands with loads of 4 floats and unroll the inner loop 8 times.
  static const std::vector<Config> tiles = [] {
    std::vector<Config> out;
    for (const auto& [mwg, nwg, kwg, wptm, wptn, vwm, vwn, db] :
         std::vector<std::array<std::int64_t, 8>>{{256, 128, 16, 16, 8, 4, 4, 1},
                                                  {128, 128, 16, 8, 8, 4, 4, 0},
                                                  {64, 128, 16, 4, 8, 4, 4, 1},
                                                  {64, 64, 16, 4, 4, 4, 4, 1},
                                                  {32, 64, 32, 8, 4, 2, 2, 1}}) {
      out.push_back({{"MWG", mwg},
                     {"NWG", nwg},
                     {"KWG", kwg},
                     {"WPTM", wptm},
                     {"WPTN", wptn},
                     {"VWM", vwm},
                     {"VWN", vwn},
                     {"SA", 1},
                     {"SB", 1},
                     {"VWL", 4},
                     {"DB", db},
                     {"KWI", 8},
                     {"WTN", 0}});
    }
    return out;
  }();
  return tiles;
}

std::optional<Config> gemm_gpu_tile(const GemmShape& shape, std::int64_t compute_units,
                                    const std::function<bool(const Config&)>& accepts) {
  for (const Config& tile : gemm_gpu_tiles()) {
    if (tile_groups(shape, tile) >= compute_units && accepts(tile)) return tile;
  }
  return std::nullopt;
}

std::int64_t gemm_resident_groups(const Config& c) {
  constexpr std::int64_t kWorkItems = 2048, kRegisters = 65536, kGroups = 32;
  const std::int64_t threads = (at(c, "MWG") / at(c, "WPTM")) * (at(c, "NWG") / at(c, "WPTN"));
  const std::int64_t registers = at(c, "WPTM") * at(c, "WPTN") + at(c, "WPTM") + at(c, "WPTN") + 32;
  return std::max<std::int64_t>(1, std::min({kGroups, kWorkItems / threads, kRegisters / (threads * registers)}));
}

Config gemm_gpu_split(const Config& config, const GemmShape& shape, const DeviceInfo& device,
                      const std::function<bool(const Config&)>& accepts) {
  if (!config.count("MWG") || !config.count("WPTM") || is_ksplit_config(config)) return config;
  const std::int64_t groups = tile_groups(shape, config);
  // Half a wave: each part more is partials to write and sum, and the estimate of a wave is rough.
  // Untuned, only long dot products are split (parts of at least kMinPart): the partials cost
  // M x N x parts writes and reads whatever K is, which a short K does not pay back (the 1x1 weight
  // gradients of 14x14 images, K = 196).
  constexpr std::int64_t kMinPart = 1024;
  const std::int64_t wanted = static_cast<std::int64_t>(device.compute_units) * gemm_resident_groups(config) / 2;
  Config best = config;
  for (std::int64_t parts = 2; parts <= 16 && groups * (parts / 2) < wanted && shape.k >= parts * kMinPart;
       parts *= 2) {
    Config split = config;
    split["KSPLIT"] = parts;
    if (!accepts(split)) break;
    best = split;
  }
  return best;
}

bool is_ksplit_config(const Config& config) {
  const auto split = config.find("KSPLIT");
  return split != config.end() && split->second > 1;
}

namespace {

// gemm.cl on `o` (with KSPLIT > 1: entry batch * KSPLIT + part of o.c gets each part's product).
KernelLaunch fma_launch(const GemmShape& s, const GemmOperands& o, const Config& config) {
  KernelLaunch launch;
  launch.program.files = {"gemm_layout.cl", "activation.cl", "gemm_epilogue.cl", "gemm.cl"};
  launch.program.defines = {{"TRANS_A", s.trans_a ? "1" : "0"}, {"TRANS_B", s.trans_b ? "1" : "0"}};
  for (const auto& [name, value] : config) launch.program.defines.emplace_back(name, std::to_string(value));
  launch.kernel = "gemm";
  const std::int64_t mwg = at(config, "MWG"), nwg = at(config, "NWG");
  const std::int64_t mdimc = mwg / at(config, "WPTM"), ndimc = nwg / at(config, "WPTN");
  const std::int64_t groups_m = (s.m + mwg - 1) / mwg, groups_n = (s.n + nwg - 1) / nwg;
  const std::int64_t parts = is_ksplit_config(config) ? at(config, "KSPLIT") : 1;
  launch.global = cl::NDRange(static_cast<std::size_t>(groups_n * ndimc), static_cast<std::size_t>(groups_m * mdimc),
                              static_cast<std::size_t>(s.batch * parts));
  launch.local = cl::NDRange(static_cast<std::size_t>(ndimc), static_cast<std::size_t>(mdimc), 1);
  launch.args = gemm_detail::gemm_args(s, o);
  return launch;
}

// Split K: gemm.cl writes each part's alpha * op(A) * op(B) into packed partials in the workspace,
// then gemm_ksplit_sum.cl adds them (in order) and beta * C into C.
LaunchPlan ksplit_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  const std::int64_t parts = at(config, "KSPLIT");
  if (s.batch * parts > 65535) {
    throw Error(fmt::format("gemm: a split of K into {} parts of {} batch entries is more than 65535 launches' worth",
                            parts, s.batch));
  }
  GemmShape partial_shape = s;
  partial_shape.beta = 0.0f;   // each partial is written whole, C is read once, by the sum
  partial_shape.bias = false;  // and the epilogue is the sum's (gemm_plan_unchecked)
  partial_shape.act = Activation::kNone;
  GemmOperands partial = o;
  partial.c = workspace.get(static_cast<std::size_t>(s.batch * parts * s.m * s.n) * sizeof(float), kGemmSplitSlot);
  partial.c_offset = 0;
  partial.ldc = s.n;
  partial.stride_c = s.m * s.n;

  KernelLaunch sum;
  sum.program.files = {"activation.cl", "gemm_epilogue.cl", "gemm_ksplit_sum.cl"};
  sum.kernel = "gemm_ksplit_sum";
  sum.global = cl::NDRange(static_cast<std::size_t>((s.m * s.n + 255) / 256 * 256), static_cast<std::size_t>(s.batch));
  sum.local = cl::NDRange(256, 1);
  sum.args = {static_cast<cl_int>(s.m),
              static_cast<cl_int>(s.n),
              static_cast<cl_int>(parts),
              static_cast<cl_float>(s.beta),
              partial.c,
              o.c,
              static_cast<cl_long>(o.c_offset),
              static_cast<cl_int>(o.ldc),
              static_cast<cl_long>(o.stride_c)};
  return {{fma_launch(partial_shape, partial, config), std::move(sum)}};
}

}  // namespace

bool gemm_reads_16bit(const Config& config) { return is_wgmma_packed_config(config) || is_mma_packed_config(config); }

LaunchPlan gemm_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  check_operands(s, o);
  return gemm_plan_unchecked(s, o, config, workspace);
}

namespace {

LaunchPlan variant_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  // 16-bit storage: the variants on packed operands read it themselves, every other one through
  // fp32 copies.
  if (s.dtype != DType::kFp32 && !gemm_reads_16bit(config)) {
    return gemm_detail::widened_plan(s, o, config, workspace);
  }
  if (is_mma_packed_config(config)) return gemm_detail::mma_packed_plan(s, o, config, workspace);
  if (is_mma_config(config)) return gemm_detail::mma_plan(s, o, config);
  if (is_wgmma_config(config)) return gemm_detail::wgmma_plan(s, o, config);
  if (is_wgmma_packed_config(config)) return gemm_detail::wgmma_packed_plan(s, o, config, workspace);
  if (is_cpu_config(config)) return gemm_detail::cpu_plan(s, o, config);
  if (is_ksplit_config(config)) return ksplit_plan(s, o, config, workspace);
  return {{fma_launch(s, o, config)}};
}

}  // namespace

LaunchPlan gemm_plan_unchecked(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  if (s.bias && !o.bias()) throw Error("gemm: the shape has a bias but the operands have no bias buffer");
  LaunchPlan plan = variant_plan(s, o, config, workspace);
  // Every plan's last kernel stores C (the GEMM, a split K's sum, a 16-bit copy's narrowing): the
  // epilogue is applied there, as C is written.
  if (s.has_epilogue()) gemm_detail::add_epilogue(s, o, plan.kernels.back());
  return plan;
}

}  // namespace ocltune
