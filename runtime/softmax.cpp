// ops::softmax: the softmax dispatch adapter (problem, plan on the caller's buffers, shape code).
#include "runtime/softmax.h"

#include <utility>

#include "harness/buffer_extent.h"
#include "harness/error.h"
#include "ops/softmax/softmax_problem.h"
#include "runtime/marker.h"

namespace ocltune {
namespace {

bool empty_call(const SoftmaxCall& c) { return c.shape.layout().passes.empty(); }

}  // namespace

void check_softmax_call(const SoftmaxCall& c) {
  c.shape.validate();
  if (c.input_offset < 0 || c.output_offset < 0) throw Error("softmax: negative buffer offset");
  if (empty_call(c)) return;
  if (!c.input || !c.output) throw Error("softmax: a buffer is null");
  const std::int64_t n = c.shape.layout().elements;
  const std::size_t bytes = dtype_bytes(c.shape.dtype);
  check_buffer_extent(c.input, c.input_offset, n, bytes, "softmax", "the input");
  check_buffer_extent(c.output, c.output_offset, n, bytes, "softmax", "the output");
  // A segment's passes read the input again after writing outputs: in place would read results.
  if (c.input == c.output && c.input_offset < c.output_offset + n && c.output_offset < c.input_offset + n) {
    throw Error("softmax: the input and the output overlap (in place is not supported)");
  }
}

ShapeCode softmax_shape_code(const DispatchAdapter& adapter, const SoftmaxCall& c) {
  // validate() bounds the rank to 4: 1 + 4 + 3 values at most.
  ShapeCode code;
  code.adapter = &adapter;
  code.push(static_cast<std::int64_t>(c.shape.dims.size()));
  for (std::int64_t d : c.shape.dims) code.push(d);
  code.push(c.shape.axis);
  code.push(c.shape.log);
  code.push(static_cast<std::int64_t>(c.shape.dtype));
  return code;
}

std::unique_ptr<Problem> SoftmaxAdapter::problem_of(const SoftmaxCall& call) const {
  return std::make_unique<SoftmaxProblem>(call.shape);
}

LaunchPlan SoftmaxAdapter::plan_of(const SoftmaxCall& call, const Config& config, Workspace&) const {
  SoftmaxOperands o;
  o.input = cl::Buffer(call.input, true);  // retained: the caller keeps its own reference
  o.input_offset = call.input_offset;
  o.output = cl::Buffer(call.output, true);
  o.output_offset = call.output_offset;
  return softmax_plan(call.shape, o, config);
}

const SoftmaxAdapter& softmax_adapter() {
  static const SoftmaxAdapter adapter;
  return adapter;
}

template <>
Checked<SoftmaxCall>::Checked(SoftmaxCall call) : call_(std::move(call)) {
  check_softmax_call(call_);
}

namespace ops {

namespace {

// ops::softmax of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const SoftmaxCall& call,
                          const DispatchOptions& options) {
  if (empty_call(call)) return enqueue_marker(queue, options);
  return runtime.dispatch(softmax_adapter(), softmax_shape_code(softmax_adapter(), call), &call, queue, options);
}

}  // namespace

Dispatch softmax(Runtime& runtime, cl_command_queue queue, const SoftmaxCall& call, const DispatchOptions& options) {
  check_softmax_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch softmax(Runtime& runtime, cl_command_queue queue, const Checked<SoftmaxCall>& call,
                 const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision softmax_decision(Runtime& runtime, const SoftmaxCall& call) {
  check_softmax_call(call);
  if (empty_call(call)) throw Error("softmax: an empty tensor launches no kernel");
  return runtime.decide(softmax_adapter(), softmax_shape_code(softmax_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
