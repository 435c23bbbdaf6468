// The C ABI of GEMM (ocltune_gemm_args, ocltune_gemm).
#include "runtime/gemm.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

// The call `a` describes on `runtime`'s device, checked. TF32 allowed where the device has no such
// units, or for 16-bit tensors, is the exact call (call_math).
ocltune::Checked<ocltune::GemmCall> to_call(const ocltune_gemm_args& a, const ocltune::Runtime& runtime) {
  ocltune::GemmCall c{.shape = {.m = a.m,
                                .n = a.n,
                                .k = a.k,
                                .batch = a.batch,
                                .trans_a = a.trans_a != 0,
                                .trans_b = a.trans_b != 0,
                                .alpha = a.alpha,
                                .beta = a.beta,
                                .math = ocltune::MathMode::kExact,
                                .dtype = dtype_of(a.dtype, "gemm"),
                                .bias = a.has_bias != 0,
                                .act = static_cast<ocltune::Activation>(a.activation)},
                      .a = a.a,
                      .b = a.b,
                      .c = a.c,
                      .a_offset = a.a_offset,
                      .b_offset = a.b_offset,
                      .c_offset = a.c_offset,
                      .lda = a.lda,
                      .ldb = a.ldb,
                      .ldc = a.ldc,
                      .stride_a = a.stride_a,
                      .stride_b = a.stride_b,
                      .stride_c = a.stride_c,
                      .bias = a.has_bias != 0 ? a.bias : nullptr,
                      .bias_offset = a.bias_offset};
  c.shape.math = runtime.call_math(a.allow_tf32 != 0, c.shape.dtype);
  return ocltune::Checked<ocltune::GemmCall>(std::move(c));  // check_gemm_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_gemm_args_init(ocltune_gemm_args* args, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            int64_t batch, cl_mem a, cl_mem b, cl_mem c) {
  if (!args) return;
  ocltune::GemmCall packed{
      .shape = {.m = m, .n = n, .k = k, .batch = batch, .trans_a = trans_a != 0, .trans_b = trans_b != 0}};
  packed.packed();
  *args = ocltune_gemm_args{};
  args->trans_a = trans_a != 0;
  args->trans_b = trans_b != 0;
  args->m = m;
  args->n = n;
  args->k = k;
  args->batch = batch;
  args->alpha = 1.0f;
  args->beta = 0.0f;
  args->a = a;
  args->b = b;
  args->c = c;
  args->lda = packed.lda;
  args->ldb = packed.ldb;
  args->ldc = packed.ldc;
  args->stride_a = packed.stride_a;
  args->stride_b = packed.stride_b;
  args->stride_c = packed.stride_c;
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
