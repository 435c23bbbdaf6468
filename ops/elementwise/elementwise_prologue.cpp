// An elementwise prologue: validation, key, JSON, the kernel's defines and arguments, the reference.
#include "ops/elementwise/elementwise_prologue.h"

#include <cmath>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "harness/error.h"

namespace ocltune {

std::size_t Prologue::tensors() const {
  std::size_t n = 0;
  for (const PrologueStep& s : steps) n += s.tensor ? 1 : 0;
  return n;
}

void Prologue::validate(const char* family) const {
  if (steps.size() > static_cast<std::size_t>(kElementwiseMaxSteps)) {
    throw Error(
        fmt::format("{}: a prologue of {} steps; at most {} are fused", family, steps.size(), kElementwiseMaxSteps));
  }
  for (const PrologueStep& s : steps) {
    const char* name = elementwise_op_name(s.op);
    if (!is_binary(s.op) && (s.tensor || s.reversed || s.scalar != 0.0f)) {
      throw Error(fmt::format("{}: prologue step {} is unary and takes no operand", family, name));
    }
    if (!std::isfinite(s.scalar))
      throw Error(fmt::format("{}: prologue step {} has a scalar that is not finite", family, name));
  }
}

std::string Prologue::key() const {
  std::string k;
  for (const PrologueStep& s : steps) {
    if (!k.empty()) k += "+";
    k += fmt::format("{}{}", s.reversed ? "r" : "", elementwise_op_name(s.op));
    if (is_binary(s.op)) k += s.tensor ? "(t)" : "(s)";
  }
  return k;
}

nlohmann::json Prologue::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const PrologueStep& s : steps) {
    nlohmann::json step = {{"op", elementwise_op_name(s.op)}};
    if (s.tensor) {
      step["tensor"] = true;
    } else if (is_binary(s.op)) {
      step["scalar"] = s.scalar;
    }
    if (s.reversed) step["reversed"] = true;
    list.push_back(step);
  }
  return list;
}

Prologue Prologue::from_json(const nlohmann::json& list) {
  if (!list.is_array()) throw Error("shape field 'prologue' must be a list");
  if (list.size() > static_cast<std::size_t>(kElementwiseMaxSteps)) {
    throw Error(fmt::format("shape field 'prologue' holds more than {} steps", kElementwiseMaxSteps));
  }
  Prologue p;
  for (const nlohmann::json& s : list) {
    if (!s.is_object()) throw Error("a prologue step must be an object");
    check_known_fields(s, {"tensor", "scalar", "reversed"});
    const std::string name = string_field(s, "op", "");
    const std::optional<ElementwiseOp> op = parse_elementwise_op(name);
    if (!op) throw Error(fmt::format("unknown prologue op '{}'", name.substr(0, 32)));
    PrologueStep step{.op = *op};
    step.tensor = bool_field(s, "tensor", false);
    step.scalar = static_cast<float>(number_field(s, "scalar", 0.0));
    step.reversed = bool_field(s, "reversed", false);
    if (is_binary(*op) && step.tensor == s.contains("scalar")) {
      throw Error(fmt::format("prologue step {} needs exactly one of tensor and scalar", name));
    }
    p.steps.push_back(step);
  }
  p.validate("prologue");
  return p;
}

std::int64_t Prologue::code() const {
  // 10 bits a step (validate() bounds the steps to 4): the op + 1 (so that no step differs from
  // relu's), the operand kind, reversed.
  std::int64_t code = 0;
  for (const PrologueStep& s : steps) {
    code = code << 10 | (static_cast<std::int64_t>(s.op) + 1) << 2 | (s.tensor ? 2 : 0) | (s.reversed ? 1 : 0);
  }
  return code;
}

void Prologue::check_operands(const PrologueOperands& operands, const char* family) const {
  if (operands.tensors.size() != tensors() || operands.offsets.size() != tensors()) {
    throw Error(fmt::format("{}: the prologue has {} tensor operands; {} buffers and {} offsets given", family,
                            tensors(), operands.tensors.size(), operands.offsets.size()));
  }
  for (std::size_t t = 0; t < tensors(); ++t) {
    if (!operands.tensors[t]()) throw Error(fmt::format("{}: prologue operand {} is a null buffer", family, t));
    if (operands.offsets[t] < 0) throw Error(fmt::format("{}: prologue operand {} has a negative offset", family, t));
  }
}

void Prologue::add_to(KernelLaunch& launch, const PrologueOperands& operands, const cl::Buffer& unused) const {
  check_operands(operands, "prologue");
  auto& defines = launch.program.defines;
  defines.emplace_back("PRO_STEPS", std::to_string(steps.size()));
  std::size_t t = 0;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const PrologueStep& s = steps[k];
    const std::string prefix = fmt::format("PRO{}_", k + 1);
    defines.emplace_back(prefix + "OP", elementwise_op_define(s.op));
    defines.emplace_back(prefix + "ARG", s.tensor ? "1" : is_binary(s.op) ? "2" : "0");
    defines.emplace_back(prefix + "REV", s.reversed ? "1" : "0");
    if (s.tensor) {
      launch.args.emplace_back(operands.tensors[t]);
      launch.args.emplace_back(static_cast<cl_long>(operands.offsets[t]));
      ++t;
    } else {
      launch.args.emplace_back(unused);
      launch.args.emplace_back(static_cast<cl_long>(0));
    }
    launch.args.emplace_back(static_cast<cl_float>(s.scalar));
  }
}

BoundedValue Prologue::apply(double x, std::span<const double> operands) const {
  BoundedValue v{x, 0};
  std::size_t t = 0;
  for (const PrologueStep& s : steps) {
    const BoundedValue b{s.tensor ? operands[t++] : static_cast<double>(s.scalar), 0};
    v = s.reversed ? elementwise_step(s.op, b, v) : elementwise_step(s.op, v, b);
  }
  return v;
}

}  // namespace ocltune
