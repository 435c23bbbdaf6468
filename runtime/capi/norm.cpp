// The C ABI of layer and batch normalisation (ocltune_norm_args, ocltune_norm).
#include "runtime/norm.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

ocltune::NormBuffer norm_buffer(const ocltune_tensor& t) { return {t.buffer, t.offset}; }

ocltune::Checked<ocltune::NormCall> to_call(const ocltune_norm_args& a) {
  ocltune::NormCall c;
  if (!a.kind) throw ocltune::Error("norm: kind is NULL");
  c.shape.kind = ocltune::parse_norm_kind(a.kind);
  c.shape.dtype = dtype_of(a.dtype, "norm");
  c.shape.dims = dims_of(a.ndims, a.dims, 1);
  c.shape.axis = a.axis;
  c.shape.eps = a.eps;
  c.shape.momentum = a.momentum;
  c.x = norm_buffer(a.x);
  c.dy = norm_buffer(a.dy);
  c.gamma = norm_buffer(a.gamma);
  c.beta = norm_buffer(a.beta);
  c.mean = norm_buffer(a.mean);
  c.rstd = norm_buffer(a.rstd);
  c.running_mean = norm_buffer(a.running_mean);
  c.running_var = norm_buffer(a.running_var);
  c.y = norm_buffer(a.y);
  c.dx = norm_buffer(a.dx);
  c.dgamma = norm_buffer(a.dgamma);
  c.dbeta = norm_buffer(a.dbeta);
  PrologueArgs prologue = prologue_of(a.prologue, "norm");
  c.shape.prologue = std::move(prologue.prologue);
  c.prologue = std::move(prologue.buffers);
  return ocltune::Checked<ocltune::NormCall>(std::move(c));  // check_norm_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_norm_args_init(ocltune_norm_args* args, const char* kind, int ndims, const int64_t* dims) {
  if (!args) return;
  *args = ocltune_norm_args{};
  const ocltune::NormShape defaults;
  args->kind = kind;
  args->ndims = ndims;
  copy_dims(ndims, dims, args->dims);
  args->axis = ndims - 1;
  args->eps = defaults.eps;
  args->momentum = defaults.momentum;
}

ocltune_status ocltune_norm(ocltune_runtime runtime, cl_command_queue queue, const ocltune_norm_args* args,
                            cl_uint num_wait, const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_norm", runtime, queue, args, num_wait, wait, event, level, [&] { return to_call(*args); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::norm(rt, q, call, options);
      });
}

}  // extern "C"
