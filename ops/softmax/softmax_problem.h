// softmax / log_softmax as tunable Problems: random inputs, a float64 reference, verification.
// Also the family itself (softmax_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/problem.h"
#include "ops/softmax/softmax.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// How a test or tuning instance lays out and fills its buffers beyond the packed default.
struct SoftmaxInstance {
  std::int64_t input_offset = 0, output_offset = 0;  // elements before the tensor in its buffer
  bool specials = false;                             // NaN, +Inf, -Inf among the inputs
  // Inputs are uniform in [-spread, spread]. 30 takes exp() over x - max down to -60 (n = -87 in
  // the polynomial exp's 2^n); beyond about 40, fp32 outputs would reach the subnormal range,
  // where a relative tolerance cannot hold.
  float spread = 4.0f;
};

class SoftmaxProblem : public Problem {
 public:
  explicit SoftmaxProblem(SoftmaxShape shape, SoftmaxInstance instance = {});

  const SoftmaxShape& shape() const { return shape_; }
  std::string op() const override { return "softmax"; }
  DType dtype() const override { return shape_.dtype; }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  SearchSpace space(const DeviceInfo& device) const override { return softmax_space(shape_, device); }
  Config default_config(const DeviceInfo& device) const override { return softmax_default_config(shape_, device); }
  std::vector<Config> seed_configs(const DeviceInfo& device) const override {
    return softmax_seed_configs(shape_, device);
  }
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  std::vector<DeviceBuffer> device_buffers() const override {
    const double tensor =
        static_cast<double>(shape_.layout().elements) * static_cast<double>(dtype_bytes(shape_.dtype));
    return {{"input", tensor}, {"output", tensor}};
  }
  bool memory_bound() const override { return true; }
  std::vector<std::string> kernel_files() const override { return {"storage.cl", "reduce_vec.cl", "softmax.cl"}; }
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;

 private:
  SoftmaxShape shape_;
  SoftmaxInstance instance_;
};

// Tensors beyond this many elements are verified on evenly spaced rows (every other output must
// be finite); below it every output is compared.
inline constexpr std::int64_t kSoftmaxFullCheckElements = std::int64_t{1} << 22;

// The softmax family: what `--ops softmax` tunes (ops/softmax/softmax_family.cpp).
const OpFamily& softmax_family();

// The softmax correctness table (odd shapes, offsets, NaN/Inf inputs).
struct SoftmaxTestCase {
  SoftmaxShape shape;
  SoftmaxInstance instance;
  bool thorough = false;  // correctness tests run it under every sampled configuration
};
std::vector<SoftmaxTestCase> softmax_test_cases();

}  // namespace ocltune
