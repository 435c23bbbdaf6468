// ops::pool: the pooling dispatch adapter (problem, plan) and the checks of a call.
#include "runtime/pool.h"

#include <utility>

#include "harness/buffer_extent.h"
#include "harness/error.h"
#include "ops/pool/pool_problem.h"
#include "runtime/marker.h"

namespace ocltune {
namespace {

// The caller's buffers, retained by the wrappers for the plan's lifetime (as runtime/gemm.cpp).
PoolOperands operands_of(const PoolCall& c) {
  PoolOperands o;
  o.in = cl::Buffer(c.in, true);
  o.in_offset = c.in_offset;
  o.out = cl::Buffer(c.out, true);
  o.out_offset = c.out_offset;
  if (c.indices) o.indices = cl::Buffer(c.indices, true);
  o.indices_offset = c.indices_offset;
  return o;
}

bool empty_call(const PoolCall& c) { return c.shape.planes() == 0; }

bool needs_indices(const PoolShape& s) { return s.writes_indices() || s.reads_indices(); }

}  // namespace

void check_pool_call(const PoolCall& c) {
  const PoolShape& s = c.shape;
  const int kind = static_cast<int>(s.kind), dtype = static_cast<int>(s.dtype);
  if (kind < 0 || kind > static_cast<int>(PoolKind::kAdaptiveAvg)) throw Error("pool: unknown kind");
  if (dtype < 0 || dtype > static_cast<int>(DType::kBf16)) throw Error("pool: unknown dtype");
  s.validate();
  if (empty_call(c)) return;
  if (!c.in || !c.out) throw Error("pool: the in or out buffer is null");
  if (needs_indices(s) && !c.indices) throw Error("pool: max pooling with indices needs the indices buffer (null)");
  if (c.in_offset < 0 || c.out_offset < 0 || c.indices_offset < 0) throw Error("pool: negative buffer offset");
  // n, c, h, w are the input's in both directions; `in` is the output gradient backward.
  const std::int64_t planes = s.n * s.c, input = planes * s.h * s.w, output = planes * s.out_h() * s.out_w();
  const std::size_t bytes = dtype_bytes(s.dtype);
  check_buffer_extent(c.in, c.in_offset, s.backward ? output : input, bytes, "pool",
                      s.backward ? "the output gradient" : "the input");
  check_buffer_extent(c.out, c.out_offset, s.backward ? input : output, bytes, "pool",
                      s.backward ? "the input gradient" : "the output");
  if (needs_indices(s))
    check_buffer_extent(c.indices, c.indices_offset, output, sizeof(std::int64_t), "pool", "the indices");
}

ShapeCode pool_shape_code(const DispatchAdapter& adapter, const PoolCall& c) {
  // The fields of the shape's key only: a field the kind ignores (adaptive pooling's window,
  // count_include_pad of max, indices outside max forward) does not make another problem.
  const PoolShape& s = c.shape;
  const bool window = s.kind != PoolKind::kAdaptiveAvg;
  const bool cip = s.kind == PoolKind::kAvg && s.count_include_pad;
  const bool indices = s.kind == PoolKind::kMax && !s.backward && s.indices;
  ShapeCode code;
  code.adapter = &adapter;
  code.push(static_cast<std::int64_t>(s.kind) | (std::int64_t{s.backward} << 4) |
            (std::int64_t{window && s.ceil_mode} << 5) | (std::int64_t{cip} << 6) | (std::int64_t{indices} << 7) |
            (static_cast<std::int64_t>(s.dtype) << 8));
  code.push(s.n);
  code.push(s.c);
  code.push(s.h);
  code.push(s.w);
  for (const std::int64_t v : {s.kh, s.kw, s.sh, s.sw, s.ph, s.pw}) code.push(window ? v : 0);
  return code;
}

std::unique_ptr<Problem> PoolAdapter::problem_of(const PoolCall& call) const {
  return std::make_unique<PoolProblem>(call.shape);
}

LaunchPlan PoolAdapter::plan_of(const PoolCall& call, const Config& config, Workspace&) const {
  return pool_plan(call.shape, operands_of(call), config);
}

const PoolAdapter& pool_adapter() {
  static const PoolAdapter adapter;
  return adapter;
}

template <>
Checked<PoolCall>::Checked(PoolCall call) : call_(std::move(call)) {
  check_pool_call(call_);
}

namespace ops {

namespace {

// ops::pool of a call that has been checked.
Dispatch dispatch_checked(Runtime& runtime, cl_command_queue queue, const PoolCall& call,
                          const DispatchOptions& options) {
  if (empty_call(call)) return enqueue_marker(queue, options);
  return runtime.dispatch(pool_adapter(), pool_shape_code(pool_adapter(), call), &call, queue, options);
}

}  // namespace

Dispatch pool(Runtime& runtime, cl_command_queue queue, const PoolCall& call, const DispatchOptions& options) {
  check_pool_call(call);
  return dispatch_checked(runtime, queue, call, options);
}

Dispatch pool(Runtime& runtime, cl_command_queue queue, const Checked<PoolCall>& call, const DispatchOptions& options) {
  return dispatch_checked(runtime, queue, *call, options);
}

Decision pool_decision(Runtime& runtime, const PoolCall& call) {
  check_pool_call(call);
  if (empty_call(call)) throw Error("pool: an empty call (n or c 0) launches no kernel");
  return runtime.decide(pool_adapter(), pool_shape_code(pool_adapter(), call), &call);
}

}  // namespace ops
}  // namespace ocltune
