// The C ABI of conv2d (ocltune_conv2d_args, ocltune_conv2d).
#include "runtime/conv2d.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

// The call `a` describes on `runtime`'s device, checked. TF32 allowed where the device has no such
// units is the exact call.
ocltune::Checked<ocltune::Conv2dCall> to_call(const ocltune_conv2d_args& a, const ocltune::Runtime& runtime) {
  ocltune::Conv2dCall c;
  ocltune::Conv2dShape& s = c.shape;
  s.dir = static_cast<ocltune::ConvDirection>(a.direction);
  s.n = a.n;
  s.c = a.c;
  s.h = a.h;
  s.w = a.w;
  s.k = a.k;
  s.r = a.r;
  s.s = a.s;
  s.stride_h = a.stride_h;
  s.stride_w = a.stride_w;
  s.pad_h = a.pad_h;
  s.pad_w = a.pad_w;
  s.dil_h = a.dil_h;
  s.dil_w = a.dil_w;
  s.groups = a.groups;
  s.bias = a.has_bias != 0;
  s.act = static_cast<ocltune::Activation>(a.activation);
  s.dtype = static_cast<ocltune::DType>(a.dtype);  // an unknown code is refused by the check
  s.math = runtime.call_math(a.allow_tf32 != 0, s.dtype);
  c.input = a.input;
  c.weight = a.weight;
  c.output = a.output;
  c.bias = a.bias;
  c.input_offset = a.input_offset;
  c.weight_offset = a.weight_offset;
  c.output_offset = a.output_offset;
  c.bias_offset = a.bias_offset;
  return ocltune::Checked<ocltune::Conv2dCall>(std::move(c));  // check_conv2d_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_conv2d_args_init(ocltune_conv2d_args* args, int direction, int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t k, int64_t r, int64_t s, cl_mem input, cl_mem weight, cl_mem output) {
  if (!args) return;
  *args = ocltune_conv2d_args{};
  args->direction = direction;
  args->n = n;
  args->c = c;
  args->h = h;
  args->w = w;
  args->k = k;
  args->r = r;
  args->s = s;
  args->stride_h = args->stride_w = 1;
  args->dil_h = args->dil_w = 1;
  args->groups = 1;
  args->activation = OCLTUNE_ACTIVATION_NONE;
  args->dtype = OCLTUNE_DTYPE_FP32;
  args->input = input;
  args->weight = weight;
  args->output = output;
}

ocltune_status ocltune_conv2d(ocltune_runtime runtime, cl_command_queue queue, const ocltune_conv2d_args* args,
                              cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_conv2d", runtime, queue, args, num_wait, wait, event, level,
      [&] { return to_call(*args, *runtime->runtime); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::conv2d(rt, q, call, options);
      });
}

}  // extern "C"
