// ops::conv2d: forward, backward-data and backward-weight (with the bias gradient) on the caller's
// buffers, with the tuned configuration.
#pragma once

#include <cstdint>

#include "harness/cl.h"
#include "ops/conv2d/conv2d.h"
#include "runtime/checked.h"
#include "runtime/runtime.h"

namespace ocltune {

// One conv2d call: the family's shape (direction, sizes, bias, fused activation) and where its
// tensors live, densely packed NCHW / KCRS with element offsets (as Conv2dOperands). Which tensors
// are read and written depends on the direction (see ConvDirection); `bias` may be null when the
// shape has none.
struct Conv2dCall {
  Conv2dShape shape;
  cl_mem input = nullptr, weight = nullptr, output = nullptr, bias = nullptr;
  std::int64_t input_offset = 0, weight_offset = 0, output_offset = 0, bias_offset = 0;
};

class Conv2dAdapter : public TypedAdapter<Conv2dCall> {
 public:
  std::string op() const override { return "conv2d"; }
  std::unique_ptr<Problem> problem_of(const Conv2dCall& call) const override;
  // No fast_args_of: Winograd's workspace buffers come from the plan, so the plan runs per call.
  LaunchPlan plan_of(const Conv2dCall& call, const Config& config, Workspace& workspace) const override;
};
const Conv2dAdapter& conv2d_adapter();

// Throws ocltune::Error for a call no kernel can serve: a size outside what the database accepts
// (n in [1, 65535], c, k, groups up to 2^20, h, w up to 2^16, r, s, stride, pad, dilation up to 64),
// groups not dividing c and k, a filter larger than the padded input, an activation outside the
// forward direction, an unknown dtype, a null buffer, a negative offset, a buffer too small for its
// tensor in the shape's storage type.
void check_conv2d_call(const Conv2dCall& call);
// Constructing the checked form of a call runs check_conv2d_call (runtime/checked.h).
template <>
Checked<Conv2dCall>::Checked(Conv2dCall call);
// Direction, bias, activation, math, dtype, sizes; pairs of per-axis values packed two 32-bit halves per dimension.
ShapeCode conv2d_shape_code(const DispatchAdapter& adapter, const Conv2dCall& call);

namespace ops {

// Enqueues the convolution on `queue` (of the runtime's context).
Dispatch conv2d(Runtime& runtime, cl_command_queue queue, const Conv2dCall& call, const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch conv2d(Runtime& runtime, cl_command_queue queue, const Checked<Conv2dCall>& call,
                const DispatchOptions& options = {});
// Which configuration ops::conv2d uses for this call, and which lookup level gave it.
Decision conv2d_decision(Runtime& runtime, const Conv2dCall& call);

}  // namespace ops
}  // namespace ocltune
