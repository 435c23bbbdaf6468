// ops::elementwise: a fused chain of up to four unary/binary steps with broadcasting on the
// caller's buffers, with the tuned configuration.
#pragma once

#include <array>
#include <cstdint>

#include "harness/cl.h"
#include "ops/elementwise/elementwise.h"
#include "runtime/checked.h"
#include "runtime/runtime.h"

namespace ocltune {

// One elementwise call: the family's shape (the chain, each tensor operand's dims and strides;
// scalar operands are per call), the caller's contiguous output, and one buffer + element offset per
// tensor operand in the order of ElementwiseShape::tensors() (the input, then each step's tensor).
struct ElementwiseCall {
  static constexpr std::size_t kMaxTensors = 1 + kElementwiseMaxSteps;
  ElementwiseShape shape{};
  cl_mem output = nullptr;
  std::int64_t output_offset = 0;
  std::array<cl_mem, kMaxTensors> inputs{};
  std::array<std::int64_t, kMaxTensors> input_offsets{};
};

class ElementwiseAdapter : public TypedAdapter<ElementwiseCall> {
 public:
  std::string op() const override { return "elementwise"; }
  std::unique_ptr<Problem> problem_of(const ElementwiseCall& call) const override;
  LaunchPlan plan_of(const ElementwiseCall& call, const Config& config, Workspace& workspace) const override;
  // The shape code holds every dim and stride of the chain, so the plan's sizes, division magics
  // and strides are those of the resolving call: only the buffers, offsets and scalars are set here
  // (elementwise_plan's layout merging and its program description cost several microseconds).
  bool fast_args_of(const ElementwiseCall& call, std::span<const RawArgs> resolved,
                    std::span<RawArgs> steps) const override;
};
const ElementwiseAdapter& elementwise_adapter();

// Throws ocltune::Error for a call no kernel can serve (invalid chain or broadcast, a null buffer,
// a negative offset).
void check_elementwise_call(const ElementwiseCall& call);
// Constructing the checked form of a call runs check_elementwise_call (runtime/checked.h).
template <>
Checked<ElementwiseCall>::Checked(ElementwiseCall call);
// The whole chain (dtype, steps, every tensor operand's dims and strides), packed two 31-bit values
// per slot. A chain too long for that gets an id interned for its shape key and dtype for the life of
// the process, so codes stay exact: equal codes always mean equal problems.
ShapeCode elementwise_shape_code(const DispatchAdapter& adapter, const ElementwiseCall& call);

namespace ops {

// Enqueues the chain on `queue` (of the runtime's context). An empty output enqueues only a marker.
Dispatch elementwise(Runtime& runtime, cl_command_queue queue, const ElementwiseCall& call,
                     const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch elementwise(Runtime& runtime, cl_command_queue queue, const Checked<ElementwiseCall>& call,
                     const DispatchOptions& options = {});
// Which configuration ops::elementwise uses for this call, and which lookup level gave it.
Decision elementwise_decision(Runtime& runtime, const ElementwiseCall& call);

}  // namespace ops
}  // namespace ocltune
