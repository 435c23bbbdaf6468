// ops::conv2d: the conv2d dispatch adapter (problem, plan) and the checks of a call.
#include "runtime/conv2d.h"

#include <utility>

#include <fmt/format.h>

#include "harness/buffer_extent.h"
#include "harness/error.h"
#include "ops/conv2d/conv2d_problem.h"

namespace ocltune {
namespace {

// The caller's buffers, retained by the wrappers for the plan's lifetime (the caller keeps its own
// reference: cl::Buffer(mem, true) retains, and releases on destruction).
Conv2dOperands operands_of(const Conv2dCall& c) {
  Conv2dOperands o;
  o.input = cl::Buffer(c.input, true);
  o.weight = cl::Buffer(c.weight, true);
  o.output = cl::Buffer(c.output, true);
  if (c.bias) o.bias = cl::Buffer(c.bias, true);
  o.input_offset = c.input_offset;
  o.weight_offset = c.weight_offset;
  o.output_offset = c.output_offset;
  o.bias_offset = c.bias_offset;
  return o;
}

void check_range(const char* name, std::int64_t value, std::int64_t lo, std::int64_t hi) {
  if (value < lo || value > hi) throw Error(fmt::format("conv2d: {} = {} is outside [{}, {}]", name, value, lo, hi));
}

std::int64_t pack(std::int64_t hi, std::int64_t lo) {
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(hi) << 32) | static_cast<std::uint32_t>(lo));
}

}  // namespace

void check_conv2d_call(const Conv2dCall& c) {
  const Conv2dShape& s = c.shape;
  // The ranges Conv2dShape::from_json accepts: a call the database could not hold a row for is not
  // one the kernels were tuned or tested for.
  check_range("n", s.n, 1, 65535);
  check_range("c", s.c, 1, 1 << 20);
  check_range("h", s.h, 1, 1 << 16);
  check_range("w", s.w, 1, 1 << 16);
  check_range("k", s.k, 1, 1 << 20);
  check_range("r", s.r, 1, 64);
  check_range("s", s.s, 1, 64);
  check_range("stride_h", s.stride_h, 1, 64);
  check_range("stride_w", s.stride_w, 1, 64);
  check_range("pad_h", s.pad_h, 0, 64);
  check_range("pad_w", s.pad_w, 0, 64);
  check_range("dil_h", s.dil_h, 1, 64);
  check_range("dil_w", s.dil_w, 1, 64);
  check_range("groups", s.groups, 1, 1 << 20);
  if (static_cast<int>(s.dir) < 0 || static_cast<int>(s.dir) > 2) throw Error("conv2d: unknown direction");
  if (static_cast<int>(s.act) < 0 || static_cast<int>(s.act) > static_cast<int>(Activation::kSigmoid)) {
    throw Error("conv2d: unknown activation");
  }
  s.validate();  // the dtype code too
  if (!c.input || !c.weight || !c.output) throw Error("conv2d: a buffer is null (input, weight and output are needed)");
  if (s.bias && !c.bias) throw Error("conv2d: the shape has a bias but the bias buffer is null");
  if (c.input_offset < 0 || c.weight_offset < 0 || c.output_offset < 0 || c.bias_offset < 0) {
    throw Error("conv2d: negative buffer offset");
  }
  // The same four tensors in every direction: dense NCHW input and output, KCRS weight, all of the
  // shape's storage type (offsets count its elements).
  const std::size_t bytes = dtype_bytes(s.dtype);
  check_buffer_extent(c.input, c.input_offset, s.n * s.c * s.h * s.w, bytes, "conv2d", "the input");
  check_buffer_extent(c.weight, c.weight_offset, s.k * (s.c / s.groups) * s.r * s.s, bytes, "conv2d", "the weight");
  check_buffer_extent(c.output, c.output_offset, s.n * s.k * s.p() * s.q(), bytes, "conv2d", "the output");
  if (s.bias) check_buffer_extent(c.bias, c.bias_offset, s.k, bytes, "conv2d", "the bias");
}

ShapeCode conv2d_shape_code(const DispatchAdapter& adapter, const Conv2dCall& c) {
  // 19 fields in 11 dimensions; check_conv2d_call bounds every packed value below 2^31.
  const Conv2dShape& s = c.shape;
  ShapeCode code;
  code.adapter = &adapter;
  code.push(static_cast<std::int64_t>(s.dir) | (std::int64_t{s.bias} << 4) | (static_cast<std::int64_t>(s.act) << 8) |
            (std::int64_t{s.math == MathMode::kTf32} << 12) | (static_cast<std::int64_t>(s.dtype) << 16));
  code.push(s.n);
  code.push(s.c);
  code.push(s.h);
  code.push(s.w);
  code.push(s.k);
  code.push(s.groups);
  code.push(pack(s.r, s.s));
  code.push(pack(s.stride_h, s.stride_w));
  code.push(pack(s.pad_h, s.pad_w));
  code.push(pack(s.dil_h, s.dil_w));
  return code;
}

std::unique_ptr<Problem> Conv2dAdapter::problem_of(const Conv2dCall& call) const {
  return std::make_unique<Conv2dProblem>(call.shape);
}

LaunchPlan Conv2dAdapter::plan_of(const Conv2dCall& call, const Config& config, Workspace& workspace) const {
  return conv2d_plan(call.shape, operands_of(call), config, workspace);
}

const Conv2dAdapter& conv2d_adapter() {
  static const Conv2dAdapter adapter;
  return adapter;
}

template <>
Checked<Conv2dCall>::Checked(Conv2dCall call) : call_(std::move(call)) {
  check_conv2d_call(call_);
}

namespace ops {

namespace {

// ops::conv2d of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const Conv2dCall& call,
                          const DispatchOptions& options) {
  return runtime.dispatch(conv2d_adapter(), conv2d_shape_code(conv2d_adapter(), call), &call, queue, options);
}

}  // namespace

Dispatch conv2d(Runtime& runtime, cl_command_queue queue, const Conv2dCall& call, const DispatchOptions& options) {
  check_conv2d_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch conv2d(Runtime& runtime, cl_command_queue queue, const Checked<Conv2dCall>& call,
                const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision conv2d_decision(Runtime& runtime, const Conv2dCall& call) {
  check_conv2d_call(call);
  return runtime.decide(conv2d_adapter(), conv2d_shape_code(conv2d_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
