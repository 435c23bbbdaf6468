// softmax and log_softmax along any dimension of a tensor of up to 4 dimensions; fp32, fp16 or
// bf16 storage with fp32 arithmetic. Shape, parameter space, default configuration and launch
// plan (kernels/softmax.cl).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/space.h"
#include "core/storage.h"
#include "harness/cl.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "ops/reduce/reduce_layout.h"

namespace ocltune {

struct SoftmaxShape {
  std::vector<std::int64_t> dims{1};  // row-major, contiguous; extents other than dims[axis] may be 0
  int axis = 0;                       // the dimension normalised over
  bool log = false;                   // log_softmax
  DType dtype = DType::kFp32;         // storage of input and output

  // (outer, length, inner) of the single pass; no pass when the tensor is empty.
  ReduceLayout layout() const { return reduce_layout(dims, {axis}); }
  // "axis=3,dims=8x12x512x512,log=0" (dtype is a key of its own in the database).
  std::string key() const;
  nlohmann::json to_json() const;
  static SoftmaxShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  void validate() const;                                   // throws ocltune::Error
  double flops() const;
  double bytes() const;  // input read once + output written once
};

// Caller-provided contiguous buffers; input and output must not overlap.
struct SoftmaxOperands {
  cl::Buffer input;
  std::int64_t input_offset = 0;
  cl::Buffer output;
  std::int64_t output_offset = 0;
};

SearchSpace softmax_space(const SoftmaxShape& shape, const DeviceInfo& device);
Config softmax_default_config(const SoftmaxShape& shape, const DeviceInfo& device);
// Where the tuner starts on a device class (docs/decisions/0027-device-type-variants-for-softmax-and-layer-norm.md);
// seeds outside the shape's space are skipped by the tuner.
std::vector<Config> softmax_seed_configs(const SoftmaxShape& shape, const DeviceInfo& device);

// One launch of kernels/softmax.cl; an empty tensor gives an empty plan.
LaunchPlan softmax_plan(const SoftmaxShape& shape, const SoftmaxOperands& operands, const Config& config);

}  // namespace ocltune
