// The interface between operator families and the tuner: one problem (an op at one shape) and its
// evaluation on a device (buffers with random data, a float64 reference, launch plans per config).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/math_mode.h"
#include "core/space.h"
#include "core/storage.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "harness/verify.h"

namespace ocltune {

class Session;

// A problem instantiated on a device: inputs filled with random data, outputs with known contents.
class Evaluation {
 public:
  virtual ~Evaluation() = default;
  // The kernels that compute the op for `config` on this evaluation's buffers.
  virtual LaunchPlan plan(const Config& config) = 0;
  // Restores every output buffer to its contents before any launch.
  virtual void reset() = 0;
  // Reads the outputs back and checks them against the float64 reference and the canaries.
  virtual VerifyResult verify() = 0;
};

// One operator at one shape.
class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::string op() const = 0;                   // family name, e.g. "gemm"
  virtual DType dtype() const { return DType::kFp32; }  // storage type; a database key (dtype_name)
  // Arithmetic mode; part of the database key (math_name).
  virtual MathMode math() const { return MathMode::kExact; }
  // The input type matrix units may use for the problem ("tf32", "fp16", "bf16"; "" where it runs
  // on the FMA units): what its compute-bound results are placed against in benchmarks.
  virtual std::string matrix_inputs() const { return math() == MathMode::kTf32 ? "tf32" : ""; }
  // Whether `config` runs on matrix units (tensor cores): what the runtime tries first for a call
  // that allows TF32 on a device that has them (docs/decisions/0055).
  virtual bool uses_matrix_units(const Config& config) const {
    (void)config;
    return false;
  }
  // Problems of other shapes whose every configuration runs this one unchanged, best first: their
  // rows may serve this problem where it has none of its own (the runtime checks such a borrowed
  // configuration at first dispatch). conv2d gives its other epilogues (bias, activation: the same
  // kernels with another output pass, so the rows of eager's plain convolution serve torch.compile's
  // fused ones) and, for 16-bit storage, the fp32 problems (the storage type is a define), so that
  // an fp32 tuning serves autocast until 16-bit rows exist. Empty where a problem has variants of
  // its own that another's row would pass over (the GEMM's packed tensor-core ones for 16 bits; the
  // GEMM's epilogue is not part of its shape key, so its rows serve every epilogue directly).
  virtual std::vector<std::unique_ptr<Problem>> equivalent_problems() const { return {}; }
  virtual std::string shape_key() const = 0;      // canonical text of the shape: the database key
  virtual nlohmann::json shape_json() const = 0;  // accepted back by the family's from_json
  // The shape as the lookup compares shapes (nearest rows, tuned neighbourhoods): shape_json() without
  // the fields that are per call and not part of the key (the GEMM's epilogue), so that rows recorded
  // with and without them are neighbours of each other.
  virtual nlohmann::json lookup_json() const { return shape_json(); }
  virtual SearchSpace space(const DeviceInfo& device) const = 0;
  // The untuned configuration: valid on every device, the baseline the tuner reports against.
  virtual Config default_config(const DeviceInfo& device) const = 0;
  // Every untuned baseline measured before the search (role "default"): the default
  // configuration, plus e.g. one per algorithm for ops whose space is a union of algorithms.
  virtual std::vector<Config> default_configs(const DeviceInfo& device) const { return {default_config(device)}; }
  // Known-good starting points for the device's class (measured on such devices, as CLBlast and
  // MIOpen ship them); the tuner measures those inside the space first, as search evaluations,
  // so a small budget starts from a good region. Empty by default.
  virtual std::vector<Config> seed_configs(const DeviceInfo& device) const {
    (void)device;
    return {};
  }
  virtual double flops() const = 0;  // floating-point operations of one execution
  virtual double bytes() const = 0;  // compulsory DRAM traffic of one execution
  // The device buffers one evaluation allocates, in bytes (the tensors; small scratch may be left
  // out): a shape with a buffer larger than the device's largest allocation, or buffers larger
  // than its global memory together, is refused before a run starts (ops/device_fit.h). Empty:
  // not declared (the family's own limits apply when it allocates).
  struct DeviceBuffer {
    std::string name;
    double bytes = 0;
  };
  virtual std::vector<DeviceBuffer> device_buffers() const { return {}; }
  // Throughput is reported in GB/s rather than GFLOP/s.
  virtual bool memory_bound() const { return false; }
  // kernels/ files whose text decides the result; their hash keys resumable measurements.
  virtual std::vector<std::string> kernel_files() const = 0;
  virtual std::unique_ptr<Evaluation> instantiate(Session& session) const = 0;
  // The instance of the runtime's first-dispatch check of a borrowed configuration: the same checks
  // on fewer reference elements where a family's full sample is costly (conv2d), since each check
  // stands in the way of a model's first step. By default instantiate()'s.
  virtual std::unique_ptr<Evaluation> instantiate_for_check(Session& session) const { return instantiate(session); }
};

using ProblemList = std::vector<std::unique_ptr<Problem>>;

}  // namespace ocltune
