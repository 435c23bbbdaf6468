// The C ABI of pooling (ocltune_pool_args, ocltune_pool).
#include "runtime/pool.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

ocltune::Checked<ocltune::PoolCall> to_call(const ocltune_pool_args& a) {
  ocltune::PoolCall c;
  ocltune::PoolShape& s = c.shape;
  s.kind = static_cast<ocltune::PoolKind>(a.kind);
  s.backward = a.backward != 0;
  s.n = a.n;
  s.c = a.c;
  s.h = a.h;
  s.w = a.w;
  s.kh = a.kernel_h;
  s.kw = a.kernel_w;
  s.sh = a.stride_h;
  s.sw = a.stride_w;
  s.ph = a.pad_h;
  s.pw = a.pad_w;
  s.ceil_mode = a.ceil_mode != 0;
  s.count_include_pad = a.count_include_pad != 0;
  s.indices = a.return_indices != 0;
  s.dtype = dtype_of(a.dtype, "pool");
  c.in = a.in;
  c.out = a.out;
  c.indices = a.indices;
  c.in_offset = a.in_offset;
  c.out_offset = a.out_offset;
  c.indices_offset = a.indices_offset;
  return ocltune::Checked<ocltune::PoolCall>(std::move(c));  // check_pool_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_pool_args_init(ocltune_pool_args* args, int kind, int backward, int64_t n, int64_t c, int64_t h, int64_t w,
                            int64_t kernel_h, int64_t kernel_w, cl_mem in, cl_mem out, cl_mem indices) {
  if (!args) return;
  *args = ocltune_pool_args{};
  args->kind = kind;
  args->backward = backward != 0;
  args->n = n;
  args->c = c;
  args->h = h;
  args->w = w;
  args->kernel_h = args->stride_h = kernel_h;
  args->kernel_w = args->stride_w = kernel_w;
  args->count_include_pad = 1;
  args->return_indices = kind == OCLTUNE_POOL_MAX;
  args->in = in;
  args->out = out;
  args->indices = indices;
}

ocltune_status ocltune_pool(ocltune_runtime runtime, cl_command_queue queue, const ocltune_pool_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_pool", runtime, queue, args, num_wait, wait, event, level, [&] { return to_call(*args); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::pool(rt, q, call, options);
      });
}

}  // extern "C"
