// The C ABI of GEMM (ocltune_gemm_args, ocltune_gemm).
#include "runtime/gemm.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

// The call `a` describes on `runtime`'s device, checked. TF32 allowed where the device has no such
// units is the exact call.
ocltune::Checked<ocltune::GemmCall> to_call(const ocltune_gemm_args& a, const ocltune::Runtime& runtime) {
  ocltune::GemmCall c;
  c.trans_a = a.trans_a != 0;
  c.trans_b = a.trans_b != 0;
  c.m = a.m;
  c.n = a.n;
  c.k = a.k;
  c.batch = a.batch;
  c.alpha = a.alpha;
  c.beta = a.beta;
  c.a = a.a;
  c.b = a.b;
  c.c = a.c;
  c.a_offset = a.a_offset;
  c.b_offset = a.b_offset;
  c.c_offset = a.c_offset;
  c.lda = a.lda;
  c.ldb = a.ldb;
  c.ldc = a.ldc;
  c.stride_a = a.stride_a;
  c.stride_b = a.stride_b;
  c.stride_c = a.stride_c;
  c.tf32 = a.allow_tf32 != 0 && runtime.has_tf32_units();
  c.dtype = dtype_of(a.dtype, "gemm");
  return ocltune::Checked<ocltune::GemmCall>(std::move(c));  // check_gemm_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_gemm_args_init(ocltune_gemm_args* args, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            int64_t batch, cl_mem a, cl_mem b, cl_mem c) {
  if (!args) return;
  ocltune::GemmCall call;
  call.trans_a = trans_a != 0;
  call.trans_b = trans_b != 0;
  call.m = m;
  call.n = n;
  call.k = k;
  call.batch = batch;
  call.packed();
  *args = ocltune_gemm_args{};
  args->trans_a = call.trans_a;
  args->trans_b = call.trans_b;
  args->m = m;
  args->n = n;
  args->k = k;
  args->batch = batch;
  args->alpha = 1.0f;
  args->beta = 0.0f;
  args->a = a;
  args->b = b;
  args->c = c;
  args->lda = call.lda;
  args->ldb = call.ldb;
  args->ldc = call.ldc;
  args->stride_a = call.stride_a;
  args->stride_b = call.stride_b;
  args->stride_c = call.stride_c;
  args->dtype = OCLTUNE_DTYPE_FP32;
}

ocltune_status ocltune_gemm(ocltune_runtime runtime, cl_command_queue queue, const ocltune_gemm_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_gemm", runtime, queue, args, num_wait, wait, event, level,
      [&] { return to_call(*args, *runtime->runtime); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::gemm(rt, q, call, options);
      });
}

}  // extern "C"
