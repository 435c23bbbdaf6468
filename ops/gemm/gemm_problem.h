// GEMM as a tunable Problem: random operands, float64 reference, verification with canaries.
// Also the family itself (gemm_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/gemm/gemm.h"
#include "ops/problem.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// Memory layout of a test or tuning instance beyond the packed default: extra leading-dimension
// padding, element offsets, extra batch-stride padding. The tuner uses the packed layout.
struct GemmLayout {
  std::int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;
  std::int64_t a_offset = 0, b_offset = 0, c_offset = 0;
  std::int64_t stride_pad = 0;
  std::int64_t bias_offset = 3;  // elements before the bias (shapes with one)
};

class GemmProblem : public Problem {
 public:
  explicit GemmProblem(GemmShape shape, GemmLayout layout = {}) : shape_(shape), layout_(layout) {}

  const GemmShape& shape() const { return shape_; }
  std::string op() const override { return "gemm"; }
  MathMode math() const override { return shape_.math; }
  DType dtype() const override { return shape_.dtype; }
  // 16-bit storage runs on 16-bit tensor-core inputs in either math mode.
  std::string matrix_inputs() const override {
    return shape_.dtype != DType::kFp32 ? dtype_name(shape_.dtype) : Problem::matrix_inputs();
  }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  nlohmann::json lookup_json() const override {
    nlohmann::json j = shape_.to_json();
    j.erase("bias");
    j.erase("act");
    return j;
  }
  SearchSpace space(const DeviceInfo& device) const override { return gemm_space(shape_, device); }
  // The built-in configuration: the first of the CPU variant's, the packed wgmma variant's and the
  // packed mma.sync variant's defaults that is a point of this shape's space (the device offers
  // the variant and the tile fits the shape; then the same two with 64 x 64 tiles), else gemm.cl's:
  // on a GPU its largest tile that fills the device (gemm_gpu_tile), else gemm_default_config(shape).
  Config default_config(const DeviceInfo& device) const override;
  bool uses_matrix_units(const Config& config) const override {
    return is_mma_config(config) || is_wgmma_config(config) || is_mma_packed_config(config) ||
           is_wgmma_packed_config(config);
  }
  // default_config(device) first (the baseline the tuner reports against), then every other
  // variant's default that is a point of the space: gemm.cl's small tile (unless the first is a GPU
  // tile), the tensor-core and the CPU one.
  std::vector<Config> default_configs(const DeviceInfo& device) const override;
  std::vector<Config> seed_configs(const DeviceInfo& device) const override;  // ops/gemm/gemm_seeds.cpp
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  std::vector<DeviceBuffer> device_buffers() const override;
  std::vector<std::string> kernel_files() const override;
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;

 private:
  GemmShape shape_;
  GemmLayout layout_;
};

// Problems with M*N*K*batch above this are verified on a sample of outputs that covers every row
// and every column (the rest must be finite); below it every output is compared.
inline constexpr double kGemmFullCheckMacs = 1 << 26;

// The GEMM family: what `--ops gemm` tunes (ops/gemm/gemm_family.cpp).
const OpFamily& gemm_family();

// The GEMM correctness table (shared by tests, the "test" preset and benchmarks).
struct GemmTestCase {
  GemmShape shape;
  GemmLayout layout;
};
std::vector<GemmTestCase> gemm_test_cases();

}  // namespace ocltune
