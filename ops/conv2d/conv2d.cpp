// 2-D convolution: shape (key, JSON, FLOPs), which algorithms apply, the union search space, and
// dispatch of a configuration to its algorithm's launch plan.
#include "ops/conv2d/conv2d.h"

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "harness/error.h"
#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune {
namespace {

using namespace conv2d_detail;

constexpr const char* kDirectionNames[] = {"fwd", "bwd_data", "bwd_weight"};
constexpr const char* kAlgorithmNames[] = {"direct",           "implicit_gemm", "winograd",
                                           "gemm1x1",          "depthwise",     "implicit_gemm_tf32",
                                           "im2col_gemm_tf32", "im2col_gemm",   "implicit_gemm_mma16"};

template <typename Enum, std::size_t N>
Enum parse_name(const nlohmann::json& j, const char* field, const char* const (&names)[N], const char* fallback) {
  const std::string value = string_field(j, field, fallback);
  for (std::size_t i = 0; i < N; ++i) {
    if (value == names[i]) return static_cast<Enum>(i);
  }
  std::string known;
  for (const char* name : names) known += (known.empty() ? "" : ", ") + std::string(name);
  throw Error(fmt::format("shape field '{}' = '{}' is not one of {}", field, value.substr(0, 32), known));
}

// A per-axis field: "<name>_h" / "<name>_w", each defaulting to "<name>", defaulting to `fallback`.
std::pair<std::int64_t, std::int64_t> axis_pair(const nlohmann::json& j, const std::string& name, std::int64_t lo,
                                                std::int64_t hi, std::int64_t fallback) {
  const std::int64_t both = int_field(j, name.c_str(), lo, hi, fallback);
  return {int_field(j, (name + "_h").c_str(), lo, hi, both), int_field(j, (name + "_w").c_str(), lo, hi, both)};
}

}  // namespace

std::string algorithm_name(std::int64_t algo) {
  return algo >= 0 && algo < kAlgorithmCount ? kAlgorithmNames[algo] : fmt::format("algo{}", algo);
}
std::string direction_name(ConvDirection dir) { return kDirectionNames[static_cast<int>(dir)]; }

std::string Conv2dShape::key() const {
  return fmt::format(
      "dir={},n={},c={},hw={}x{},k={},rs={}x{},stride={}x{},pad={}x{},dil={}x{},groups={},bias={},act={}",
      direction_name(dir), n, c, h, w, k, r, s, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, bias ? 1 : 0,
      activation_name(act));
}

nlohmann::json Conv2dShape::to_json() const {
  nlohmann::json j = {{"op", "conv2d"},
                      {"dir", direction_name(dir)},
                      {"n", n},
                      {"c", c},
                      {"h", h},
                      {"w", w},
                      {"k", k},
                      {"r", r},
                      {"s", s},
                      {"stride_h", stride_h},
                      {"stride_w", stride_w},
                      {"pad_h", pad_h},
                      {"pad_w", pad_w},
                      {"dil_h", dil_h},
                      {"dil_w", dil_w},
                      {"groups", groups},
                      {"bias", bias},
                      {"act", activation_name(act)}};
  if (math != MathMode::kExact) j["math"] = math_name(math);
  if (dtype != DType::kFp32) j["dtype"] = dtype_name(dtype);
  return j;
}

Conv2dShape Conv2dShape::from_json(const nlohmann::json& j) {
  check_known_fields(
      j, {"dir", "n",     "c",     "h",   "w",     "k",     "r",      "s",    "stride", "stride_h", "stride_w",
          "pad", "pad_h", "pad_w", "dil", "dil_h", "dil_w", "groups", "bias", "act",    "math",     "dtype"});
  Conv2dShape shape;
  shape.dir = parse_name<ConvDirection>(j, "dir", kDirectionNames, "fwd");
  shape.n = int_field(j, "n", 1, 65535, 1);
  shape.c = int_field(j, "c", 1, 1 << 20);
  shape.h = int_field(j, "h", 1, 1 << 16);
  shape.w = int_field(j, "w", 1, 1 << 16);
  shape.k = int_field(j, "k", 1, 1 << 20);
  shape.r = int_field(j, "r", 1, 64);
  shape.s = int_field(j, "s", 1, 64);
  std::tie(shape.stride_h, shape.stride_w) = axis_pair(j, "stride", 1, 64, 1);
  std::tie(shape.pad_h, shape.pad_w) = axis_pair(j, "pad", 0, 64, 0);
  std::tie(shape.dil_h, shape.dil_w) = axis_pair(j, "dil", 1, 64, 1);
  shape.groups = int_field(j, "groups", 1, 1 << 20, 1);
  shape.bias = bool_field(j, "bias", false);
  shape.act = parse_activation(string_field(j, "act", "none"));
  shape.math = parse_math(string_field(j, "math", "exact"));
  shape.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  shape.validate();
  return shape;
}

void Conv2dShape::validate() const {
  if (dtype != DType::kFp32 && dtype != DType::kFp16 && dtype != DType::kBf16) {
    throw Error(fmt::format("conv2d: unknown dtype code {} (0 fp32, 1 fp16, 2 bf16)", static_cast<int>(dtype)));
  }
  if (c % groups != 0 || k % groups != 0)
    throw Error(fmt::format("conv2d: groups {} must divide c {} and k {}", groups, c, k));
  if (h + 2 * pad_h < dil_h * (r - 1) + 1 || w + 2 * pad_w < dil_w * (s - 1) + 1) {
    throw Error("conv2d: the dilated filter is larger than the padded input");
  }
  if (act != Activation::kNone && dir != ConvDirection::kForward) {
    throw Error("conv2d: an activation is fused only in the forward direction");
  }
  // Kernels index within one tensor with 32-bit ints.
  for (const std::int64_t elements : {input_elements(), weight_elements(), output_elements()}) {
    if (elements > kMaxDimension) throw Error("conv2d: a tensor has more than 2^31 elements");
  }
}

double Conv2dShape::flops() const {
  const double macs = static_cast<double>(output_elements()) * static_cast<double>(c_per_group() * r * s);
  const double bias_grad = dir == ConvDirection::kBackwardWeight && bias ? static_cast<double>(output_elements()) : 0;
  return 2.0 * macs + bias_grad;
}

double Conv2dShape::bytes() const {
  const double bias_elements = bias ? static_cast<double>(k) : 0;
  return static_cast<double>(dtype_bytes(dtype)) *
         (static_cast<double>(input_elements() + weight_elements() + output_elements()) + bias_elements);
}

bool algorithm_applies(const Conv2dShape& s, std::int64_t algo) {
  switch (algo) {
    case kAlgoDirect: return true;
    case kAlgoImplicitGemm:
      // A depthwise group is a GEMM with K/groups (1 or 2) rows: no tiling applies, and its
      // slow configurations would only use up a search's budget.
      return !s.depthwise();
    case kAlgoWinograd:
      return s.dir != ConvDirection::kBackwardWeight && s.r == 3 && s.s == 3 && s.stride_h == 1 && s.stride_w == 1 &&
             s.dil_h == 1 && s.dil_w == 1 && s.groups == 1;
    case kAlgoGemm1x1:
      return s.r == 1 && s.s == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0 &&
             s.groups == 1;
    case kAlgoDepthwise: return s.depthwise();
    // The TF32 kernels read and write fp32 tensors only: a 16-bit shape's space never offers them.
    case kAlgoImplicitGemmTf32: return !s.depthwise() && s.math == MathMode::kTf32 && s.dtype == DType::kFp32;
    case kAlgoIm2colTf32:
      return s.dir == ConvDirection::kForward && s.groups == 1 && s.math == MathMode::kTf32 && s.dtype == DType::kFp32;
    case kAlgoIm2col:
      // The GEMMs index one image's im2col matrix with 32-bit ints.
      return !s.depthwise() && s.c * s.r * s.s * s.p() * s.q() <= kMaxDimension;
    // Tensor cores on the 16-bit values as they are stored, in either math mode (TF32 concerns fp32).
    case kAlgoImplicitGemmMma16: return !s.depthwise() && s.dtype != DType::kFp32;
    default: return false;
  }
}

std::vector<std::int64_t> applicable_algorithms(const Conv2dShape& shape) {
  std::vector<std::int64_t> algos;
  for (std::int64_t a = 0; a < kAlgorithmCount; ++a) {
    if (algorithm_applies(shape, a)) algos.push_back(a);
  }
  return algos;
}

SearchSpace conv2d_space(const Conv2dShape& shape, const DeviceInfo& device) {
  std::vector<SearchSpace> parts;
  for (const std::int64_t algo : applicable_algorithms(shape)) {
    switch (algo) {
      case kAlgoDirect: parts.push_back(direct_space(shape, device)); break;
      case kAlgoImplicitGemm: parts.push_back(igemm_space(shape, device)); break;
      case kAlgoWinograd: parts.push_back(winograd_space(shape, device)); break;
      case kAlgoGemm1x1: parts.push_back(gemm1x1_space(shape, device)); break;
      case kAlgoDepthwise: parts.push_back(depthwise_space(shape, device)); break;
      case kAlgoImplicitGemmTf32:
        parts.push_back(igemm_tf32_space(shape, device));
        break;                                                                         // empty without the capability
      case kAlgoIm2colTf32: parts.push_back(im2col_tf32_space(shape, device)); break;  // likewise
      case kAlgoIm2col: parts.push_back(im2col_space(shape, device)); break;
      case kAlgoImplicitGemmMma16: parts.push_back(igemm_mma16_space(shape, device)); break;  // likewise
      default: break;
    }
  }
  return SearchSpace::unite(std::move(parts));
}

Config conv2d_default_config(const Conv2dShape& shape, std::int64_t algo) {
  switch (algo) {
    case kAlgoDirect: return direct_default(shape);
    case kAlgoImplicitGemm: return igemm_default(shape);
    case kAlgoWinograd: return winograd_default(shape);
    case kAlgoGemm1x1: return gemm1x1_default(shape);
    case kAlgoDepthwise: return depthwise_default(shape);
    case kAlgoImplicitGemmTf32: return igemm_tf32_default(shape);
    case kAlgoIm2colTf32: return im2col_tf32_default(shape);
    case kAlgoIm2col: return im2col_default(shape);
    case kAlgoImplicitGemmMma16: return igemm_mma16_default(shape);
    default: throw Error(fmt::format("conv2d: unknown algorithm {}", algo));
  }
}

std::vector<Config> conv2d_default_configs(const Conv2dShape& shape) {
  std::vector<Config> configs;
  for (const std::int64_t algo : applicable_algorithms(shape)) configs.push_back(conv2d_default_config(shape, algo));
  return configs;
}

Config conv2d_gpu_default_config(const Conv2dShape& shape, const DeviceInfo& device) {
  // 16-bit tensors on tensor cores where the device has them, as cuDNN runs them: the other
  // algorithms compute in fp32 on the FMA units, at an eighth of the rate or less.
  if (algorithm_applies(shape, kAlgoImplicitGemmMma16)) {
    const Config mma = igemm_mma16_default(shape);
    if (igemm_mma16_space(shape, device).contains(mma)) return mma;
  }
  if (algorithm_applies(shape, kAlgoGemm1x1)) return gemm1x1_default(shape, &device);
  if (algorithm_applies(shape, kAlgoWinograd)) return winograd_default(shape, &device);
  if (algorithm_applies(shape, kAlgoIm2col)) return im2col_default(shape, &device);
  return direct_default(shape);
}

std::optional<Config> conv2d_cpu_default_config(const Conv2dShape& shape) {
  if (algorithm_applies(shape, kAlgoGemm1x1)) return gemm1x1_cpu_default(shape);
  if (algorithm_applies(shape, kAlgoIm2col)) return im2col_cpu_default(shape);
  if (!shape.depthwise()) return std::nullopt;
  // Depthwise: a CPU runs a work-group as a loop on one core, so fewer work-items with four
  // outputs each along a row. The best of 42 configurations each on PoCL (n=2, c=64, 14x14, 3x3):
  // forward 449 -> 282 us, input gradient 724 -> 262 us, weight gradient 1559 -> 355 us.
  switch (shape.dir) {
    case ConvDirection::kForward: {
      Config c = direct_default(shape);
      c["QPT"] = 4;
      c["WGQ"] = 4;
      return c;
    }
    case ConvDirection::kBackwardData: {
      Config c = direct_default(shape);
      c["WPT"] = 4;
      c["HPT"] = 2;
      c["WGW"] = 4;
      c["WGH"] = 1;
      return c;
    }
    default: {
      std::int64_t taps = 1;  // the most filter taps per work-group that the space offers
      for (const std::int64_t t : {2, 3, 4, 8, 9}) {
        if (t <= shape.r * shape.s) taps = t;
      }
      return Config{{"ALGO", kAlgoDepthwise}, {"DW_WG", 16}, {"TAPS", taps}};
    }
  }
}

LaunchPlan conv2d_plan(const Conv2dShape& shape, const Conv2dOperands& operands, const Config& config,
                       Workspace& workspace) {
  shape.validate();
  const std::int64_t algo = at(config, "ALGO");
  if (!algorithm_applies(shape, algo)) {
    throw Error(fmt::format("conv2d: algorithm {} does not apply to {}", algorithm_name(algo), shape.key()));
  }
  if (operands.input_offset < 0 || operands.weight_offset < 0 || operands.output_offset < 0 ||
      operands.bias_offset < 0) {
    throw Error("conv2d: negative buffer offset");
  }
  if (shape.bias && !operands.bias()) throw Error("conv2d: the shape has a bias but no bias buffer was given");
  LaunchPlan plan;
  switch (algo) {
    case kAlgoDirect: direct_plan(shape, operands, config, workspace, plan); break;
    case kAlgoImplicitGemm: igemm_plan(shape, operands, config, plan); break;
    case kAlgoWinograd: winograd_plan(shape, operands, config, workspace, plan); break;
    case kAlgoGemm1x1: gemm1x1_plan(shape, operands, config, workspace, plan); break;
    case kAlgoDepthwise: depthwise_plan(shape, operands, config, plan); break;
    case kAlgoImplicitGemmTf32: igemm_tf32_plan(shape, operands, config, workspace, plan); break;
    case kAlgoIm2colTf32: im2col_tf32_plan(shape, operands, config, workspace, plan); break;
    case kAlgoIm2col: im2col_plan(shape, operands, config, workspace, plan); break;
    case kAlgoImplicitGemmMma16: igemm_mma16_plan(shape, operands, config, workspace, plan); break;
    default: break;
  }
  return plan;
}

}  // namespace ocltune
