// The fused LSTM and GRU cells and their backward: _thnn_fused_lstm_cell,
// _thnn_fused_lstm_cell_backward_impl, _thnn_fused_gru_cell and _thnn_fused_gru_cell_backward, one
// plain kernel each (plain/kernels/plain_rnn.cl).
//
// Off the CPU, PyTorch's LSTM and GRU cells (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell: the
// CompositeImplicitAutograd lstm/gru ops of aten/src/ATen/native/RNN.cpp) compute the input and
// hidden gates with two matmuls and call these for the rest of each step; the CPU has no kernel for
// them, so without these every step failed in strict mode and could not fall back either. Autograd
// hands the forward's workspace to the backward (derivatives.yaml), so its layout is this file's and
// the kernels' own: see plain_rnn.cl. _thnn_fused_lstm_cell_backward (both gate gradients and the
// bias gradients) is PyTorch's composite over _thnn_fused_lstm_cell_backward_impl.
//
// fp32, fp16 and bf16, every tensor of one dtype (as CUDA's kernels take them), computed in fp32 and
// rounded once per result; the bias gradients are sums over the batch through the reduce family.
// Inputs of any strides are made contiguous on the device first.
#include <cstdint>
#include <optional>
#include <tuple>

#include <ATen/ATen.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

namespace dm = device_math;

at::Tensor defined_or_empty(const std::optional<at::Tensor>& t) { return t && t->defined() ? *t : at::Tensor(); }

// Checks t (defined): an ocl tensor on first's device, of first's dtype, with `sizes`.
void check_operand(const at::Tensor& first, const at::Tensor& t, at::IntArrayRef sizes, const char* op,
                   const char* arg) {
  check_ocl(t, op, arg);
  check_same_device(first, t, op, arg);
  TORCH_CHECK(t.scalar_type() == first.scalar_type(), "ocltune_torch: ", op, ": expected ", arg, " of dtype ",
              first.scalar_type(), ", got ", t.scalar_type());
  TORCH_CHECK(t.sizes() == sizes, "ocltune_torch: ", op, ": expected ", arg, " of size ", sizes, ", got ", t.sizes());
}

void check_rnn_dtype(const at::Tensor& t, const char* op) {
  TORCH_CHECK(kernel_dtype(t.scalar_type()), "ocltune_torch: ", op, " takes float32, float16 or bfloat16, got ",
              t.scalar_type());
}

// The checks the forward cells share: input_gates and hidden_gates [B, gates * H], the previous state
// (cx or hx) [B, H], both biases [gates * H] or neither. Returns H.
std::int64_t check_cell(const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& state,
                        const at::Tensor& input_bias, const at::Tensor& hidden_bias, std::int64_t gates, const char* op,
                        const char* state_name) {
  check_ocl(input_gates, op, "input_gates");
  check_rnn_dtype(input_gates, op);
  TORCH_CHECK(input_gates.dim() == 2, "ocltune_torch: ", op, ": expected input_gates of 2 dims, got ",
              input_gates.dim());
  const std::int64_t batch = input_gates.size(0), width = input_gates.size(1);
  TORCH_CHECK(width % gates == 0, "ocltune_torch: ", op, ": input_gates' size(1) (", width, ") is no multiple of ",
              gates);
  const std::int64_t hidden = width / gates;
  check_operand(input_gates, hidden_gates, input_gates.sizes(), op, "hidden_gates");
  check_operand(input_gates, state, {batch, hidden}, op, state_name);
  TORCH_CHECK(input_bias.defined() == hidden_bias.defined(), "ocltune_torch: ", op,
              ": expected both input_bias and hidden_bias or neither");
  if (input_bias.defined()) {
    check_operand(input_gates, input_bias, {width}, op, "input_bias");
    check_operand(input_gates, hidden_bias, {width}, op, "hidden_bias");
  }
  return hidden;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell(const at::Tensor& input_gates_in,
                                                         const at::Tensor& hidden_gates_in, const at::Tensor& cx_in,
                                                         const std::optional<at::Tensor>& input_bias_opt,
                                                         const std::optional<at::Tensor>& hidden_bias_opt) {
  constexpr const char* op = "_thnn_fused_lstm_cell";
  const at::Tensor input_bias_in = defined_or_empty(input_bias_opt);
  const at::Tensor hidden_bias_in = defined_or_empty(hidden_bias_opt);
  const std::int64_t hidden =
      check_cell(input_gates_in, hidden_gates_in, cx_in, input_bias_in, hidden_bias_in, 4, op, "cx");
  const std::int64_t batch = input_gates_in.size(0);
  const at::TensorOptions options = input_gates_in.options();
  at::Tensor hy = at::empty({batch, hidden}, options), cy = at::empty({batch, hidden}, options);
  at::Tensor workspace = at::empty({batch, 4 * hidden}, options);
  if (hy.numel() == 0) return {hy, cy, workspace};
  const at::Tensor input_gates = input_gates_in.contiguous(), hidden_gates = hidden_gates_in.contiguous();
  const at::Tensor cx = cx_in.contiguous();
  const bool has_bias = input_bias_in.defined();
  const at::Tensor input_bias = has_bias ? input_bias_in.contiguous() : cx;
  const at::Tensor hidden_bias = has_bias ? hidden_bias_in.contiguous() : cx;
  const int device = input_gates.device().index();
  cl_program program = plain_program(device, "plain_rnn.cl", {{"A", input_gates.scalar_type()}});
  PlainLaunch launch(device, program, "lstm_cell_forward");
  launch.arg<cl_long>(hy.numel()).arg<cl_long>(hidden).tensor_at(input_gates).tensor_at(hidden_gates).tensor_at(cx);
  launch.tensor_at(input_bias).tensor_at(hidden_bias).arg<cl_int>(has_bias ? 1 : 0);
  launch.tensor_at(hy).tensor_at(cy).tensor_at(workspace).run(hy.numel());
  return {hy, cy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_cell_backward(const std::optional<at::Tensor>& grad_hy_opt,
                                                                  const std::optional<at::Tensor>& grad_cy_opt,
                                                                  const at::Tensor& cx_in, const at::Tensor& cy_in,
                                                                  const at::Tensor& workspace_in, bool has_bias) {
  constexpr const char* op = "_thnn_fused_lstm_cell_backward_impl";
  const at::Tensor grad_hy_in = defined_or_empty(grad_hy_opt), grad_cy_in = defined_or_empty(grad_cy_opt);
  if (!grad_hy_in.defined() && !grad_cy_in.defined()) return {};  // no gradient flows: PyTorch's answer
  check_ocl(workspace_in, op, "workspace");
  check_rnn_dtype(workspace_in, op);
  TORCH_CHECK(workspace_in.dim() == 2 && workspace_in.size(1) % 4 == 0, "ocltune_torch: ", op,
              ": expected a workspace [batch, 4 * hidden], got ", workspace_in.sizes());
  const std::int64_t batch = workspace_in.size(0), hidden = workspace_in.size(1) / 4;
  const std::int64_t state[2] = {batch, hidden};
  if (grad_hy_in.defined()) check_operand(workspace_in, grad_hy_in, state, op, "grad_hy");
  if (grad_cy_in.defined()) check_operand(workspace_in, grad_cy_in, state, op, "grad_cy");
  check_operand(workspace_in, cx_in, state, op, "cx");
  check_operand(workspace_in, cy_in, state, op, "cy");
  const at::TensorOptions options = workspace_in.options();
  at::Tensor grad_gates = at::empty({batch, 4 * hidden}, options), grad_cx = at::empty({batch, hidden}, options);
  if (grad_cx.numel() > 0) {
    const at::Tensor workspace = workspace_in.contiguous(), cx = cx_in.contiguous(), cy = cy_in.contiguous();
    const at::Tensor grad_hy = grad_hy_in.defined() ? grad_hy_in.contiguous() : cx;
    const at::Tensor grad_cy = grad_cy_in.defined() ? grad_cy_in.contiguous() : cx;
    const int device = workspace.device().index();
    cl_program program = plain_program(device, "plain_rnn.cl", {{"A", workspace.scalar_type()}});
    PlainLaunch launch(device, program, "lstm_cell_backward");
    launch.arg<cl_long>(grad_cx.numel()).arg<cl_long>(hidden);
    launch.tensor_at(grad_hy).arg<cl_int>(grad_hy_in.defined() ? 1 : 0);
    launch.tensor_at(grad_cy).arg<cl_int>(grad_cy_in.defined() ? 1 : 0);
    launch.tensor_at(cx).tensor_at(cy).tensor_at(workspace).tensor_at(grad_gates).tensor_at(grad_cx);
    launch.run(grad_cx.numel());
  } else {
    grad_gates.zero_();
    grad_cx.zero_();
  }
  at::Tensor grad_bias = has_bias ? dm::sum(grad_gates, {0}, false) : at::Tensor();
  return {grad_gates, grad_cx, grad_bias};
}

constexpr std::int64_t kGruWorkspaceGates = 5;  // r, z, n, hx, hn + b_hn (plain_rnn.cl)

std::tuple<at::Tensor, at::Tensor> gru_cell(const at::Tensor& input_gates_in, const at::Tensor& hidden_gates_in,
                                            const at::Tensor& hx_in, const std::optional<at::Tensor>& input_bias_opt,
                                            const std::optional<at::Tensor>& hidden_bias_opt) {
  constexpr const char* op = "_thnn_fused_gru_cell";
  const at::Tensor input_bias_in = defined_or_empty(input_bias_opt);
  const at::Tensor hidden_bias_in = defined_or_empty(hidden_bias_opt);
  const std::int64_t hidden =
      check_cell(input_gates_in, hidden_gates_in, hx_in, input_bias_in, hidden_bias_in, 3, op, "hx");
  const std::int64_t batch = input_gates_in.size(0);
  const at::TensorOptions options = input_gates_in.options();
  at::Tensor hy = at::empty({batch, hidden}, options);
  at::Tensor workspace = at::empty({batch, kGruWorkspaceGates * hidden}, options);
  if (hy.numel() == 0) return {hy, workspace};
  const at::Tensor input_gates = input_gates_in.contiguous(), hidden_gates = hidden_gates_in.contiguous();
  const at::Tensor hx = hx_in.contiguous();
  const bool has_bias = input_bias_in.defined();
  const at::Tensor input_bias = has_bias ? input_bias_in.contiguous() : hx;
  const at::Tensor hidden_bias = has_bias ? hidden_bias_in.contiguous() : hx;
  const int device = input_gates.device().index();
  cl_program program = plain_program(device, "plain_rnn.cl", {{"A", input_gates.scalar_type()}});
  PlainLaunch launch(device, program, "gru_cell_forward");
  launch.arg<cl_long>(hy.numel()).arg<cl_long>(hidden).tensor_at(input_gates).tensor_at(hidden_gates).tensor_at(hx);
  launch.tensor_at(input_bias).tensor_at(hidden_bias).arg<cl_int>(has_bias ? 1 : 0);
  launch.tensor_at(hy).tensor_at(workspace).run(hy.numel());
  return {hy, workspace};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> gru_cell_backward(const at::Tensor& grad_hy_in,
                                                                                         const at::Tensor& workspace_in,
                                                                                         bool has_bias) {
  constexpr const char* op = "_thnn_fused_gru_cell_backward";
  check_ocl(workspace_in, op, "workspace");
  check_rnn_dtype(workspace_in, op);
  TORCH_CHECK(workspace_in.dim() == 2 && workspace_in.size(1) % kGruWorkspaceGates == 0, "ocltune_torch: ", op,
              ": expected a workspace [batch, 5 * hidden], got ", workspace_in.sizes());
  const std::int64_t batch = workspace_in.size(0), hidden = workspace_in.size(1) / kGruWorkspaceGates;
  check_operand(workspace_in, grad_hy_in, {batch, hidden}, op, "grad_hy");
  const at::TensorOptions options = workspace_in.options();
  at::Tensor grad_input_gates = at::empty({batch, 3 * hidden}, options);
  at::Tensor grad_hidden_gates = at::empty({batch, 3 * hidden}, options);
  at::Tensor grad_hx = at::empty({batch, hidden}, options);
  if (grad_hx.numel() > 0) {
    const at::Tensor workspace = workspace_in.contiguous(), grad_hy = grad_hy_in.contiguous();
    const int device = workspace.device().index();
    cl_program program = plain_program(device, "plain_rnn.cl", {{"A", workspace.scalar_type()}});
    PlainLaunch launch(device, program, "gru_cell_backward");
    launch.arg<cl_long>(grad_hx.numel()).arg<cl_long>(hidden).tensor_at(grad_hy).tensor_at(workspace);
    launch.tensor_at(grad_input_gates).tensor_at(grad_hidden_gates).tensor_at(grad_hx).run(grad_hx.numel());
  } else {
    grad_input_gates.zero_();
    grad_hidden_gates.zero_();
    grad_hx.zero_();
  }
  at::Tensor grad_input_bias, grad_hidden_bias;
  if (has_bias) {
    grad_input_bias = dm::sum(grad_input_gates, {0}, false);
    grad_hidden_bias = dm::sum(grad_hidden_gates, {0}, false);
  }
  return {grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, grad_hidden_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_thnn_fused_lstm_cell", lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", gru_cell_backward);
}

}  // namespace ocltune_torch
