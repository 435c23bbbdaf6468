// Elementwise ops as tunable Problems: random operands with special values, float64 reference with
// a first-order error bound, verification with canaries.
// Also the family itself (elementwise_family(), which the registry lists) and its correctness table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/elementwise/elementwise.h"
#include "ops/problem.h"

namespace ocltune {

class OpFamily;  // ops/family.h

// Element offsets of the buffers beyond the packed default (tests exercise them; the tuner uses 0).
struct ElementwiseLayout {
  std::int64_t out_offset = 0;
  std::int64_t input_offset = 0;  // every input buffer starts this many elements in
};

class ElementwiseProblem : public Problem {
 public:
  explicit ElementwiseProblem(ElementwiseShape shape, ElementwiseLayout layout = {});

  const ElementwiseShape& shape() const { return shape_; }
  std::string op() const override { return "elementwise"; }
  DType dtype() const override { return shape_.dtype; }
  std::string shape_key() const override { return shape_.key(); }
  nlohmann::json shape_json() const override { return shape_.to_json(); }
  SearchSpace space(const DeviceInfo& device) const override { return elementwise_space(shape_, device); }
  Config default_config(const DeviceInfo& device) const override { return elementwise_default_config(shape_, device); }
  double flops() const override { return shape_.flops(); }
  double bytes() const override { return shape_.bytes(); }
  // The output and each tensor operand, at the extent its strides reach.
  std::vector<DeviceBuffer> device_buffers() const override {
    const double item = static_cast<double>(dtype_bytes(shape_.dtype));
    std::vector<DeviceBuffer> buffers = {{"output", static_cast<double>(shape_.elements()) * item}};
    const std::vector<const TensorOperand*> tensors = shape_.tensors();
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      buffers.push_back({t == 0 ? std::string("x") : "operand " + std::to_string(t),
                         static_cast<double>(tensors[t]->extent()) * item});
    }
    return buffers;
  }
  bool memory_bound() const override { return true; }
  std::vector<std::string> kernel_files() const override {
    return {"storage.cl", "elementwise_ops.cl", "elementwise.cl"};
  }
  std::unique_ptr<Evaluation> instantiate(Session& session) const override;

 private:
  ElementwiseShape shape_;
  ElementwiseLayout layout_;
};

// Outputs above this many elements are verified on a deterministic sample of this size (plus the
// first and last 2^16 elements); every other output element must still be finite... or match a
// non-finite reference.
inline constexpr std::int64_t kElementwiseFullCheck = std::int64_t{1} << 22;

// Kernel error allowed, in units of the bound elementwise_step derives: a margin for the
// first-order analysis.
inline constexpr double kElementwiseMargin = 2.0;

// The elementwise family: what `--ops elementwise` tunes (ops/elementwise/elementwise_family.cpp).
const OpFamily& elementwise_family();

// The elementwise correctness table: every op, dtype and addressing mode at odd shapes.
struct ElementwiseTestCase {
  ElementwiseShape shape;
  ElementwiseLayout layout;
};
std::vector<ElementwiseTestCase> elementwise_test_cases();

}  // namespace ocltune
