// The C ABI of elementwise ops (ocltune_operand, ocltune_elementwise_args, ocltune_elementwise) and of
// fused chains (ocltune_elementwise_chain_args, ocltune_elementwise_chain).
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

// Appends one step (op by name; a binary op's tensor or scalar operand) to the call.
void add_step(ocltune::ElementwiseCall& c, const char* name, const ocltune_operand& operand, float scalar,
              int reversed) {
  if (!name) throw ocltune::Error("elementwise: a step without an op");
  const std::optional<ocltune::ElementwiseOp> op = ocltune::parse_elementwise_op(name);
  if (!op) {
    // The name as printable ASCII: a caller's garbage bytes would otherwise make the message
    // invalid UTF-8, which Python turns into an empty RuntimeError.
    std::string shown = std::string(name).substr(0, 32);
    for (char& ch : shown) {
      if (ch < 0x20 || ch > 0x7e) ch = '?';
    }
    throw ocltune::Error("elementwise: unknown op '" + shown + "'");
  }
  ocltune::ElementwiseStep step{.op = *op};
  if (ocltune::is_binary(*op)) {
    step.reversed = reversed != 0;
    if (operand.tensor.buffer) {
      const std::size_t slot = c.shape.tensors().size();  // the input, then each earlier step's tensor
      if (slot >= ocltune::ElementwiseCall::kMaxTensors) throw ocltune::Error("elementwise: too many tensors");
      step.tensor = operand_of(operand);
      c.inputs[slot] = operand.tensor.buffer;
      c.input_offsets[slot] = operand.tensor.offset;
    } else {
      step.scalar = scalar;
    }
  }
  c.shape.steps.push_back(step);
}

ocltune::ElementwiseCall call_on(int dtype, const ocltune_operand& input, const ocltune_tensor& out) {
  ocltune::ElementwiseCall c;
  c.shape.dtype = dtype_of(dtype, "elementwise");
  c.shape.input = operand_of(input);
  c.inputs[0] = input.tensor.buffer;
  c.input_offsets[0] = input.tensor.offset;
  c.output = out.buffer;
  c.output_offset = out.offset;
  return c;
}

ocltune::Checked<ocltune::ElementwiseCall> to_call(const ocltune_elementwise_args& a) {
  ocltune::ElementwiseCall c = call_on(a.dtype, a.a, a.out);
  if (a.op && std::string(a.op) != "copy") add_step(c, a.op, a.b, a.scalar, a.reversed);
  return ocltune::Checked<ocltune::ElementwiseCall>(std::move(c));  // check_elementwise_call: the one check of the call
}

ocltune::Checked<ocltune::ElementwiseCall> to_call(const ocltune_elementwise_chain_args& a) {
  if (a.nsteps < 0 || a.nsteps > OCLTUNE_ELEMENTWISE_MAX_STEPS) {
    throw ocltune::Error("elementwise chain: nsteps " + std::to_string(a.nsteps) + " is not in 0.." +
                         std::to_string(OCLTUNE_ELEMENTWISE_MAX_STEPS));
  }
  ocltune::ElementwiseCall c = call_on(a.dtype, a.input, a.out);
  for (int i = 0; i < a.nsteps; ++i)
    add_step(c, a.steps[i].op, a.steps[i].operand, a.steps[i].scalar, a.steps[i].reversed);
  return ocltune::Checked<ocltune::ElementwiseCall>(std::move(c));
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

ocltune_status ocltune_elementwise_chain(ocltune_runtime runtime, cl_command_queue queue,
                                         const ocltune_elementwise_chain_args* args, cl_uint num_wait,
                                         const cl_event* wait, cl_event* event, ocltune_level* level) {
  return dispatch_call(
      "ocltune_elementwise_chain", runtime, queue, args, num_wait, wait, event, level, [&] { return to_call(*args); },
      [](auto& rt, cl_command_queue q, const auto& call, const auto& options) {
        return ocltune::ops::elementwise(rt, q, call, options);
      });
}

}  // extern "C"
