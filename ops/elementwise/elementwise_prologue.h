// An elementwise prologue: a chain of up to four elementwise ops applied to another family's input
// as its kernel reads it (kernels/prologue.cl), so that the chain's result is never stored: what a
// compiled graph's `sum(relu(x))` or `layer_norm(x + residual)` becomes. The reduce and norm
// families take one. A step's tensor operand has the input's dims and layout.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/cl.h"
#include "harness/launch.h"
#include "ops/elementwise/elementwise.h"
#include "ops/elementwise/elementwise_reference.h"

namespace ocltune {

struct PrologueStep {
  ElementwiseOp op = ElementwiseOp::kRelu;
  bool tensor = false;    // binary: the operand is a tensor like the input (else `scalar`)
  float scalar = 0;       // per call, like the elementwise family's scalars: not part of the key
  bool reversed = false;  // v = op(operand, v)
};

// Where the tensor operands live, in step order (one per step that has a tensor).
struct PrologueOperands {
  std::vector<cl::Buffer> tensors{};
  std::vector<std::int64_t> offsets{};
};

struct Prologue {
  std::vector<PrologueStep> steps{};

  bool empty() const { return steps.empty(); }
  std::size_t tensors() const;  // steps with a tensor operand
  // Throws ocltune::Error naming `family`: too many steps, an operand a unary op cannot take, a
  // binary op without one, a scalar that is not finite.
  void validate(const char* family) const;
  // "add(t)+mul(s)+relu" (a reversed step: "rsub(t)"); "" when empty. Appended to the family's key.
  std::string key() const;
  // [{"op": "add", "tensor": true}, {"op": "mul", "scalar": 0.5}, {"op": "relu"}]
  nlohmann::json to_json() const;
  static Prologue from_json(const nlohmann::json& list);  // throws ocltune::Error
  // The steps (op, operand kind, reversed) as one number, 0 when empty: a dispatch shape code's value.
  std::int64_t code() const;

  // The defines and arguments of kernels/prologue.cl: PRO_STEPS and each step's PROk_*; three
  // arguments per step (tensor, offset, scalar), `unused` standing in for a step without a tensor.
  // Throws ocltune::Error when the operands do not match the steps.
  void add_to(KernelLaunch& launch, const PrologueOperands& operands, const cl::Buffer& unused) const;
  // Checks the operands against the steps (count, null buffers, negative offsets).
  void check_operands(const PrologueOperands& operands, const char* family) const;

  // The chain on one input value in float64 with the bound of the fp32 kernel's error (units of
  // 2^-24, elementwise_reference.h); `operands` holds each tensor step's operand value in order.
  BoundedValue apply(double x, std::span<const double> operands) const;
};

}  // namespace ocltune
