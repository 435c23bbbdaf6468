// ops::norm: layer_norm and batch_norm (training statistics), forward and backward, on the caller's
// tensors, with the tuned configuration.
#pragma once

#include <cstdint>

#include "harness/cl.h"
#include "ops/norm/norm.h"
#include "runtime/checked.h"
#include "runtime/prologue_buffers.h"
#include "runtime/runtime.h"

namespace ocltune {

// A caller's buffer and the element offset of a tensor in it.
struct NormBuffer {
  cl_mem buffer = nullptr;
  std::int64_t offset = 0;
};

// One normalisation: the family's shape (eps and momentum are per call) and the tensors of
// NormOperands; a kind uses only its own, the others may stay null:
//   layer_norm:           x, gamma, beta -> y, mean, rstd
//   batch_norm:           x, gamma, beta -> y, mean, rstd (save_mean, save_invstd); running_mean,
//                         running_var updated in place
//   *_backward:           dy, x, mean, rstd, gamma -> dx, dgamma, dbeta
struct NormCall {
  NormShape shape{};
  NormBuffer x{}, dy{}, gamma{}, beta{};
  NormBuffer mean{}, rstd{};
  NormBuffer running_mean{}, running_var{};
  NormBuffer y{}, dx{}, dgamma{}, dbeta{};
  PrologueBuffers prologue{};  // layer_norm: the shape's prologue tensors, each like x
};

class NormAdapter : public TypedAdapter<NormCall> {
 public:
  std::string op() const override { return "norm"; }
  std::unique_ptr<Problem> problem_of(const NormCall& call) const override;
  // Arguments come from norm_plan on every call (no fast binder): the plan sizes the workspace.
  LaunchPlan plan_of(const NormCall& call, const Config& config, Workspace& workspace) const override;
};
const NormAdapter& norm_adapter();

// Throws ocltune::Error for a call no kernel can serve (invalid shape, a buffer of its kind null,
// negative offset).
void check_norm_call(const NormCall& call);
// Constructing the checked form of a call runs check_norm_call (runtime/checked.h).
template <>
Checked<NormCall>::Checked(NormCall call);
// Kind, rank, dims, axis, dtype and the prologue's steps.
ShapeCode norm_shape_code(const DispatchAdapter& adapter, const NormCall& call);

namespace ops {

// Enqueues the normalisation on `queue` (of the runtime's context). layer_norm of no rows enqueues
// only a marker.
Dispatch norm(Runtime& runtime, cl_command_queue queue, const NormCall& call, const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch norm(Runtime& runtime, cl_command_queue queue, const Checked<NormCall>& call,
              const DispatchOptions& options = {});
// Which configuration ops::norm uses for this call, and which lookup level gave it.
Decision norm_decision(Runtime& runtime, const NormCall& call);

}  // namespace ops
}  // namespace ocltune
