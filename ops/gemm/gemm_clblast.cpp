// GEMM through CLBlast: the same-process baseline for benchmarks and a fallback for the runtime.
#include "ops/gemm/gemm_clblast.h"

#include <clblast.h>
#include <clblast_half.h>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {
namespace {

// Gemm, or GemmStridedBatched for batches, in CLBlast's type T (float or its host `half`), with
// the scalars converted to T.
template <typename T, typename Scalar>
clblast::StatusCode gemm_in(cl_command_queue* queue, const GemmShape& s, const GemmOperands& o, Scalar to_scalar,
                            cl_event* event) {
  const auto ta = s.trans_a ? clblast::Transpose::kYes : clblast::Transpose::kNo;
  const auto tb = s.trans_b ? clblast::Transpose::kYes : clblast::Transpose::kNo;
  const auto u = [](std::int64_t x) { return static_cast<std::size_t>(x); };
  const T alpha = to_scalar(s.alpha), beta = to_scalar(s.beta);
  if (s.batch == 1) {
    return clblast::Gemm<T>(clblast::Layout::kRowMajor, ta, tb, u(s.m), u(s.n), u(s.k), alpha, o.a(), u(o.a_offset),
                            u(o.lda), o.b(), u(o.b_offset), u(o.ldb), beta, o.c(), u(o.c_offset), u(o.ldc), queue,
                            event);
  }
  return clblast::GemmStridedBatched<T>(clblast::Layout::kRowMajor, ta, tb, u(s.m), u(s.n), u(s.k), alpha, o.a(),
                                        u(o.a_offset), u(o.lda), u(o.stride_a), o.b(), u(o.b_offset), u(o.ldb),
                                        u(o.stride_b), beta, o.c(), u(o.c_offset), u(o.ldc), u(o.stride_c), u(s.batch),
                                        queue, event);
}

}  // namespace

bool clblast_supports(DType dtype, const DeviceInfo& device) {
  return dtype == DType::kFp32 || (dtype == DType::kFp16 && device.has_extension("cl_khr_fp16"));
}

void clblast_gemm(cl::CommandQueue& queue, const GemmShape& s, const GemmOperands& o, cl::Event* event) {
  if (s.dtype == DType::kBf16) throw Error("CLBlast has no bf16 GEMM");
  cl_command_queue q = queue();
  cl_event raw = nullptr;
  cl_event* raw_out = event ? &raw : nullptr;
  const clblast::StatusCode status = s.dtype == DType::kFp16
                                         ? gemm_in<half>(
                                               &q, s, o, [](float x) { return FloatToHalf(x); }, raw_out)
                                         : gemm_in<float>(
                                               &q, s, o, [](float x) { return x; }, raw_out);
  if (status != clblast::StatusCode::kSuccess) {
    if (raw) clReleaseEvent(raw);
    throw Error(fmt::format("CLBlast GEMM failed with status {}", static_cast<int>(status)));
  }
  if (event && raw) *event = cl::Event(raw);  // takes over the library's reference
}

}  // namespace ocltune
