// ops::gemm: the GEMM dispatch adapter (problem, plan, fast arguments) and its CLBlast fallback.
#include "runtime/gemm.h"

#include <utility>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "harness/error.h"
#include "ops/gemm/gemm_clblast.h"
#include "ops/gemm/gemm_problem.h"
#include "runtime/marker.h"

namespace ocltune {
namespace {

GemmOperands operands_of(const GemmCall& c, bool with_buffers) {
  GemmOperands o;
  if (with_buffers) {
    o.a = cl::Buffer(c.a, true);
    o.b = cl::Buffer(c.b, true);
    o.c = cl::Buffer(c.c, true);
    if (c.bias) o.bias = cl::Buffer(c.bias, true);
  }
  o.a_offset = c.a_offset;
  o.b_offset = c.b_offset;
  o.c_offset = c.c_offset;
  o.lda = c.lda;
  o.ldb = c.ldb;
  o.ldc = c.ldc;
  o.stride_a = c.stride_a;
  o.stride_b = c.stride_b;
  o.stride_c = c.stride_c;
  o.bias_offset = c.bias_offset;
  return o;
}

bool empty_call(const GemmCall& c) { return c.shape.m == 0 || c.shape.n == 0 || c.shape.batch == 0; }

}  // namespace

GemmCall& GemmCall::packed() {
  lda = shape.packed_lda();
  ldb = shape.packed_ldb();
  ldc = shape.packed_ldc();
  stride_a = shape.rows_a() * lda;
  stride_b = shape.rows_b() * ldb;
  stride_c = shape.m * ldc;
  return *this;
}

void check_gemm_call(const GemmCall& c) {
  const GemmShape& s = c.shape;
  if (s.m < 0 || s.n < 0 || s.batch < 0) throw Error("gemm: negative size");
  if (s.dtype != DType::kFp32 && s.dtype != DType::kFp16 && s.dtype != DType::kBf16) {
    throw Error(fmt::format("gemm: unknown dtype code {} (0 fp32, 1 fp16, 2 bf16)", static_cast<int>(s.dtype)));
  }
  if (static_cast<int>(s.act) < 0 || static_cast<int>(s.act) >= kActivationCount) {
    throw Error(fmt::format("gemm: unknown activation code {} (0 none, 1 relu, 2 relu6, 3 gelu, 4 sigmoid)",
                            static_cast<int>(s.act)));
  }
  if (s.m > kMaxDimension || s.n > kMaxDimension || s.k > kMaxDimension || s.batch > 65535) {
    throw Error("gemm: a size is beyond what the kernels index (m, n, k < 2^31, batch <= 65535)");
  }
  if (empty_call(c)) return;
  if (s.k < 1) throw Error("gemm: k must be at least 1");
  if (!c.a || !c.b || !c.c) throw Error("gemm: a buffer is null");
  if (s.bias && !c.bias) throw Error("gemm: the call adds a bias but the bias buffer is null");
  const GemmOperands o = operands_of(c, false);
  check_operands(s, o);
  check_buffer_extents(s, o, c.a, c.b, c.c, c.bias);
  if (s.batch > 1 && c.stride_c < s.m * c.ldc) throw Error("gemm: batch entries of C overlap (stride_c < m * ldc)");
}

ShapeCode gemm_shape_code(const DispatchAdapter& adapter, const GemmCall& c) {
  ShapeCode code;
  code.adapter = &adapter;
  const GemmShape& s = c.shape;
  code.push(s.trans_a);
  code.push(s.trans_b);
  code.push(s.m);
  code.push(s.n);
  code.push(s.k);
  code.push(s.batch);
  code.push(s.math == MathMode::kTf32);
  code.push(static_cast<std::int64_t>(s.dtype));
  // A 16-bit plan widens C into its fp32 copy only when beta != 0, so a zero and a non-zero beta
  // are two plans of one shape (mm and addmm of a PyTorch model mix them).
  code.push(s.dtype != DType::kFp32 && s.beta != 0.0f);
  code.push(s.bias);
  code.push(static_cast<std::int64_t>(s.act));
  return code;
}

std::unique_ptr<Problem> GemmAdapter::problem_of(const GemmCall& call) const {
  return std::make_unique<GemmProblem>(call.shape);
}

LaunchPlan GemmAdapter::plan_of(const GemmCall& call, const Config& config, Workspace& workspace) const {
  // Only checked calls get here (ops::gemm, or a Checked<GemmCall>): no check again.
  return gemm_plan_unchecked(call.shape, operands_of(call, true), config, workspace);
}

bool GemmAdapter::fast_args_of(const GemmCall& c, std::span<const RawArgs> /*resolved*/,
                               std::span<RawArgs> steps) const {
  // The argument list of kernels/gemm.cl as gemm_plan sets it; the runtime compares the two on the
  // first call of every shape and falls back to gemm_plan if they ever differ. Plans of more than
  // one kernel (the packed wgmma variant's, 16-bit storage through fp32 copies) run gemm_plan on
  // every call.
  if (steps.size() != 1) return false;
  RawArgs& a = steps[0];
  a.count = 0;
  a.push(RawArg::value(static_cast<cl_int>(c.shape.m)));
  a.push(RawArg::value(static_cast<cl_int>(c.shape.n)));
  a.push(RawArg::value(static_cast<cl_int>(c.shape.k)));
  a.push(RawArg::value(static_cast<cl_float>(c.shape.alpha)));
  a.push(RawArg::value(static_cast<cl_float>(c.shape.beta)));
  a.push(RawArg::mem(c.a));
  a.push(RawArg::value(static_cast<cl_long>(c.a_offset)));
  a.push(RawArg::value(static_cast<cl_int>(c.lda)));
  a.push(RawArg::value(static_cast<cl_long>(c.stride_a)));
  a.push(RawArg::mem(c.b));
  a.push(RawArg::value(static_cast<cl_long>(c.b_offset)));
  a.push(RawArg::value(static_cast<cl_int>(c.ldb)));
  a.push(RawArg::value(static_cast<cl_long>(c.stride_b)));
  a.push(RawArg::mem(c.c));
  a.push(RawArg::value(static_cast<cl_long>(c.c_offset)));
  a.push(RawArg::value(static_cast<cl_int>(c.ldc)));
  a.push(RawArg::value(static_cast<cl_long>(c.stride_c)));
  if (c.shape.bias) {  // kernels/gemm_epilogue.cl's GEMM_EPILOGUE_PARAMS
    a.push(RawArg::mem(c.bias));
    a.push(RawArg::value(static_cast<cl_long>(c.bias_offset)));
  }
  return true;
}

bool GemmAdapter::library_serves_of(const GemmCall& c, const DeviceInfo& device) const {
  return !c.shape.has_epilogue() && clblast_supports(c.shape.dtype, device);
}

Dispatch GemmAdapter::library_enqueue_of(const GemmCall& c, cl_command_queue queue,
                                         const DispatchOptions& options) const {
  // CLBlast takes no wait list: a barrier orders it after the caller's events.
  if (!options.wait.empty()) {
    const cl_int err =
        clEnqueueBarrierWithWaitList(queue, static_cast<cl_uint>(options.wait.size()), options.wait.data(), nullptr);
    if (err != CL_SUCCESS) throw ClError("clEnqueueBarrierWithWaitList", err);
  }
  cl::CommandQueue q(queue, true);
  cl::Event event;
  clblast_gemm(q, c.shape, operands_of(c, true), options.events ? &event : nullptr);
  Dispatch d;
  if (options.events) {
    d.events[0] = std::move(event);
    d.count = 1;
  }
  return d;
}

const GemmAdapter& gemm_adapter() {
  static const GemmAdapter adapter;
  return adapter;
}

template <>
Checked<GemmCall>::Checked(GemmCall call) : call_(std::move(call)) {
  check_gemm_call(call_);
}

namespace ops {

namespace {

// ops::gemm of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const GemmCall& call,
                          const DispatchOptions& options) {
  if (empty_call(call)) return enqueue_marker(queue, options);
  return runtime.dispatch(gemm_adapter(), gemm_shape_code(gemm_adapter(), call), &call, queue, options);
}

}  // namespace

Dispatch gemm(Runtime& runtime, cl_command_queue queue, const GemmCall& call, const DispatchOptions& options) {
  check_gemm_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch gemm(Runtime& runtime, cl_command_queue queue, const Checked<GemmCall>& call, const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision gemm_decision(Runtime& runtime, const GemmCall& call) {
  check_gemm_call(call);
  if (empty_call(call)) throw Error("gemm: an empty call (m, n or batch 0) launches no kernel");
  return runtime.decide(gemm_adapter(), gemm_shape_code(gemm_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
