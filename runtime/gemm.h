// ops::gemm: C = act(alpha * op(A) * op(B) + beta * C + bias) on the caller's buffers, with the tuned
// configuration.
#pragma once

#include <cstdint>

#include "harness/cl.h"
#include "ops/gemm/gemm.h"
#include "runtime/checked.h"
#include "runtime/runtime.h"

namespace ocltune {

// One GEMM call, as BLAS takes it: the family's shape (sizes, transposes, alpha and beta, the math
// mode and the storage type: the struct the tuner and the database key by; `math` kTf32 allows
// matrix units with TF32 inputs where the device has them, like PyTorch's allow_tf32, and such a
// call may take exact rows too, docs/decisions/0048) plus where the row-major matrices are: buffers,
// element offsets, leading dimensions and batch strides.
struct GemmCall {
  GemmShape shape;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  std::int64_t a_offset = 0, b_offset = 0, c_offset = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
  // With shape.bias: N contiguous elements of C's storage type from bias_offset.
  cl_mem bias = nullptr;
  std::int64_t bias_offset = 0;

  // Leading dimensions and batch strides of tightly packed matrices.
  GemmCall& packed();
};

class GemmAdapter : public TypedAdapter<GemmCall> {
 public:
  std::string op() const override { return "gemm"; }
  std::unique_ptr<Problem> problem_of(const GemmCall& call) const override;
  LaunchPlan plan_of(const GemmCall& call, const Config& config, Workspace& workspace) const override;
  bool fast_args_of(const GemmCall& call, std::span<const RawArgs> resolved, std::span<RawArgs> steps) const override;
  std::string library() const override { return "clblast"; }
  Dispatch library_enqueue_of(const GemmCall& call, cl_command_queue queue,
                              const DispatchOptions& options) const override;
  // CLBlast has fp32 and fp16 (where the device has cl_khr_fp16), no bf16, and no epilogue.
  bool library_serves_of(const GemmCall& call, const DeviceInfo& device) const override;
};
const GemmAdapter& gemm_adapter();

// Throws ocltune::Error for a call no kernel can serve (null buffer, leading dimension too small,
// overlapping output batches, sizes beyond 32-bit indexing, a buffer too small for what it indexes).
void check_gemm_call(const GemmCall& call);
// Constructing the checked form of a call runs check_gemm_call (runtime/checked.h).
template <>
Checked<GemmCall>::Checked(GemmCall call);
ShapeCode gemm_shape_code(const DispatchAdapter& adapter, const GemmCall& call);

namespace ops {

// Enqueues the GEMM on `queue` (of the runtime's context). M, N or batch of 0 enqueues only a marker.
Dispatch gemm(Runtime& runtime, cl_command_queue queue, const GemmCall& call, const DispatchOptions& options = {});
// The same for a checked call (the C ABI checks while converting its arguments): no check again.
Dispatch gemm(Runtime& runtime, cl_command_queue queue, const Checked<GemmCall>& call,
              const DispatchOptions& options = {});
// Which configuration ops::gemm uses for this call, and which lookup level gave it.
Decision gemm_decision(Runtime& runtime, const GemmCall& call);

}  // namespace ops
}  // namespace ocltune
