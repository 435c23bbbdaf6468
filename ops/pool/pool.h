// Pooling over NCHW: max_pool2d (with PyTorch's flat h*W+w indices) and avg_pool2d with any window,
// stride and padding, ceil_mode and count_include_pad, and adaptive average pooling to 1x1; forward
// and backward. Shape description, parameter spaces, launch plans and byte model.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/space.h"
#include "core/storage.h"
#include "harness/cl.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "ops/elementwise/elementwise.h"

namespace ocltune {

enum class PoolKind { kMax, kAvg, kAdaptiveAvg };

const char* pool_kind_name(PoolKind kind);  // "max", "avg", "adaptive_avg"

struct PoolShape {
  PoolKind kind = PoolKind::kMax;
  bool backward = false;
  std::int64_t n = 1, c = 1, h = 1, w = 1;  // input (forward) or gradient of the input (backward)
  // Window, stride and padding (max and avg; adaptive pooling to 1x1 has none).
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg
  bool indices = true;            // max forward: also write the indices (return_indices)
  DType dtype = DType::kFp32;

  // PyTorch's output size: floor or ceil of (in + 2 pad - k) / s + 1, minus the last window when it
  // would start in the right padding (ceil_mode); 1 for adaptive pooling.
  std::int64_t out_h() const;
  std::int64_t out_w() const;
  std::int64_t planes() const { return n * c; }
  bool writes_indices() const { return kind == PoolKind::kMax && !backward && indices; }
  bool reads_indices() const { return kind == PoolKind::kMax && backward; }

  // Throws ocltune::Error as PyTorch would refuse the call: zero window or stride, padding above
  // half the window, an empty output plane; or sizes beyond the kernels' 32-bit indices.
  void validate() const;
  // "max_fwd,n=32,c=64,h=112,w=112,k=3x3,s=2x2,p=1x1,ceil=0,idx=1": what the database keys by.
  std::string key() const;
  nlohmann::json to_json() const;
  static PoolShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  double flops() const;
  double bytes() const;  // touched input rows/columns, outputs and indices (8 bytes each)

  // Adaptive average backward is an elementwise op: the gradient of each plane, broadcast over the
  // plane and divided by H*W.
  ElementwiseShape adaptive_backward_as_elementwise() const;
};

// Where the tensors live, contiguous NCHW: `in` is x (forward) or the output gradient (backward),
// `out` is y or the input gradient; `indices` (int64) is written by max forward and read by max
// backward. Offsets count elements of each buffer's type.
struct PoolOperands {
  cl::Buffer in;
  std::int64_t in_offset = 0;
  cl::Buffer out;
  std::int64_t out_offset = 0;
  cl::Buffer indices;
  std::int64_t indices_offset = 0;
};

// Tunables of the kernel the shape uses (kernels/pool.cl; kernels/elementwise.cl for adaptive
// average backward).
SearchSpace pool_space(const PoolShape& shape, const DeviceInfo& device);
// Valid on every OpenCL 1.2 device (64 work-items, one output per work-item).
Config pool_default_config(const PoolShape& shape);
// The built-in of `shape` on `device` (docs/decisions/0036): a point of pool_space.
Config pool_default_config(const PoolShape& shape, const DeviceInfo& device);
std::vector<std::string> pool_kernel_files(const PoolShape& shape);

// One kernel launch; none for an empty tensor. Throws ocltune::Error on inconsistent operands.
LaunchPlan pool_plan(const PoolShape& shape, const PoolOperands& operands, const Config& config);

}  // namespace ocltune
