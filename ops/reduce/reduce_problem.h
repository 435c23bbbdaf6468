// Reductions as tunable Problems: random inputs, a float64 reference, verification with canaries.
// Also the family itself (reduce_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/problem.h"
#include "ops/reduce/reduce.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// How a test or tuning instance lays out and fills its buffers beyond the packed default.
struct ReduceInstance {
  std::int64_t input_offset = 0, output_offset = 0;  // elements before the tensor in its buffer
  bool specials = false;                             // NaN, +Inf, -Inf among the inputs
};

class ReduceProblem : public Problem {
 public:
  explicit ReduceProblem(ReduceShape shape, ReduceInstance instance = {});

  const ReduceShape& shape() const { return shape_; }
  std::string op() const override { return "reduce"; }
  DType dtype() const override { return shape_.dtype; }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  // Without the prologue: a plain reduction's rows are the nearest rows of the same reduction with
  // a prologue (the same tunables; the chain adds arithmetic to a memory-bound kernel), and back.
  nlohmann::json lookup_json() const override {
    nlohmann::json j = shape_.to_json();
    j.erase("prologue");
    return j;
  }
  SearchSpace space(const DeviceInfo& device) const override { return reduce_space(shape_, device); }
  Config default_config(const DeviceInfo& device) const override { return reduce_default_config(shape_, device); }
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  std::vector<DeviceBuffer> device_buffers() const override {
    const ReduceLayout l = shape_.layout();
    const double size = static_cast<double>(dtype_bytes(shape_.dtype));
    std::vector<DeviceBuffer> buffers = {
        {"input", size * static_cast<double>(l.elements)},
        {"output", (is_arg_kind(shape_.kind) ? 8.0 : size) * static_cast<double>(l.outputs)}};
    for (std::size_t t = 0; t < shape_.prologue.tensors(); ++t) {
      buffers.push_back({"prologue operand", size * static_cast<double>(l.elements)});
    }
    return buffers;
  }
  bool memory_bound() const override { return true; }
  std::vector<std::string> kernel_files() const override {
    return {"storage.cl", "reduce_vec.cl", "elementwise_ops.cl", "prologue.cl", "reduce.cl"};
  }
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;

 private:
  ReduceShape shape_;
  ReduceInstance instance_;
};

// Outputs beyond this many are verified on an evenly spaced sample (every other one must be finite).
inline constexpr std::int64_t kReduceFullCheckOutputs = std::int64_t{1} << 22;

// The reduce family: what `--ops reduce` tunes (ops/reduce/reduce_family.cpp).
const OpFamily& reduce_family();

// The reduction correctness table (odd shapes, offsets, NaN/Inf inputs).
struct ReduceTestCase {
  ReduceShape shape;
  ReduceInstance instance;
  bool thorough = false;  // correctness tests run it under every sampled configuration
};
std::vector<ReduceTestCase> reduce_test_cases();

}  // namespace ocltune
