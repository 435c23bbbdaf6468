// 2-D convolution (PyTorch semantics, NCHW; fp32, fp16 or bf16 storage with fp32 arithmetic): shape, operands,
// parameter space and launch plan of forward, backward-data and backward-weight, with the algorithm itself as a tuning
// parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/activation.h"
#include "core/config.h"
#include "core/math_mode.h"
#include "core/space.h"
#include "core/storage.h"
#include "harness/cl.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "harness/workspace.h"

namespace ocltune {

// What one call computes. In every direction the same four tensors take part:
//   fwd:        output = act(conv(input, weight) + bias)
//   bwd_data:   input  = gradient of the input, from output (dy) and weight
//   bwd_weight: weight = gradient of the weight, from input (x) and output (dy); bias = its
//               gradient (the sum of dy over n, p, q) when `bias` is set
enum class ConvDirection { kForward, kBackwardData, kBackwardWeight };

// Activation (core/activation.h) is fused after bias in the forward direction; backward directions
// take the gradient with respect to the convolution's own output, so they have no activation.

// The ALGO parameter of a configuration.
enum ConvAlgorithm : std::int64_t {
  kAlgoDirect = 0,            // each work-item computes a register tile of outputs
  kAlgoImplicitGemm = 1,      // tiled GEMM whose loads gather the im2col matrix (not for depthwise)
  kAlgoWinograd = 2,          // F(2x2,3x3) / F(4x4,3x3): transforms + batched GEMM (3x3, stride 1)
  kAlgoGemm1x1 = 3,           // 1x1, stride 1, no padding: the convolution is a plain GEMM
  kAlgoDepthwise = 4,         // groups == C: one filter per channel
  kAlgoImplicitGemmTf32 = 5,  // implicit GEMM on NVIDIA tensor cores (math "tf32", compute capability >= 8.0)
  kAlgoIm2colTf32 = 6,        // packed im2col + wgmma GEMM (math "tf32", forward, groups 1, compute capability 9.x)
  kAlgoIm2col = 7,            // im2col matrices in a workspace + the GEMM family's kernels (not for depthwise)
  kAlgoImplicitGemmMma16 =
      8,  // implicit GEMM on NVIDIA tensor cores for fp16 / bf16 tensors (compute capability >= 8.0)
};
inline constexpr int kAlgorithmCount = 9;
std::string algorithm_name(std::int64_t algo);  // "direct", "implicit_gemm", ...

std::string direction_name(ConvDirection dir);  // "fwd", "bwd_data", "bwd_weight"

struct Conv2dShape {
  ConvDirection dir = ConvDirection::kForward;
  std::int64_t n = 1, c = 1, h = 1, w = 1;  // input N x C x H x W
  std::int64_t k = 1, r = 1, s = 1;         // weight K x C/groups x R x S
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dil_h = 1, dil_w = 1;
  std::int64_t groups = 1;
  bool bias = false;
  Activation act = Activation::kNone;
  // "exact" (fp32 FMA) or "tf32" (matrix units allowed, like PyTorch's allow_tf32). Part of the
  // database key through Problem::math(), not of the shape key.
  MathMode math = MathMode::kExact;
  // Storage type of all four tensors (a database key of its own through Problem::dtype(), like
  // math, and in the JSON only when not fp32, so fp32 rows and shapes files stay as they were).
  // 16-bit tensors are read and written as such; every algorithm computes in fp32 and rounds each
  // result to the storage type once (the GEMM-based ones: see their files).
  DType dtype = DType::kFp32;

  std::int64_t p() const { return (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1; }  // output height
  std::int64_t q() const { return (w + 2 * pad_w - dil_w * (s - 1) - 1) / stride_w + 1; }  // output width
  std::int64_t c_per_group() const { return c / groups; }
  std::int64_t k_per_group() const { return k / groups; }
  std::int64_t input_elements() const { return n * c * h * w; }
  std::int64_t weight_elements() const { return k * c_per_group() * r * s; }
  std::int64_t output_elements() const { return n * k * p() * q(); }
  bool depthwise() const { return groups == c && groups > 1; }

  // "dir=fwd,n=1,c=64,hw=56x56,k=64,rs=3x3,stride=1x1,pad=1x1,dil=1x1,groups=1,bias=1,act=relu".
  std::string key() const;
  nlohmann::json to_json() const;
  static Conv2dShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  void validate() const;                                  // throws ocltune::Error
  // 2 * N*K*P*Q * C/groups*R*S in every direction (the same multiply-adds, re-indexed); the
  // bias gradient's N*K*P*Q additions are included for bwd_weight.
  double flops() const;
  double bytes() const;  // each tensor read or written once, in the storage type
};

// Where the tensors live (see ConvDirection for which are read and written): buffers and element
// offsets, densely packed NCHW / KCRS. `bias` may be a null buffer when the shape has no bias.
struct Conv2dOperands {
  cl::Buffer input, weight, output, bias;
  std::int64_t input_offset = 0, weight_offset = 0, output_offset = 0, bias_offset = 0;
};

// Whether an algorithm can compute this shape (an inapplicable one is absent from the space; the
// tensor-core algorithm is also absent on devices without the capability).
bool algorithm_applies(const Conv2dShape& shape, std::int64_t algo);
std::vector<std::int64_t> applicable_algorithms(const Conv2dShape& shape);

// The union of one variant per applicable algorithm, each with a fixed ALGO and its own tunables.
SearchSpace conv2d_space(const Conv2dShape& shape, const DeviceInfo& device);
// The untuned configuration of one algorithm (valid on every OpenCL 1.2 device).
Config conv2d_default_config(const Conv2dShape& shape, std::int64_t algo);
// One untuned configuration per applicable algorithm; the first is the overall default.
std::vector<Config> conv2d_default_configs(const Conv2dShape& shape);
// The untuned configuration for CPU devices, where the GPU-style kernels run at 1-2% of the FMA
// peak: the 1x1 GEMM or im2col on the CPU GEMM kernel (kernels/gemm_cpu.cl); for a depthwise
// shape, whose GEMMs would have one or two rows, the direct or depthwise kernel with more outputs
// per work-item. The caller checks it against the device's space (Conv2dProblem::default_configs).
std::optional<Config> conv2d_cpu_default_config(const Conv2dShape& shape);
// The untuned configuration for GPUs: a GEMM-based algorithm wherever one applies (the 1x1 GEMM,
// Winograd for 3x3 stride 1, else im2col), the direct kernel for depthwise shapes. On the H200 the
// direct kernel, the first of conv2d_default_configs, ran the models' strided and weight-gradient
// shapes at 0.1-3.6 TFLOP/s untuned, im2col's default at 2.6-15 and Winograd's at 20-25. Their
// GEMMs run on the largest of the GEMM family's GPU tiles that fills `device` (gemm_gpu_tile).
Config conv2d_gpu_default_config(const Conv2dShape& shape, const DeviceInfo& device);

// The kernels that compute `shape` on `operands` with `config`; Winograd's transformed tiles live
// in `workspace` (slots 0-2). Throws ocltune::Error for an inapplicable algorithm or bad operands.
LaunchPlan conv2d_plan(const Conv2dShape& shape, const Conv2dOperands& operands, const Config& config,
                       Workspace& workspace);

}  // namespace ocltune
