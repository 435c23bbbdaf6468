// ops::norm: the normalisation dispatch adapter (problem, plan on the caller's buffers, shape code).
#include "runtime/norm.h"

#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "harness/buffer_extent.h"
#include "harness/error.h"
#include "ops/norm/norm_problem.h"
#include "runtime/marker.h"

namespace ocltune {
namespace {

// layer_norm_backward of no rows still writes dgamma = dbeta = 0; only the forward has nothing to do.
bool empty_call(const NormCall& c) { return c.shape.kind == NormKind::kLayer && c.shape.rows() == 0; }

using Named = std::pair<const char*, const NormBuffer*>;

std::vector<Named> required(const NormCall& c) {
  if (is_backward(c.shape.kind)) {
    return {{"dy", &c.dy},       {"x", &c.x},   {"mean", &c.mean},     {"rstd", &c.rstd},
            {"gamma", &c.gamma}, {"dx", &c.dx}, {"dgamma", &c.dgamma}, {"dbeta", &c.dbeta}};
  }
  std::vector<Named> r = {{"x", &c.x}, {"gamma", &c.gamma}, {"beta", &c.beta},
                          {"y", &c.y}, {"mean", &c.mean},   {"rstd", &c.rstd}};
  if (is_batch_norm(c.shape.kind))
    r.insert(r.end(), {{"running_mean", &c.running_mean}, {"running_var", &c.running_var}});
  return r;
}

TensorRef ref(const NormBuffer& b) {
  // Retained: the caller keeps its own reference. Unused tensors stay empty.
  return {b.buffer ? cl::Buffer(b.buffer, true) : cl::Buffer(), b.offset};
}

}  // namespace

void check_norm_call(const NormCall& c) {
  c.shape.validate();
  const char* name = norm_kind_name(c.shape.kind);
  for (const auto& [field, b] : required(c)) {
    if (b->offset < 0) throw Error(fmt::format("{}: negative offset of {}", name, field));
    if (!b->buffer && !empty_call(c)) throw Error(fmt::format("{}: buffer {} is null", name, field));
  }
  if (empty_call(c)) return;
  // Data tensors have the shape's dims and dtype; gamma, beta and their gradients one value per
  // channel (batch norm) or per normalised element (layer norm); statistics are fp32.
  const bool batch = is_batch_norm(c.shape.kind);
  const std::int64_t params = batch ? c.shape.channels() : c.shape.n();
  const std::int64_t stats = batch ? c.shape.channels() : c.shape.rows();
  for (const auto& [field, b] : required(c)) {
    const std::string f = field;
    const bool stat = f == "mean" || f == "rstd" || f == "running_mean" || f == "running_var";
    const bool param = f == "gamma" || f == "beta" || f == "dgamma" || f == "dbeta";
    const std::int64_t count = stat ? stats : param ? params : c.shape.elements();
    check_buffer_extent(b->buffer, b->offset, count, stat ? sizeof(float) : dtype_bytes(c.shape.dtype), name, f);
  }
  check_prologue_buffers(c.shape.prologue, c.prologue, c.shape.elements(), c.shape.dtype, name);
}

ShapeCode norm_shape_code(const DispatchAdapter& adapter, const NormCall& c) {
  // validate() bounds the rank to 4: 2 + 4 + 3 values at most. eps and momentum are kernel arguments.
  ShapeCode code;
  code.adapter = &adapter;
  code.push(static_cast<std::int64_t>(c.shape.kind));
  code.push(static_cast<std::int64_t>(c.shape.dims.size()));
  for (std::int64_t d : c.shape.dims) code.push(d);
  code.push(c.shape.axis);
  code.push(static_cast<std::int64_t>(c.shape.dtype));
  code.push(c.shape.prologue.code());
  return code;
}

std::unique_ptr<Problem> NormAdapter::problem_of(const NormCall& call) const {
  return std::make_unique<NormProblem>(call.shape);
}

LaunchPlan NormAdapter::plan_of(const NormCall& c, const Config& config, Workspace& workspace) const {
  NormOperands o;
  o.x = ref(c.x);
  o.dy = ref(c.dy);
  o.gamma = ref(c.gamma);
  o.beta = ref(c.beta);
  o.mean = ref(c.mean);
  o.rstd = ref(c.rstd);
  o.running_mean = ref(c.running_mean);
  o.running_var = ref(c.running_var);
  o.y = ref(c.y);
  o.dx = ref(c.dx);
  o.dgamma = ref(c.dgamma);
  o.dbeta = ref(c.dbeta);
  o.prologue = prologue_operands(c.prologue);
  return norm_plan(c.shape, o, config, workspace);
}

const NormAdapter& norm_adapter() {
  static const NormAdapter adapter;
  return adapter;
}

template <>
Checked<NormCall>::Checked(NormCall call) : call_(std::move(call)) {
  check_norm_call(call_);
}

namespace ops {

namespace {

// ops::norm of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const NormCall& call,
                          const DispatchOptions& options) {
  if (empty_call(call)) return enqueue_marker(queue, options);
  return runtime.dispatch(norm_adapter(), norm_shape_code(norm_adapter(), call), &call, queue, options);
}

}  // namespace

Dispatch norm(Runtime& runtime, cl_command_queue queue, const NormCall& call, const DispatchOptions& options) {
  check_norm_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch norm(Runtime& runtime, cl_command_queue queue, const Checked<NormCall>& call, const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision norm_decision(Runtime& runtime, const NormCall& call) {
  check_norm_call(call);
  if (empty_call(call)) throw Error("layer_norm: no rows launch no kernel");
  return runtime.decide(norm_adapter(), norm_shape_code(norm_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
