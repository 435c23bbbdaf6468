// ops::reduce: the reduction dispatch adapter (problem, plan on the caller's buffers, shape code).
#include "runtime/reduce.h"

#include <utility>

#include "harness/buffer_extent.h"
#include "harness/error.h"
#include "ops/reduce/reduce_problem.h"
#include "runtime/marker.h"

namespace ocltune {
namespace {

bool empty_call(const ReduceCall& c) { return c.shape.layout().passes.empty(); }

}  // namespace

void check_reduce_call(const ReduceCall& c) {
  c.shape.validate();
  if (c.input_offset < 0 || c.output_offset < 0) throw Error("reduce: negative buffer offset");
  if (empty_call(c)) return;
  if (!c.input || !c.output) throw Error("reduce: a buffer is null");
  const ReduceLayout layout = c.shape.layout();
  check_buffer_extent(c.input, c.input_offset, layout.elements, dtype_bytes(c.shape.dtype), "reduce", "the input");
  // argmax/argmin write int64 indices.
  const std::size_t out_bytes = is_arg_kind(c.shape.kind) ? sizeof(std::int64_t) : dtype_bytes(c.shape.dtype);
  check_buffer_extent(c.output, c.output_offset, layout.outputs, out_bytes, "reduce", "the output");
  check_prologue_buffers(c.shape.prologue, c.prologue, layout.elements, c.shape.dtype, "reduce");
}

ShapeCode reduce_shape_code(const DispatchAdapter& adapter, const ReduceCall& c) {
  // validate() bounds the rank to 4: 1 + 4 + 6 values at most.
  ShapeCode code;
  code.adapter = &adapter;
  code.push(static_cast<std::int64_t>(c.shape.dims.size()));
  for (std::int64_t d : c.shape.dims) code.push(d);
  std::int64_t axes = 0;
  for (int a : c.shape.axes) axes |= std::int64_t{1} << a;
  code.push(axes);
  code.push(c.shape.keepdim);
  code.push(static_cast<std::int64_t>(c.shape.kind));
  code.push(static_cast<std::int64_t>(c.shape.dtype));
  code.push(c.shape.prologue.code());
  return code;
}

std::unique_ptr<Problem> ReduceAdapter::problem_of(const ReduceCall& call) const {
  return std::make_unique<ReduceProblem>(call.shape);
}

LaunchPlan ReduceAdapter::plan_of(const ReduceCall& call, const Config& config, Workspace& workspace) const {
  ReduceOperands o;
  o.input = cl::Buffer(call.input, true);  // retained: the caller keeps its own reference
  o.input_offset = call.input_offset;
  o.output = cl::Buffer(call.output, true);
  o.output_offset = call.output_offset;
  o.prologue = prologue_operands(call.prologue);
  return reduce_plan(call.shape, o, config, workspace);
}

const ReduceAdapter& reduce_adapter() {
  static const ReduceAdapter adapter;
  return adapter;
}

template <>
Checked<ReduceCall>::Checked(ReduceCall call) : call_(std::move(call)) {
  check_reduce_call(call_);
}

namespace ops {

namespace {

// ops::reduce of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const ReduceCall& call,
                          const DispatchOptions& options) {
  if (empty_call(call)) return enqueue_marker(queue, options);
  return runtime.dispatch(reduce_adapter(), reduce_shape_code(reduce_adapter(), call), &call, queue, options);
}

}  // namespace

Dispatch reduce(Runtime& runtime, cl_command_queue queue, const ReduceCall& call, const DispatchOptions& options) {
  check_reduce_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch reduce(Runtime& runtime, cl_command_queue queue, const Checked<ReduceCall>& call,
                const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision reduce_decision(Runtime& runtime, const ReduceCall& call) {
  check_reduce_call(call);
  if (empty_call(call)) throw Error("reduce: an empty output launches no kernel");
  return runtime.decide(reduce_adapter(), reduce_shape_code(reduce_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
