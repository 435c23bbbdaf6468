// Reductions over any set of dimensions of a tensor of up to 4 dimensions: sum, mean, max, min,
// argmax, argmin, L2 norm; fp32, fp16 or bf16 storage with fp32 arithmetic. Shape, parameter
// space, default configuration and launch plan (kernels/reduce.cl).
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
#include "harness/workspace.h"
#include "ops/elementwise/elementwise_prologue.h"
#include "ops/reduce/reduce_layout.h"

namespace ocltune {

enum class ReduceKind { kSum, kMean, kMax, kMin, kArgmax, kArgmin, kNorm2 };

const char* reduce_kind_name(ReduceKind kind);          // "sum", "mean", "max", "min", "argmax", "argmin", "norm2"
ReduceKind parse_reduce_kind(const std::string& name);  // throws ocltune::Error
inline bool is_arg_kind(ReduceKind k) { return k == ReduceKind::kArgmax || k == ReduceKind::kArgmin; }

struct ReduceShape {
  std::vector<std::int64_t> dims{1};  // row-major, contiguous; kept extents may be 0
  std::vector<int> axes;              // reduced dimensions, ascending; argmax/argmin: one run
  bool keepdim = false;               // only the output's dimensions change, not its layout
  ReduceKind kind = ReduceKind::kSum;
  DType dtype = DType::kFp32;  // storage of input and output (argmax/argmin write int64)
  // Applied to every input element as it is read: sum(relu(x)) without storing relu(x). Not with
  // argmax/argmin (their index would depend on the chain's fp32 rounding at near-ties).
  Prologue prologue{};

  ReduceLayout layout() const { return reduce_layout(dims, axes); }
  // "axes=1,dims=4096x768,keepdim=0,kind=sum" (dtype is a key of its own in the database), with
  // ",prologue=add(t)+relu" after it when there is one.
  std::string key() const;
  nlohmann::json to_json() const;
  static ReduceShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  void validate() const;                                  // throws ocltune::Error
  double flops() const;
  double bytes() const;  // input and prologue tensors read once + output written once, at their storage sizes
};

// Caller-provided buffers and element offsets: the input in the storage type, the output in the
// storage type (int64 for argmax/argmin), both contiguous; the prologue's tensors like the input.
struct ReduceOperands {
  cl::Buffer input;
  std::int64_t input_offset = 0;
  cl::Buffer output;
  std::int64_t output_offset = 0;
  PrologueOperands prologue{};
};

// Tunables of kernels/reduce.cl for the main pass of `shape` (rows or columns).
SearchSpace reduce_space(const ReduceShape& shape, const DeviceInfo& device);
// A configuration in reduce_space valid on every OpenCL 1.2 device.
Config reduce_default_config(const ReduceShape& shape, const DeviceInfo& device);

// The largest of 1, 4, 16, 64 within `bound` and the device limit (the work-group size of the
// defaults before docs/decisions/0036; what conv-free families still use for small GPUs).
std::int64_t default_work_group(std::int64_t bound, const DeviceInfo& device);

// Shared rules of the reduce, softmax and norm defaults (docs/decisions/0036):
// the work-group of a default: 1 on a CPU (PoCL loops over a group's work-items; one work-item
// with wide vectors reduces fastest), elsewhere the largest of 1, 4, 16, 64, 256 within `bound`,
// the device limit and local memory at `local_bytes_per_item`.
std::int64_t fill_work_group(std::int64_t bound, const DeviceInfo& device, std::int64_t local_bytes_per_item);
// The vector width of a default over contiguous runs of `length`: 4 on a GPU (16-byte loads); on
// a CPU the widest of 1 .. 16 that leaves at least 4 vectors per run (the tail of a 31-element row
// at VW = 16 cost 4.5x VW = 4).
std::int64_t default_vector_width(std::int64_t length, const DeviceInfo& device);
// Work-groups a launch needs to fill the device: 8 per core on a CPU; on a GPU 2048 work-items per
// compute unit in groups of `wgs`, at least 4 groups per compute unit.
std::int64_t wanted_work_groups(std::int64_t wgs, const DeviceInfo& device);
// Outer rows per work-group (1, 4, 16 or 64): the most that still leave `wanted_groups` groups
// and at most 64K elements per group.
std::int64_t rows_per_group(std::int64_t outer, std::int64_t wanted_groups, std::int64_t elements_per_row);

// The launches of `shape` under `config`: the main pass; with SPLIT > 1 a pass combining the
// fp32 partials; for two runs of reduced dimensions, the pass over the outer run. Partials and
// intermediates live in `workspace` (slots 0-2). An empty output gives an empty plan.
LaunchPlan reduce_plan(const ReduceShape& shape, const ReduceOperands& operands, const Config& config,
                       Workspace& workspace);

}  // namespace ocltune
