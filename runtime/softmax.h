// ops::softmax: softmax and log_softmax along one dimension of the caller's tensor, with the tuned
// configuration.
#pragma once

#include <cstdint>

#include "harness/cl.h"
#include "ops/softmax/softmax.h"
#include "runtime/checked.h"
#include "runtime/runtime.h"

namespace ocltune {

// One softmax: the family's shape, and the caller's contiguous input and output at element offsets
// (they must not overlap).
struct SoftmaxCall {
  SoftmaxShape shape{};
  cl_mem input = nullptr;
  std::int64_t input_offset = 0;
  cl_mem output = nullptr;
  std::int64_t output_offset = 0;
};

class SoftmaxAdapter : public TypedAdapter<SoftmaxCall> {
 public:
  std::string op() const override { return "softmax"; }
  std::unique_ptr<Problem> problem_of(const SoftmaxCall& call) const override;
  // Arguments come from softmax_plan on every call (no fast binder).
  LaunchPlan plan_of(const SoftmaxCall& call, const Config& config, Workspace& workspace) const override;
};
const SoftmaxAdapter& softmax_adapter();

// Throws ocltune::Error for a call no kernel can serve (invalid shape, null buffer, negative offset).
void check_softmax_call(const SoftmaxCall& call);
// Constructing the checked form of a call runs check_softmax_call (runtime/checked.h).
template <>
Checked<SoftmaxCall>::Checked(SoftmaxCall call);
// Rank, dims, axis, log and dtype.
ShapeCode softmax_shape_code(const DispatchAdapter& adapter, const SoftmaxCall& call);

namespace ops {

// Enqueues the softmax on `queue` (of the runtime's context). An empty tensor enqueues only a marker.
Dispatch softmax(Runtime& runtime, cl_command_queue queue, const SoftmaxCall& call,
                 const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch softmax(Runtime& runtime, cl_command_queue queue, const Checked<SoftmaxCall>& call,
                 const DispatchOptions& options = {});
// Which configuration ops::softmax uses for this call, and which lookup level gave it.
Decision softmax_decision(Runtime& runtime, const SoftmaxCall& call);

}  // namespace ops
}  // namespace ocltune
