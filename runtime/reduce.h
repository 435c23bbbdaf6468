// ops::reduce: sum, mean, max, min, argmax, argmin, L2 norm over dimensions of the caller's tensor,
// with the tuned configuration.
#pragma once

#include <cstdint>

#include "harness/cl.h"
#include "ops/reduce/reduce.h"
#include "runtime/checked.h"
#include "runtime/prologue_buffers.h"
#include "runtime/runtime.h"

namespace ocltune {

// One reduction: the family's shape, and the caller's contiguous input and output (int64 indices
// for argmax/argmin) at element offsets.
struct ReduceCall {
  ReduceShape shape{};
  cl_mem input = nullptr;
  std::int64_t input_offset = 0;
  cl_mem output = nullptr;
  std::int64_t output_offset = 0;
  PrologueBuffers prologue{};  // the shape's prologue tensors, each like the input (its dims, contiguous)
};

class ReduceAdapter : public TypedAdapter<ReduceCall> {
 public:
  std::string op() const override { return "reduce"; }
  std::unique_ptr<Problem> problem_of(const ReduceCall& call) const override;
  // Arguments come from reduce_plan on every call (no fast binder): the plan sizes the workspace.
  LaunchPlan plan_of(const ReduceCall& call, const Config& config, Workspace& workspace) const override;
};
const ReduceAdapter& reduce_adapter();

// Throws ocltune::Error for a call no kernel can serve (invalid shape, null buffer, negative offset).
void check_reduce_call(const ReduceCall& call);
// Constructing the checked form of a call runs check_reduce_call (runtime/checked.h).
template <>
Checked<ReduceCall>::Checked(ReduceCall call);
// Rank, dims, a bit mask of the axes, keepdim, kind, dtype and the prologue's steps.
ShapeCode reduce_shape_code(const DispatchAdapter& adapter, const ReduceCall& call);

namespace ops {

// Enqueues the reduction on `queue` (of the runtime's context). An empty output enqueues only a marker.
Dispatch reduce(Runtime& runtime, cl_command_queue queue, const ReduceCall& call, const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch reduce(Runtime& runtime, cl_command_queue queue, const Checked<ReduceCall>& call,
                const DispatchOptions& options = {});
// Which configuration ops::reduce uses for this call, and which lookup level gave it.
Decision reduce_decision(Runtime& runtime, const ReduceCall& call);

}  // namespace ops
}  // namespace ocltune
