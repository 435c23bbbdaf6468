// GEMM through CLBlast: the same-process baseline for benchmarks and a fallback for the runtime.
#include "ops/gemm_clblast.h"

#include <clblast.h>

#include <fmt/format.h>

#include "harness/error.h"

namespace ocltune {

void clblast_gemm(cl::CommandQueue& queue, const GemmShape& s, const GemmOperands& o, cl::Event* event) {
  check_operands(s, o);
  cl_command_queue q = queue();
  const auto ta = s.trans_a ? clblast::Transpose::kYes : clblast::Transpose::kNo;
  const auto tb = s.trans_b ? clblast::Transpose::kYes : clblast::Transpose::kNo;
  const auto u = [](std::int64_t x) { return static_cast<std::size_t>(x); };
  cl_event raw = nullptr;
  cl_event* raw_out = event ? &raw : nullptr;
  clblast::StatusCode status;
  if (s.batch == 1) {
    status = clblast::Gemm<float>(clblast::Layout::kRowMajor, ta, tb, u(s.m), u(s.n), u(s.k), s.alpha, o.a(),
                                  u(o.a_offset), u(o.lda), o.b(), u(o.b_offset), u(o.ldb), s.beta, o.c(), u(o.c_offset),
                                  u(o.ldc), &q, raw_out);
  } else {
    status = clblast::GemmStridedBatched<float>(clblast::Layout::kRowMajor, ta, tb, u(s.m), u(s.n), u(s.k), s.alpha,
                                                o.a(), u(o.a_offset), u(o.lda), u(o.stride_a), o.b(), u(o.b_offset),
                                                u(o.ldb), u(o.stride_b), s.beta, o.c(), u(o.c_offset), u(o.ldc),
                                                u(o.stride_c), u(s.batch), &q, raw_out);
  }
  if (status != clblast::StatusCode::kSuccess) {
    if (raw) clReleaseEvent(raw);
    throw Error(fmt::format("CLBlast GEMM failed with status {}", static_cast<int>(status)));
  }
  if (event && raw) *event = cl::Event(raw);  // takes over the library's reference
}

}  // namespace ocltune
