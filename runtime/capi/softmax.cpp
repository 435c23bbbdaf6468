// The C ABI of softmax and log_softmax (ocltune_softmax_args, ocltune_softmax).
#include "runtime/softmax.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

ocltune::Checked<ocltune::SoftmaxCall> to_call(const ocltune_softmax_args& a) {
  ocltune::SoftmaxCall c;
  c.shape.dtype = dtype_of(a.dtype, "softmax");
  c.shape.dims = dims_of(a.ndims, a.dims, 1);
  c.shape.axis = a.axis;
  c.shape.log = a.log != 0;
  c.input = a.input.buffer;
  c.input_offset = a.input.offset;
  c.output = a.output.buffer;
  c.output_offset = a.output.offset;
  return ocltune::Checked<ocltune::SoftmaxCall>(std::move(c));  // check_softmax_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_softmax_args_init(ocltune_softmax_args* args, int ndims, const int64_t* dims, int axis, cl_mem input,
                               cl_mem output) {
  if (!args) return;
  *args = ocltune_softmax_args{};
  args->ndims = ndims;
  copy_dims(ndims, dims, args->dims);
  args->axis = axis;
  args->input.buffer = input;
  args->output.buffer = output;
}

ocltune_status ocltune_softmax(ocltune_runtime runtime, cl_command_queue queue, const ocltune_softmax_args* args,
                               cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_softmax", runtime, queue, args, num_wait, wait, event, level, [&] { return to_call(*args); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::softmax(rt, q, call, options);
      });
}

}  // extern "C"
