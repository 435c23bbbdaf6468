// ops::elementwise: the elementwise dispatch adapter (problem, plan on the caller's buffers, a shape
// code that captures the whole chain).
#include "runtime/elementwise.h"

#include <mutex>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "harness/buffer_extent.h"
#include "harness/error.h"
#include "ops/elementwise/elementwise_problem.h"
#include "runtime/marker.h"

namespace ocltune {
namespace {

bool empty_call(const ElementwiseCall& c) { return c.shape.elements() == 0; }

// The chain as a self-delimiting sequence of small values (so that padding the last slot with 0
// cannot make two chains equal): header, then each tensor as rank*2+strided, dims, strides.
class Packer {
 public:
  static constexpr std::size_t kMax = 1 + 9 + kElementwiseMaxSteps * 10;
  void add(std::int64_t v) {
    if (v < 0 || v >= (std::int64_t{1} << 31)) fits_ = false;
    values_[count_++] = static_cast<std::uint32_t>(v);
  }
  void add(const TensorOperand& t) {
    add(static_cast<std::int64_t>(t.dims.size()) * 2 + (t.strides.empty() ? 0 : 1));
    for (std::int64_t d : t.dims) add(d);
    for (std::int64_t s : t.strides) add(s);
  }
  // Two values per slot; false when they do not fit a ShapeCode.
  bool pack(ShapeCode& code) const {
    if (!fits_ || (count_ + 1) / 2 > ShapeCode::kMaxDims) return false;
    for (std::size_t i = 0; i < count_; i += 2) {
      const std::uint64_t lo = i + 1 < count_ ? values_[i + 1] : 0;
      code.push(static_cast<std::int64_t>((std::uint64_t{values_[i]} << 32) | lo));
    }
    return true;
  }

 private:
  std::array<std::uint32_t, kMax> values_{};
  std::size_t count_ = 0;
  bool fits_ = true;
};

// A process-wide id per distinct (dtype, shape key): exact, unlike a hash. Packed codes start with a
// non-negative slot, interned ones with -1.
std::int64_t interned_id(const ElementwiseShape& shape) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::int64_t> ids;
  const std::string key = std::string(dtype_name(shape.dtype)) + "|" + shape.key();
  std::lock_guard lock(mutex);
  auto [it, inserted] = ids.try_emplace(key, static_cast<std::int64_t>(ids.size()));
  return it->second;
}

}  // namespace

void check_elementwise_call(const ElementwiseCall& c) {
  c.shape.validate();
  if (c.output_offset < 0) throw Error("elementwise: negative output offset");
  const std::size_t tensors = c.shape.tensors().size();
  for (std::size_t t = 0; t < tensors; ++t) {
    if (c.input_offsets[t] < 0) throw Error(fmt::format("elementwise: negative offset of tensor operand {}", t));
  }
  if (empty_call(c)) return;
  if (!c.output) throw Error("elementwise: the output buffer is null");
  for (std::size_t t = 0; t < tensors; ++t) {
    if (!c.inputs[t]) throw Error(fmt::format("elementwise: the buffer of tensor operand {} is null", t));
  }
  const std::size_t bytes = dtype_bytes(c.shape.dtype);
  check_buffer_extent(c.output, c.output_offset, c.shape.elements(), bytes, "elementwise", "the output");
  const std::vector<const TensorOperand*> operands = c.shape.tensors();
  for (std::size_t t = 0; t < operands.size(); ++t) {
    check_buffer_extent(c.inputs[t], c.input_offsets[t], operands[t]->extent(), bytes, "elementwise",
                        fmt::format("tensor operand {}", t));
  }
}

ShapeCode elementwise_shape_code(const DispatchAdapter& adapter, const ElementwiseCall& c) {
  ShapeCode code;
  code.adapter = &adapter;
  const ElementwiseShape& s = c.shape;
  Packer p;
  p.add(static_cast<std::int64_t>(s.dtype) * 8 + static_cast<std::int64_t>(s.steps.size()));
  p.add(s.input);
  for (const ElementwiseStep& step : s.steps) {
    p.add(static_cast<std::int64_t>(step.op) * 4 + (step.reversed ? 2 : 0) + (step.tensor ? 1 : 0));
    if (step.tensor) p.add(*step.tensor);
  }
  if (p.pack(code)) return code;
  code.size = 0;
  code.push(-1);
  code.push(interned_id(s));
  return code;
}

std::unique_ptr<Problem> ElementwiseAdapter::problem_of(const ElementwiseCall& call) const {
  return std::make_unique<ElementwiseProblem>(call.shape);
}

LaunchPlan ElementwiseAdapter::plan_of(const ElementwiseCall& c, const Config& config, Workspace&) const {
  ElementwiseOperands o;
  o.out = cl::Buffer(c.output, true);  // retained: the caller keeps its own reference
  o.out_offset = c.output_offset;
  const std::size_t tensors = c.shape.tensors().size();
  for (std::size_t t = 0; t < tensors; ++t) {
    o.inputs.emplace_back(c.inputs[t], true);
    o.input_offsets.push_back(c.input_offsets[t]);
  }
  return elementwise_plan(c.shape, o, config);
}

bool ElementwiseAdapter::fast_args_of(const ElementwiseCall& c, std::span<const RawArgs> resolved,
                                      std::span<RawArgs> steps) const {
  // elementwise_plan's arguments: n, the 3 inner dims and their 3 division magics (7), the output and
  // its offset, then each tensor operand (buffer, offset, 4 strides) in the chain's order, with a
  // binary step's scalar where it has no tensor.
  if (steps.size() != 1 || resolved.size() != 1 || c.shape.elements() == 0) return false;
  RawArgs& a = steps[0];
  a = resolved[0];
  std::uint32_t at = 7;
  const auto set = [&](const RawArg& v) {
    if (at >= a.count) return false;
    a.args[at++] = v;
    return true;
  };
  if (!set(RawArg::mem(c.output)) || !set(RawArg::value(static_cast<cl_int>(c.output_offset)))) return false;
  // The kernel indexes in 32 bits: a call whose offsets reach past that takes the plan, which refuses it.
  constexpr std::int64_t kIndexLimit = (std::int64_t{1} << 31) - 1;
  if (c.output_offset + c.shape.elements() > kIndexLimit) return false;
  std::size_t t = 0;
  const auto tensor = [&](const TensorOperand& operand) {
    if (c.input_offsets[t] + operand.extent() > kIndexLimit) return false;
    const bool ok = set(RawArg::mem(c.inputs[t])) && set(RawArg::value(static_cast<cl_int>(c.input_offsets[t])));
    ++t;
    at += 4;  // strides: part of the shape code
    return ok;
  };
  if (!tensor(c.shape.input)) return false;
  for (const ElementwiseStep& step : c.shape.steps) {
    if (step.tensor) {
      if (!tensor(*step.tensor)) return false;
    } else if (is_binary(step.op)) {
      if (!set(RawArg::value(static_cast<cl_float>(step.scalar)))) return false;
    }
  }
  return at == a.count;
}

const ElementwiseAdapter& elementwise_adapter() {
  static const ElementwiseAdapter adapter;
  return adapter;
}

template <>
Checked<ElementwiseCall>::Checked(ElementwiseCall call) : call_(std::move(call)) {
  check_elementwise_call(call_);
}

namespace ops {

namespace {

// ops::elementwise of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const ElementwiseCall& call,
                          const DispatchOptions& options) {
  if (empty_call(call)) return enqueue_marker(queue, options);
  return runtime.dispatch(elementwise_adapter(), elementwise_shape_code(elementwise_adapter(), call), &call, queue,
                          options);
}

}  // namespace

Dispatch elementwise(Runtime& runtime, cl_command_queue queue, const ElementwiseCall& call,
                     const DispatchOptions& options) {
  check_elementwise_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch elementwise(Runtime& runtime, cl_command_queue queue, const Checked<ElementwiseCall>& call,
                     const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision elementwise_decision(Runtime& runtime, const ElementwiseCall& call) {
  check_elementwise_call(call);
  if (empty_call(call)) throw Error("elementwise: an empty output launches no kernel");
  return runtime.decide(elementwise_adapter(), elementwise_shape_code(elementwise_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
