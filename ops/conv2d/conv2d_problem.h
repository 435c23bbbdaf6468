// conv2d as a tunable Problem: random tensors, float64 reference, verification with canaries.
// Also the family itself (conv2d_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>

#include "ops/conv2d/conv2d.h"
#include "ops/problem.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// Element offsets of the tensors inside their buffers for a test instance (the tuner uses zeros):
// the data before an offset must stay untouched.
struct Conv2dLayout {
  std::int64_t input_offset = 0, weight_offset = 0, output_offset = 0, bias_offset = 0;
};

class Conv2dProblem : public Problem {
 public:
  explicit Conv2dProblem(Conv2dShape shape, Conv2dLayout layout = {}) : shape_(shape), layout_(layout) {}

  const Conv2dShape& shape() const { return shape_; }
  std::string op() const override { return "conv2d"; }
  MathMode math() const override { return shape_.math; }
  DType dtype() const override { return shape_.dtype; }
  // The same convolution with every other bias and activation, in this dtype, then (16-bit) in the
  // other 16-bit type and in fp32.
  std::vector<std::unique_ptr<Problem>> equivalent_problems() const override;
  // 16-bit storage runs the GEMM-based algorithms on 16-bit tensor-core inputs (as the GEMM does).
  std::string matrix_inputs() const override {
    return shape_.dtype != DType::kFp32 ? dtype_name(shape_.dtype) : Problem::matrix_inputs();
  }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  SearchSpace space(const DeviceInfo& device) const override { return conv2d_space(shape_, device); }
  Config default_config(const DeviceInfo& device) const override { return default_configs(device).front(); }
  // The tensor-core algorithms, and the GEMM-based ones whose GEMM runs on tensor cores.
  bool uses_matrix_units(const Config& config) const override;
  // One per algorithm in this device's space (the tensor-core one only where the device has it).
  std::vector<Config> default_configs(const DeviceInfo& device) const override;
  // On a GPU, the GEMM family's known-good tiles for the device class in the GPU default's
  // GEMM-based algorithm (im2col, the 1x1 GEMM, Winograd), where they fit its space.
  std::vector<Config> seed_configs(const DeviceInfo& device) const override;
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  std::vector<DeviceBuffer> device_buffers() const override {
    const double bytes = static_cast<double>(dtype_bytes(shape_.dtype));
    return {{"input", bytes * static_cast<double>(shape_.input_elements())},
            {"weight", bytes * static_cast<double>(shape_.weight_elements())},
            {"output", bytes * static_cast<double>(shape_.output_elements())}};
  }
  std::vector<std::string> kernel_files() const override;
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;
  // kConv2dCheckMacs of reference instead of kConv2dFullCheckMacs.
  std::unique_ptr<Evaluation> instantiate_for_check(Session& session) const override;

 private:
  Conv2dShape shape_;
  Conv2dLayout layout_;
};

// Problems whose full reference costs more multiply-adds than this are verified on a sample of
// outputs that takes every value of every index (the rest must be finite).
inline constexpr double kConv2dFullCheckMacs = 1 << 26;
// The same for the runtime's first-dispatch checks: every value of every index still, and fewer
// random elements. On an H100 resnet50's 73 checks took 0.72 s each, most of it the float64
// reference of up to 2^26 multiply-adds on the host.
inline constexpr double kConv2dCheckMacs = 1 << 22;

// The conv2d correctness table (tests and the "test" preset): every direction of each layer.
struct Conv2dTestCase {
  Conv2dShape shape;
  Conv2dLayout layout;
};
std::vector<Conv2dTestCase> conv2d_test_cases();

// The conv2d family: what `--ops conv2d` tunes (ops/conv2d/conv2d_family.cpp).
const OpFamily& conv2d_family();

}  // namespace ocltune
