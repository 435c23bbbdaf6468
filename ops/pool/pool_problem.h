// Pooling as tunable Problems: random inputs with special values, float64 reference, verification
// of outputs and indices with canaries.
// Also the family itself (pool_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/pool/pool.h"
#include "ops/problem.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// Element offsets of the buffers (tests exercise them; the tuner uses 0).
struct PoolLayout {
  std::int64_t in_offset = 0;
  std::int64_t out_offset = 0;
  std::int64_t indices_offset = 0;
};

class PoolProblem : public Problem {
 public:
  explicit PoolProblem(PoolShape shape, PoolLayout layout = {}) : shape_(shape), layout_(layout) {}

  const PoolShape& shape() const { return shape_; }
  std::string op() const override { return "pool"; }
  DType dtype() const override { return shape_.dtype; }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  SearchSpace space(const DeviceInfo& device) const override { return pool_space(shape_, device); }
  Config default_config(const DeviceInfo& device) const override { return pool_default_config(shape_, device); }
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  std::vector<DeviceBuffer> device_buffers() const override {
    const double size = static_cast<double>(dtype_bytes(shape_.dtype)), planes = static_cast<double>(shape_.planes());
    const double in = planes * static_cast<double>(shape_.h) * static_cast<double>(shape_.w);
    const double out = planes * static_cast<double>(shape_.out_h()) * static_cast<double>(shape_.out_w());
    std::vector<DeviceBuffer> buffers = {{"input", size * in}, {"output", size * out}};
    if (shape_.writes_indices() || (shape_.backward && shape_.kind == PoolKind::kMax)) {
      buffers.push_back({"indices", 8.0 * out});
    }
    return buffers;
  }
  bool memory_bound() const override { return true; }
  std::vector<std::string> kernel_files() const override { return pool_kernel_files(shape_); }
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;

 private:
  PoolShape shape_;
  PoolLayout layout_;
};

// Outputs above this many elements are verified on a deterministic sample (plus both ends and
// every non-finite reference); the rest must be finite. Indices are always compared in full.
inline constexpr std::int64_t kPoolFullCheck = std::int64_t{1} << 22;
// Kernel error allowed, in units of the reference's bound.
inline constexpr double kPoolMargin = 2.0;

// The pool family: what `--ops pool` tunes (ops/pool/pool_family.cpp).
const OpFamily& pool_family();

// The pooling correctness table: every kind and direction at odd shapes and windows.
struct PoolTestCase {
  PoolShape shape;
  PoolLayout layout;
};
std::vector<PoolTestCase> pool_test_cases();

}  // namespace ocltune
