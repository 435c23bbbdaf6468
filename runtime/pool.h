// ops::pool: max / average / adaptive-average pooling, forward and backward, on the caller's
// buffers with the tuned configuration.
#pragma once

#include <cstdint>

#include "harness/cl.h"
#include "ops/pool/pool.h"
#include "runtime/checked.h"
#include "runtime/runtime.h"

namespace ocltune {

// One pooling call: the family's shape and where its tensors live, contiguous NCHW with element
// offsets (as PoolOperands). `in` is x (forward) or the output gradient (backward), `out` is y or
// the input gradient; `indices` (int64, PyTorch's flat h*W+w) is written by max forward when
// shape.indices is set and read by max backward, and may be null otherwise.
struct PoolCall {
  PoolShape shape;
  cl_mem in = nullptr, out = nullptr, indices = nullptr;
  std::int64_t in_offset = 0, out_offset = 0, indices_offset = 0;
};

class PoolAdapter : public TypedAdapter<PoolCall> {
 public:
  std::string op() const override { return "pool"; }
  std::unique_ptr<Problem> problem_of(const PoolCall& call) const override;
  LaunchPlan plan_of(const PoolCall& call, const Config& config, Workspace& workspace) const override;
};
const PoolAdapter& pool_adapter();

// Throws ocltune::Error for a call no kernel can serve: what PyTorch refuses (PoolShape::validate),
// an unknown kind or dtype, a null buffer the call needs, a negative offset. Buffer sizes are
// checked when the call is planned.
void check_pool_call(const PoolCall& call);
// Constructing the checked form of a call runs check_pool_call (runtime/checked.h).
template <>
Checked<PoolCall>::Checked(PoolCall call);
ShapeCode pool_shape_code(const DispatchAdapter& adapter, const PoolCall& call);

namespace ops {

// Enqueues the pooling on `queue` (of the runtime's context). N or C of 0 enqueues only a marker.
Dispatch pool(Runtime& runtime, cl_command_queue queue, const PoolCall& call, const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch pool(Runtime& runtime, cl_command_queue queue, const Checked<PoolCall>& call,
              const DispatchOptions& options = {});
// Which configuration ops::pool uses for this call, and which lookup level gave it.
Decision pool_decision(Runtime& runtime, const PoolCall& call);

}  // namespace ops
}  // namespace ocltune
