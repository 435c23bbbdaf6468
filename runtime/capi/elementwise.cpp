// The C ABI of elementwise ops (ocltune_operand, ocltune_elementwise_args, ocltune_elementwise).
#include "runtime/elementwise.h"

#include <utility>

#include "runtime/capi/capi_support.h"

using namespace ocltune::capi;

namespace {

ocltune::TensorOperand operand_of(const ocltune_operand& o) {
  ocltune::TensorOperand t;
  t.dims = dims_of(o.ndims, o.dims, 0);
  if (o.strided) t.strides.assign(o.strides, o.strides + o.ndims);
  return t;
}

ocltune::Checked<ocltune::ElementwiseCall> to_call(const ocltune_elementwise_args& a) {
  ocltune::ElementwiseCall c;
  c.shape.dtype = dtype_of(a.dtype, "elementwise");
  c.shape.input = operand_of(a.a);
  c.inputs[0] = a.a.tensor.buffer;
  c.input_offsets[0] = a.a.tensor.offset;
  if (a.op && std::string(a.op) != "copy") {
    const std::optional<ocltune::ElementwiseOp> op = ocltune::parse_elementwise_op(a.op);
    if (!op) throw ocltune::Error("elementwise: unknown op '" + std::string(a.op).substr(0, 32) + "'");
    ocltune::ElementwiseStep step{.op = *op};
    if (ocltune::is_binary(*op)) {
      step.reversed = a.reversed != 0;
      if (a.b.tensor.buffer) {
        step.tensor = operand_of(a.b);
        c.inputs[1] = a.b.tensor.buffer;
        c.input_offsets[1] = a.b.tensor.offset;
      } else {
        step.scalar = a.scalar;
      }
    }
    c.shape.steps.push_back(step);
  }
  c.output = a.out.buffer;
  c.output_offset = a.out.offset;
  return ocltune::Checked<ocltune::ElementwiseCall>(std::move(c));  // check_elementwise_call: the one check of the call
}

}  // namespace

extern "C" {

void ocltune_operand_init(ocltune_operand* operand, int ndims, const int64_t* dims, cl_mem buffer) {
  if (!operand) return;
  *operand = ocltune_operand{};
  operand->ndims = ndims;
  copy_dims(ndims, dims, operand->dims);
  operand->tensor.buffer = buffer;
}

void ocltune_elementwise_args_init(ocltune_elementwise_args* args, const char* op, int ndims, const int64_t* dims,
                                   cl_mem a, cl_mem out) {
  if (!args) return;
  *args = ocltune_elementwise_args{};
  args->op = op;
  ocltune_operand_init(&args->a, ndims, dims, a);
  args->out.buffer = out;
}

ocltune_status ocltune_elementwise(ocltune_runtime runtime, cl_command_queue queue,
                                   const ocltune_elementwise_args* args, cl_uint num_wait, const cl_event* wait,
                                   cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_elementwise", runtime, queue, args, num_wait, wait, event, level, [&] { return to_call(*args); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::elementwise(rt, q, call, options);
      });
}

}  // extern "C"
