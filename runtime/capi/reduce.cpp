// The C ABI of reductions (ocltune_reduce_args, ocltune_reduce).
#include "runtime/reduce.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

ocltune::Checked<ocltune::ReduceCall> to_call(const ocltune_reduce_args& a) {
  ocltune::ReduceCall c;
  if (!a.kind) throw ocltune::Error("reduce: kind is NULL");
  c.shape.kind = ocltune::parse_reduce_kind(a.kind);
  c.shape.dtype = dtype_of(a.dtype, "reduce");
  c.shape.dims = dims_of(a.ndims, a.dims, 1);
  if (a.num_axes < 0 || a.num_axes > OCLTUNE_MAX_DIMS) throw ocltune::Error("reduce: num_axes must be in 0..4");
  c.shape.axes.assign(a.axes, a.axes + a.num_axes);
  c.shape.keepdim = a.keepdim != 0;
  c.input = a.input.buffer;
  c.input_offset = a.input.offset;
  c.output = a.output.buffer;
  c.output_offset = a.output.offset;
  PrologueArgs prologue = prologue_of(a.prologue, "reduce");
  c.shape.prologue = std::move(prologue.prologue);
  c.prologue = std::move(prologue.buffers);
  return ocltune::Checked<ocltune::ReduceCall>(std::move(c));  // check_reduce_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_reduce_args_init(ocltune_reduce_args* args, const char* kind, int ndims, const int64_t* dims, int num_axes,
                              const int* axes, cl_mem input, cl_mem output) {
  if (!args) return;
  *args = ocltune_reduce_args{};
  args->kind = kind;
  args->ndims = ndims;
  copy_dims(ndims, dims, args->dims);
  args->num_axes = num_axes;
  for (int i = 0; axes && i < num_axes && i < OCLTUNE_MAX_DIMS; ++i) args->axes[i] = axes[i];
  args->input.buffer = input;
  args->output.buffer = output;
}

ocltune_status ocltune_reduce(ocltune_runtime runtime, cl_command_queue queue, const ocltune_reduce_args* args,
                              cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_reduce", runtime, queue, args, num_wait, wait, event, level, [&] { return to_call(*args); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::reduce(rt, q, call, options);
      });
}

}  // extern "C"
