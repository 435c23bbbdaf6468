// Normalisation as tunable Problems: random inputs, float64 references, verification of every output.
// Also the family itself (norm_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/norm/norm.h"
#include "ops/problem.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// How a test or tuning instance lays out and fills its buffers beyond the packed default.
struct NormInstance {
  std::int64_t offset = 0;  // elements before every tensor in its buffer
  bool specials = false;    // NaN, +Inf, -Inf among x (forward) or dy (backward)
  // layer_norm: x is shift + uniform noise in [-1, 1], a mean far from 0 next to its spread (a
  // mean summed in fp32 then loses digits that y needs). 0: x off-centre in [-1, 3].
  float shift = 0;
};

class NormProblem : public Problem {
 public:
  explicit NormProblem(NormShape shape, NormInstance instance = {});

  const NormShape& shape() const { return shape_; }
  std::string op() const override { return "norm"; }
  DType dtype() const override { return shape_.dtype; }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  // Without the prologue: a plain layer_norm's rows are the nearest rows of one with a prologue.
  nlohmann::json lookup_json() const override {
    nlohmann::json j = shape_.to_json();
    j.erase("prologue");
    return j;
  }
  SearchSpace space(const DeviceInfo& device) const override { return norm_space(shape_, device); }
  Config default_config(const DeviceInfo& device) const override { return norm_default_config(shape_, device); }
  std::vector<Config> seed_configs(const DeviceInfo& device) const override {
    return norm_seed_configs(shape_, device);
  }
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  std::vector<DeviceBuffer> device_buffers() const override {
    const double tensor = static_cast<double>(shape_.elements()) * static_cast<double>(dtype_bytes(shape_.dtype));
    if (shape_.kind == NormKind::kLayer) {
      std::vector<DeviceBuffer> buffers = {{"x", tensor}, {"y", tensor}};
      for (std::size_t p = 0; p < shape_.prologue.tensors(); ++p) buffers.push_back({"prologue operand", tensor});
      return buffers;
    }
    if (shape_.kind == NormKind::kBatch) return {{"x", tensor}, {"y", tensor}};
    return {{"dy", tensor}, {"x", tensor}, {"dx", tensor}};
  }
  bool memory_bound() const override { return true; }
  std::vector<std::string> kernel_files() const override;
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;

 private:
  NormShape shape_;
  NormInstance instance_;
};

// The norm family: what `--ops norm` tunes (ops/norm/norm_family.cpp).
const OpFamily& norm_family();

// The normalisation correctness table (odd shapes, offsets, NaN/Inf inputs).
struct NormTestCase {
  NormShape shape;
  NormInstance instance;
  bool thorough = false;  // correctness tests run it under every sampled configuration
};
std::vector<NormTestCase> norm_test_cases();

}  // namespace ocltune
