// Elementwise shapes: op names, tensor operands, broadcasting, validation, keys, JSON, byte model.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/shape_fields.h"
#include "harness/error.h"
#include "ops/elementwise/elementwise.h"

namespace ocltune {
namespace {

// The kernel indexes with 32-bit ints and adds vector and tile sizes to the element count.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 30;

struct OpInfo {
  ElementwiseOp op;
  const char* name;
  bool binary;
};

constexpr std::array<OpInfo, 35> kOps = {{
    {ElementwiseOp::kRelu, "relu", false},
    {ElementwiseOp::kRelu6, "relu6", false},
    {ElementwiseOp::kGelu, "gelu", false},
    {ElementwiseOp::kGeluTanh, "gelu_tanh", false},
    {ElementwiseOp::kSilu, "silu", false},
    {ElementwiseOp::kSigmoid, "sigmoid", false},
    {ElementwiseOp::kTanh, "tanh", false},
    {ElementwiseOp::kExp, "exp", false},
    {ElementwiseOp::kLog, "log", false},
    {ElementwiseOp::kSqrt, "sqrt", false},
    {ElementwiseOp::kRsqrt, "rsqrt", false},
    {ElementwiseOp::kNeg, "neg", false},
    {ElementwiseOp::kAbs, "abs", false},
    {ElementwiseOp::kAdd, "add", true},
    {ElementwiseOp::kSub, "sub", true},
    {ElementwiseOp::kMul, "mul", true},
    {ElementwiseOp::kDiv, "div", true},
    {ElementwiseOp::kPow, "pow", true},
    {ElementwiseOp::kMaximum, "maximum", true},
    {ElementwiseOp::kMinimum, "minimum", true},
    {ElementwiseOp::kHardswish, "hardswish", false},
    {ElementwiseOp::kHardsigmoid, "hardsigmoid", false},
    {ElementwiseOp::kLeakyRelu, "leaky_relu", true},
    {ElementwiseOp::kReluGrad, "relu_grad", true},
    {ElementwiseOp::kRelu6Grad, "relu6_grad", true},
    {ElementwiseOp::kGeluGrad, "gelu_grad", true},
    {ElementwiseOp::kGeluTanhGrad, "gelu_tanh_grad", true},
    {ElementwiseOp::kSiluGrad, "silu_grad", true},
    {ElementwiseOp::kSigmoidGrad, "sigmoid_grad", true},
    {ElementwiseOp::kTanhGrad, "tanh_grad", true},
    {ElementwiseOp::kHardswishGrad, "hardswish_grad", true},
    {ElementwiseOp::kHardsigmoidGrad, "hardsigmoid_grad", true},
    {ElementwiseOp::kSign, "sign", false},
    {ElementwiseOp::kElu, "elu", true},
    {ElementwiseOp::kSoftplus, "softplus", true},
}};

const OpInfo& info(ElementwiseOp op) { return kOps[static_cast<std::size_t>(op)]; }

std::vector<std::int64_t> dims_field(const nlohmann::json& j, const char* what) {
  if (!j.is_array() || j.size() > static_cast<std::size_t>(kElementwiseMaxRank)) {
    throw Error(fmt::format("{} must be a list of at most {} integers", what, kElementwiseMaxRank));
  }
  std::vector<std::int64_t> out;
  for (const nlohmann::json& d : j) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 || d.get<std::int64_t>() > kMaxElements) {
      throw Error(fmt::format("{} must hold integers in [0, {}]", what, kMaxElements));
    }
    out.push_back(d.get<std::int64_t>());
  }
  return out;
}

// A tensor operand from JSON: a list of dims (contiguous) or {"dims": [...], "strides": [...]}.
TensorOperand tensor_from_json(const nlohmann::json& j, const char* what) {
  TensorOperand t;
  if (j.is_array()) {
    t.dims = dims_field(j, what);
    return t;
  }
  if (!j.is_object()) throw Error(fmt::format("{} must be a list of dims or an object with dims and strides", what));
  for (const auto& item : j.items()) {
    if (item.key() != "dims" && item.key() != "strides") {
      throw Error(fmt::format("{}: unknown field '{}' (known: dims, strides)", what, item.key().substr(0, 32)));
    }
  }
  if (!j.contains("dims")) throw Error(fmt::format("{}: dims are missing", what));
  t.dims = dims_field(j["dims"], what);
  if (j.contains("strides")) t.strides = dims_field(j["strides"], what);
  return t;
}

nlohmann::json tensor_to_json(const TensorOperand& t) {
  if (t.strides.empty()) return t.dims;
  return {{"dims", t.dims}, {"strides", t.strides}};
}

}  // namespace

const std::vector<ElementwiseOp>& elementwise_ops() {
  static const std::vector<ElementwiseOp> ops = [] {
    std::vector<ElementwiseOp> v;
    for (const OpInfo& i : kOps) v.push_back(i.op);
    return v;
  }();
  return ops;
}

const char* elementwise_op_name(ElementwiseOp op) { return info(op).name; }

std::string elementwise_op_define(ElementwiseOp op) {
  std::string s = elementwise_op_name(op);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<ElementwiseOp> parse_elementwise_op(std::string_view name) {
  for (const OpInfo& i : kOps) {
    if (name == i.name) return i.op;
  }
  return std::nullopt;
}

bool is_binary(ElementwiseOp op) { return info(op).binary; }

std::vector<std::int64_t> TensorOperand::effective_strides() const {
  if (!strides.empty()) return strides;
  std::vector<std::int64_t> s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * std::max<std::int64_t>(dims[i], 1);
  return s;
}

std::int64_t TensorOperand::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  return n;
}

std::int64_t TensorOperand::extent() const {
  if (elements() == 0) return 0;
  const std::vector<std::int64_t> s = effective_strides();
  std::int64_t last = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * s[i];
  return last + 1;
}

std::int64_t TensorOperand::distinct() const {
  const std::vector<std::int64_t> s = effective_strides();
  std::int64_t n = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) n *= (s[i] == 0 && dims[i] > 0) ? 1 : dims[i];
  return n;
}

bool TensorOperand::contiguous() const {
  if (strides.empty()) return true;
  TensorOperand packed{dims, {}};
  const std::vector<std::int64_t> c = packed.effective_strides();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 1 && strides[i] != c[i]) return false;
  }
  return true;
}

std::string TensorOperand::key() const {
  std::string k = dims.empty() ? "scalar" : fmt::format("{}", fmt::join(dims, "x"));
  if (!contiguous()) k += fmt::format("/s={}", fmt::join(strides, "x"));
  return k;
}

std::vector<std::int64_t> ElementwiseShape::out_dims() const {
  std::size_t rank = 0;
  for (const TensorOperand* t : tensors()) rank = std::max(rank, t->dims.size());
  std::vector<std::int64_t> out(rank, 1);
  for (const TensorOperand* t : tensors()) {
    const std::size_t lead = rank - t->dims.size();
    for (std::size_t i = 0; i < t->dims.size(); ++i) {
      std::int64_t& o = out[lead + i];
      const std::int64_t d = t->dims[i];
      if (d == o || d == 1) continue;
      if (o != 1)
        throw Error(fmt::format("elementwise: dims {} do not broadcast against {}", t->key(), fmt::join(out, "x")));
      o = d;
    }
  }
  return out;
}

std::int64_t ElementwiseShape::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : out_dims()) n *= d;
  return n;
}

std::vector<const TensorOperand*> ElementwiseShape::tensors() const {
  std::vector<const TensorOperand*> out = {&input};
  for (const ElementwiseStep& s : steps) {
    if (s.tensor) out.push_back(&*s.tensor);
  }
  return out;
}

void ElementwiseShape::validate() const {
  if (steps.size() > static_cast<std::size_t>(kElementwiseMaxSteps)) {
    throw Error(fmt::format("elementwise: {} steps; at most {} are fused", steps.size(), kElementwiseMaxSteps));
  }
  for (const ElementwiseStep& s : steps) {
    if (!is_binary(s.op) && (s.tensor || s.reversed || s.scalar != 0.0f)) {
      throw Error(fmt::format("elementwise: {} is unary and takes no operand", elementwise_op_name(s.op)));
    }
    if (!std::isfinite(s.scalar)) throw Error("elementwise: scalar operands must be finite");
  }
  for (const TensorOperand* t : tensors()) {
    if (t->dims.size() > static_cast<std::size_t>(kElementwiseMaxRank)) {
      throw Error(fmt::format("elementwise: {} has more than {} dims", t->key(), kElementwiseMaxRank));
    }
    if (!t->strides.empty() && t->strides.size() != t->dims.size()) {
      throw Error(fmt::format("elementwise: {} dims but {} strides", t->dims.size(), t->strides.size()));
    }
    for (std::int64_t d : t->dims) {
      if (d < 0 || d > kMaxElements) throw Error(fmt::format("elementwise: dim {} outside [0, {}]", d, kMaxElements));
    }
    for (std::int64_t s : t->strides) {
      if (s < 0 || s > kMaxElements)
        throw Error(fmt::format("elementwise: stride {} outside [0, {}]", s, kMaxElements));
    }
    if (t->extent() > kMaxElements) throw Error(fmt::format("elementwise: {} spans more than 2^30 elements", t->key()));
  }
  const std::vector<std::int64_t> out = out_dims();
  double n = 1;
  for (std::int64_t d : out) n *= static_cast<double>(d);
  if (n > static_cast<double>(kMaxElements)) throw Error("elementwise: the output has more than 2^30 elements");
}

std::string ElementwiseShape::key() const {
  std::string k = "x=" + input.key();
  if (steps.empty()) return k + ",copy";
  for (const ElementwiseStep& s : steps) {
    k += fmt::format(",{}{}", s.reversed ? "r" : "", elementwise_op_name(s.op));
    if (s.tensor) {
      k += "(" + s.tensor->key() + ")";
    } else if (is_binary(s.op)) {
      k += "(s)";
    }
  }
  return k;
}

nlohmann::json ElementwiseShape::to_json() const {
  nlohmann::json j = {{"op", "elementwise"}, {"dtype", dtype_name(dtype)}, {"x", tensor_to_json(input)}};
  nlohmann::json list = nlohmann::json::array();
  for (const ElementwiseStep& s : steps) {
    nlohmann::json step = {{"op", elementwise_op_name(s.op)}};
    if (s.tensor) {
      step["tensor"] = tensor_to_json(*s.tensor);
    } else if (is_binary(s.op)) {
      step["scalar"] = s.scalar;
    }
    if (s.reversed) step["reversed"] = true;
    list.push_back(step);
  }
  j["steps"] = list;
  return j;
}

ElementwiseShape ElementwiseShape::from_json(const nlohmann::json& j) {
  check_known_fields(j, {"dtype", "x", "steps"});
  ElementwiseShape shape;
  shape.dtype = parse_dtype(string_field(j, "dtype", "fp32"));
  if (!j.contains("x")) throw Error("shape field 'x' is missing");
  shape.input = tensor_from_json(j["x"], "shape field 'x'");
  const nlohmann::json steps = j.contains("steps") ? j["steps"] : nlohmann::json::array();
  if (!steps.is_array()) throw Error("shape field 'steps' must be a list");
  if (steps.size() > static_cast<std::size_t>(kElementwiseMaxSteps)) {
    throw Error(fmt::format("shape field 'steps' holds more than {} steps", kElementwiseMaxSteps));
  }
  for (const nlohmann::json& s : steps) {
    check_known_fields(s, {"tensor", "scalar", "reversed"});
    const std::string name = string_field(s, "op", "");
    const std::optional<ElementwiseOp> op = parse_elementwise_op(name);
    if (!op) throw Error(fmt::format("unknown elementwise op '{}'", name.substr(0, 32)));
    ElementwiseStep step{.op = *op};
    if (s.contains("tensor")) step.tensor = tensor_from_json(s["tensor"], "step tensor");
    step.scalar = static_cast<float>(number_field(s, "scalar", 0.0));
    step.reversed = bool_field(s, "reversed", false);
    if (is_binary(*op) && step.tensor.has_value() == s.contains("scalar")) {
      throw Error(fmt::format("step {} needs exactly one of tensor and scalar", name));
    }
    shape.steps.push_back(std::move(step));
  }
  shape.validate();
  return shape;
}

double ElementwiseShape::flops() const {
  return static_cast<double>(elements()) * static_cast<double>(std::max<std::size_t>(steps.size(), 1));
}

double ElementwiseShape::bytes() const {
  const std::int64_t n = elements();
  if (n == 0) return 0;
  double total = static_cast<double>(n);
  for (const TensorOperand* t : tensors()) total += static_cast<double>(t->distinct());
  return total * static_cast<double>(dtype_bytes(dtype));
}

}  // namespace ocltune
