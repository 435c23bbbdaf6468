// Normalisation: layer_norm and batch_norm (training statistics), forward and backward, with
// affine gamma/beta; fp32, fp16 or bf16 storage with fp32 arithmetic, fp32 saved statistics.
// Shape, parameter spaces, default configurations and launch plans (kernels/norm_layer.cl,
// kernels/norm_batch.cl).
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

namespace ocltune {

enum class NormKind { kLayer, kLayerBackward, kBatch, kBatchBackward };

const char* norm_kind_name(NormKind kind);  // "layer_norm", "layer_norm_backward", "batch_norm", "batch_norm_backward"
NormKind parse_norm_kind(const std::string& name);  // throws ocltune::Error
inline bool is_batch_norm(NormKind k) { return k == NormKind::kBatch || k == NormKind::kBatchBackward; }
inline bool is_backward(NormKind k) { return k == NormKind::kLayerBackward || k == NormKind::kBatchBackward; }

struct NormShape {
  NormKind kind = NormKind::kLayer;
  // layer_norm: any 1-4 dims, normalised over dims[axis:]; batch_norm: [N, C], [N, C, L] or
  // [N, C, H, W], statistics per channel C over N and the rest. Row-major, contiguous.
  std::vector<std::int64_t> dims{1};
  int axis = 0;           // layer_norm: the first normalised dimension (JSON default: the last)
  float eps = 1e-5f;      // per call, not part of the key
  float momentum = 0.1f;  // batch_norm forward: running statistics move by this; per call
  DType dtype = DType::kFp32;
  // layer_norm forward only: applied to x as it is read (layer_norm(x + residual) without storing
  // the sum; a compiled inference graph's post-norm residual).
  Prologue prologue{};

  // layer_norm: rows x n; batch_norm: batch x channels x plane.
  std::int64_t rows() const;
  std::int64_t n() const;
  std::int64_t batch() const { return dims[0]; }
  std::int64_t channels() const { return dims.size() > 1 ? dims[1] : 1; }
  std::int64_t plane() const;
  std::int64_t elements() const;
  // "axis=1,dims=4096x768,kind=layer_norm" (dtype is a key of its own in the database), with
  // ",prologue=add(t)" after it when there is one.
  std::string key() const;
  nlohmann::json to_json() const;
  static NormShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  void validate() const;                                // throws ocltune::Error
  double flops() const;
  double bytes() const;  // every tensor read or written once, at its storage size
};

// A caller-provided buffer and the element offset of a tensor in it.
struct TensorRef {
  cl::Buffer buffer;
  std::int64_t offset = 0;
};

// The tensors of every kind; a kind uses only its own (the others may stay empty). x, dy, y, dx,
// gamma, beta, dgamma, dbeta are in the storage type; the statistics are fp32.
struct NormOperands {
  TensorRef x, dy, gamma, beta;         // inputs (dy: backward)
  PrologueOperands prologue{};          // layer_norm: the prologue's tensors, like x
  TensorRef mean, rstd;                 // per row (layer) or channel (batch: save_mean, save_invstd);
                                        // written forward, read backward
  TensorRef running_mean, running_var;  // batch_norm forward: updated in place
  TensorRef y, dx, dgamma, dbeta;       // outputs
};

SearchSpace norm_space(const NormShape& shape, const DeviceInfo& device);
// The space without layer_norm's rows-in-registers variant (which norm_space adds to it).
SearchSpace norm_sweeping_space(const NormShape& shape, const DeviceInfo& device);
// VW-vectors each work-item holds in the rows-in-registers layer_norm (its NV).
std::int64_t layer_norm_vectors_per_item(std::int64_t n, std::int64_t wpr, std::int64_t vw);
Config norm_default_config(const NormShape& shape, const DeviceInfo& device);
// Where the tuner starts on a device class; seeds outside the shape's space are skipped.
std::vector<Config> norm_seed_configs(const NormShape& shape, const DeviceInfo& device);

// layer_norm: one kernel; layer_norm_backward: dx with per-work-group dgamma/dbeta partials, then
// their sum. batch_norm(_backward): per-channel statistics, a combine when SPLIT > 1, an apply
// kernel unless FUSED. Partials and fp32 sums live in `workspace` (slots 0 and 1).
LaunchPlan norm_plan(const NormShape& shape, const NormOperands& operands, const Config& config, Workspace& workspace);

}  // namespace ocltune
