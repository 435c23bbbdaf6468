// Helpers shared by the conv2d algorithms' spaces and plans: shape arguments, program sources,
// launches, the bias/activation epilogue and the bias gradient.
#include <algorithm>

#include <fmt/format.h>

#include "harness/error.h"
#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {

std::int64_t at(const Config& config, const char* name) {
  const auto it = config.find(name);
  if (it == config.end())
    throw Error(fmt::format("conv2d: configuration {} lacks parameter {}", to_string(config), name));
  return it->second;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::int64_t next_pow2(std::int64_t x) {
  std::int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}

std::vector<KernelArg> shape_args(const Conv2dShape& s) {
  std::vector<KernelArg> args;
  for (const std::int64_t v : {s.n, s.c, s.h, s.w, s.k, s.p(), s.q(), s.r, s.s, s.stride_h, s.stride_w, s.pad_h,
                               s.pad_w, s.dil_h, s.dil_w, s.groups}) {
    args.emplace_back(static_cast<cl_int>(v));
  }
  return args;
}

ProgramSource conv_program(const std::string& file, const Conv2dShape& shape, const Config& config,
                           std::initializer_list<const char*> params) {
  return conv_program(std::vector<std::string>{file}, shape, config, params);
}

ProgramSource conv_program(const std::vector<std::string>& files, const Conv2dShape& shape, const Config& config,
                           std::initializer_list<const char*> params) {
  ProgramSource source;
  // storage.cl first: the kernels read and write the tensors as STORAGE (LOAD/STORE), in fp32 registers.
  source.files = {"storage.cl", "activation.cl", "conv2d_common.cl"};
  source.files.insert(source.files.end(), files.begin(), files.end());
  source.defines = {dtype_define(shape.dtype),
                    {"HAS_BIAS", shape.bias ? "1" : "0"},
                    {"ACT", std::to_string(static_cast<int>(shape.act))}};
  for (const char* name : params) source.defines.emplace_back(name, std::to_string(at(config, name)));
  return source;
}

KernelLaunch make_launch(ProgramSource program, std::string kernel, std::vector<KernelArg> args, std::int64_t g0,
                         std::int64_t g1, std::int64_t g2, std::int64_t l0, std::int64_t l1, std::int64_t l2) {
  KernelLaunch launch;
  launch.program = std::move(program);
  launch.kernel = std::move(kernel);
  launch.args = std::move(args);
  const auto size = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  launch.global = cl::NDRange(size(g0), size(g1), size(g2));
  launch.local = cl::NDRange(size(l0), size(l1), size(l2));
  return launch;
}

namespace {

// Work-group size of the elementwise epilogue kernels (EPI_WG in conv2d_common.cl): not tuned,
// these kernels move a small fraction of the data of the convolution before them.
constexpr std::int64_t kEpilogueWg = 64;

ProgramSource epilogue_program(const Conv2dShape& shape) {
  ProgramSource source;
  source.files = {"storage.cl", "activation.cl", "conv2d_common.cl"};
  source.defines = {dtype_define(shape.dtype),
                    {"HAS_BIAS", shape.bias ? "1" : "0"},
                    {"ACT", std::to_string(static_cast<int>(shape.act))},
                    {"EPI_WG", std::to_string(kEpilogueWg)}};
  return source;
}

}  // namespace

void add_bias_act(const Conv2dShape& shape, const Conv2dOperands& o, LaunchPlan& plan) {
  if (!shape.bias && shape.act == Activation::kNone) return;
  // About kEpilogueElements per work-group: a chunk of a large plane, or several small planes.
  constexpr std::int64_t kEpilogueElements = 2048;
  const std::int64_t plane = shape.p() * shape.q(), planes = shape.n * shape.k;
  const std::int64_t chunk = std::min(plane, kEpilogueElements);
  const std::int64_t rows = std::max<std::int64_t>(1, kEpilogueElements / plane);
  std::vector<KernelArg> args = {static_cast<cl_int>(plane),
                                 static_cast<cl_int>(shape.k),
                                 static_cast<cl_int>(planes),
                                 static_cast<cl_int>(chunk),
                                 static_cast<cl_int>(rows),
                                 o.output,
                                 static_cast<cl_long>(o.output_offset),
                                 bias_or(o, o.output),
                                 static_cast<cl_long>(o.bias_offset)};
  plan.kernels.push_back(make_launch(epilogue_program(shape), "conv2d_bias_act", std::move(args),
                                     ceil_div(plane, chunk) * kEpilogueWg, ceil_div(planes, rows), 1, kEpilogueWg, 1,
                                     1));
}

void add_bias_grad(const Conv2dShape& shape, const Conv2dOperands& o, LaunchPlan& plan) {
  if (!shape.bias) return;
  std::vector<KernelArg> args = {static_cast<cl_int>(shape.n),
                                 static_cast<cl_int>(shape.k),
                                 static_cast<cl_int>(shape.p() * shape.q()),
                                 o.output,
                                 static_cast<cl_long>(o.output_offset),
                                 o.bias,
                                 static_cast<cl_long>(o.bias_offset)};
  plan.kernels.push_back(make_launch(epilogue_program(shape), "conv2d_bias_grad", std::move(args), kEpilogueWg, shape.k,
                                     1, kEpilogueWg, 1, 1));
}

cl::Buffer bias_or(const Conv2dOperands& o, const cl::Buffer& stand_in) { return o.bias() ? o.bias : stand_in; }

SearchSpace algorithm_variant(const std::string& name, std::int64_t algo, const SearchSpace::Variant& variant) {
  SearchSpace space(name);
  space.add("ALGO", {algo}, "convolution algorithm");
  for (const Parameter& p : variant.parameters) space.add(p.name, p.values, p.meaning);
  for (const Constraint& c : variant.constraints) space.constrain(c.description, c.params, c.holds);
  return space;
}

SearchSpace gemm_based_space(const std::string& name, std::int64_t algo, const GemmShape& gemm,
                             const DeviceInfo& device) {
  // On a GPU also the wide vectors and the unrolled inner loop of the GEMM family's fastest large
  // tiles (H200: 128x128 tiles, KWI=8, vectors of 4 at 30-46 TFLOP/s against 10-20 without them).
  const bool gpu = device.type == DeviceType::kGpu;
  const std::vector<std::int64_t> vectors = gpu ? std::vector<std::int64_t>{1, 2, 4} : std::vector<std::int64_t>{1, 2};
  const SearchSpace restricted = restrict_values(
      gemm_space(gemm, device), {{"MWG", {16, 32, 64, 128}},
                                 {"NWG", {16, 32, 64, 128}},
                                 {"KWG", {16, 32}},
                                 {"WPTM", {2, 4, 8}},
                                 {"WPTN", {2, 4, 8}},
                                 {"VWM", vectors},
                                 {"VWN", vectors},
                                 {"VWL", {1, 4}},
                                 {"KWI", gpu ? std::vector<std::int64_t>{2, 8} : std::vector<std::int64_t>{2}},
                                 {"WTN", {0}},
                                 {"BM", {32, 64, 128}},
                                 {"BN", {32, 64, 128}},
                                 {"WM", {1, 2, 4}},
                                 {"WN", {1, 2, 4}}});
  SearchSpace space;
  for (const SearchSpace::Variant& v : restricted.variants()) {
    // The fewer tile values can leave the split-K variant without a point: then it is left out.
    if (v.name == "fma_ksplit" && algorithm_variant(name, algo, v).enumerate(1).empty()) continue;
    space = SearchSpace::unite(
        {std::move(space), algorithm_variant(v.name == "fma" ? name : name + "_" + v.name, algo, v)});
  }
  return space;
}

Config gemm_part(const Config& config, std::initializer_list<const char*> own) {
  const bool own_defaults = is_mma_config(config) || is_wgmma_config(config) || is_wgmma_packed_config(config) ||
                            is_mma_packed_config(config) || is_cpu_config(config);
  Config gemm = own_defaults ? Config{} : gemm_default_config();
  for (const auto& [name, value] : config) {
    const bool algorithm_own =
        name == "ALGO" || std::any_of(own.begin(), own.end(), [&](const char* o) { return name == o; });
    if (!algorithm_own) gemm[name] = value;
  }
  return gemm;
}

Config on_gpu_tile(const Config& base, const GemmShape& gemm, const DeviceInfo& device, const SearchSpace& space) {
  const auto on_tile = [&](const Config& tile) {
    Config c = base;
    for (const auto& [name, value] : tile) {
      if (c.count(name)) c[name] = value;
    }
    return c;
  };
  const std::optional<Config> tile =
      gemm_gpu_tile(gemm, device.compute_units, [&](const Config& t) { return space.contains(on_tile(t)); });
  // The split of K where the space has one (the GEMM-based algorithms): a weight gradient's few
  // filters x taps over a long K.
  const Config chosen = tile ? on_tile(*tile) : base;
  return gemm_gpu_split(chosen, gemm, device, [&](const Config& c) { return space.contains(c); });
}

KernelLaunch sum_images_launch(const Conv2dShape& shape, std::int64_t images, std::int64_t plane,
                               const cl::Buffer& partial, const Conv2dOperands& o, bool accumulate, bool last,
                               Workspace& workspace, DType partial_dtype) {
  ProgramSource sum;
  sum.files = {"storage.cl", "conv2d_sum_images.cl"};
  sum.defines = {dtype_define(shape.dtype), {"PARTIAL_DTYPE", std::to_string(static_cast<int>(partial_dtype))}};
  // The running fp32 sum between chunks: dw itself in fp32; for 16-bit storage a workspace plane,
  // so that dw is rounded once, by the last chunk.
  const bool fp32 = shape.dtype == DType::kFp32;
  const bool one_pass = !accumulate && last;
  const cl::Buffer total =
      fp32 ? o.weight : (one_pass ? partial : workspace.get(static_cast<std::size_t>(plane) * 4, kTotalSlot));
  std::vector<KernelArg> args = {static_cast<cl_int>(images),
                                 static_cast<cl_long>(plane),
                                 partial,
                                 total,
                                 static_cast<cl_long>(fp32 ? o.weight_offset : 0),
                                 o.weight,
                                 static_cast<cl_long>(o.weight_offset),
                                 static_cast<cl_int>(accumulate ? 1 : 0),
                                 static_cast<cl_int>(fp32 || last ? 1 : 0)};
  return make_launch(std::move(sum), "conv2d_sum_images", std::move(args), ceil_div(plane, 256) * 256, 1, 1, 256, 1, 1);
}

SearchSpace restrict_values(const SearchSpace& space,
                            const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& values) {
  SearchSpace out;
  for (const SearchSpace::Variant& v : space.variants()) {
    SearchSpace part(v.name);
    for (const Parameter& p : v.parameters) {
      std::vector<std::int64_t> kept = p.values;
      for (const auto& [name, allowed] : values) {
        if (name != p.name) continue;
        kept.clear();
        for (const std::int64_t x : p.values) {
          if (std::find(allowed.begin(), allowed.end(), x) != allowed.end()) kept.push_back(x);
        }
      }
      part.add(p.name, kept, p.meaning);
    }
    for (const Constraint& c : v.constraints) part.constrain(c.description, c.params, c.holds);
    out = SearchSpace::unite({std::move(out), std::move(part)});
  }
  return out;
}

SearchSpace drop_parameters(const SearchSpace& space, const Config& fixed) {
  SearchSpace out;
  for (const SearchSpace::Variant& v : space.variants()) {
    SearchSpace part(v.name);
    for (const Parameter& p : v.parameters) {
      if (!fixed.count(p.name)) part.add(p.name, p.values, p.meaning);
    }
    for (const Constraint& c : v.constraints) {
      std::vector<std::string> reads;
      for (const std::string& name : c.params) {
        if (!fixed.count(name)) reads.push_back(name);
      }
      if (reads.size() == c.params.size()) {
        part.constrain(c.description, c.params, c.holds);
        continue;
      }
      if (reads.empty() && !c.holds(fixed))
        throw Error(fmt::format("conv2d: fixed values violate '{}'", c.description));
      if (reads.empty()) continue;
      part.constrain(c.description, reads, [holds = c.holds, fixed](const Config& config) {
        Config full = config;
        full.insert(fixed.begin(), fixed.end());
        return holds(full);
      });
    }
    out = SearchSpace::unite({std::move(out), std::move(part)});
  }
  return out;
}

DeviceLimits device_limits(const DeviceInfo& device) {
  DeviceLimits l;
  l.max_wg = static_cast<std::int64_t>(device.max_work_group_size);
  const auto dim = [&](std::size_t i) {
    return static_cast<std::int64_t>(device.max_work_item_sizes.size() > i ? device.max_work_item_sizes[i]
                                                                           : device.max_work_group_size);
  };
  l.max_x = dim(0);
  l.max_y = dim(1);
  l.max_z = dim(2);
  l.local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  return l;
}

}  // namespace ocltune::conv2d_detail
