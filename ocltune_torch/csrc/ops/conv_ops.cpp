// convolution_overrideable and convolution_backward_overrideable (where PyTorch sends the convolutions
// of a PrivateUse1 device) through ocltune's conv2d family: 2-D and 1-D (as 2-D with H = 1), groups,
// depthwise, stride, padding, dilation, bias, and transposed convolutions as the family's other
// directions (a transposed forward is a backward-data, its input gradient a forward).
//
// The family computes dense NCHW in fp32, fp16 or bf16 storage: inputs are packed on the device
// first; fp16 / bf16 tensors go to it as they are, with no fp32 copies (it accumulates in fp32 and
// rounds each result once, as PyTorch's CPU kernels accumulate 16-bit convolutions in fp32 too), and
// outputs and gradients come out in the input's dtype. Mixed dtypes (a 16-bit input with an fp32
// weight or bias) go to the CPU path, which raises as PyTorch does. What it cannot take (other dtypes, 3-D
// convolutions, sizes beyond its ranges, an output_padding of a transposed convolution not below
// its stride) runs at::convolution on CPU copies, counted as a fallback: these two ops have no boxed
// fallback to reach (their default kernel raises).
//
// TF32: ocl's convolutions take PyTorch's permission for TF32 convolutions, cuDNN's switch
// (torch.backends.cudnn.allow_tf32, or torch.backends.cudnn.conv.fp32_precision; on by default), as
// cuda's do (docs/decisions/0048). The runtime then runs a tensor-core configuration where the device
// has TF32 units and its row is the faster one, an exact one elsewhere; torch.set_float32_matmul_precision
// governs the GEMMs only, as on cuda.
#include <array>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/device_math.h"
#include "ocltune_torch/csrc/ops/fused_activation.h"

namespace ocltune_torch {
namespace {

// The geometry of a convolution as the family sees it: 2-D, per-axis parameters.
struct ConvGeometry {
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1, groups = 1;
};

// The (H, W) values of one of PyTorch's per-axis lists (one value: both axes); for 1-D (spatial_dims
// 1) the H axis is the trivial one.
std::optional<std::array<std::int64_t, 2>> per_axis(c10::IntArrayRef v, std::int64_t spatial_dims,
                                                    std::int64_t trivial) {
  if (spatial_dims == 1) {
    if (v.size() != 1) return std::nullopt;
    return std::array<std::int64_t, 2>{trivial, v[0]};
  }
  if (v.size() == 1) return std::array<std::int64_t, 2>{v[0], v[0]};
  if (v.size() != 2) return std::nullopt;
  return std::array<std::int64_t, 2>{v[0], v[1]};
}

std::optional<ConvGeometry> geometry_of(std::int64_t spatial_dims, c10::IntArrayRef stride, c10::IntArrayRef padding,
                                        c10::IntArrayRef dilation, std::int64_t groups) {
  const auto st = per_axis(stride, spatial_dims, 1), pa = per_axis(padding, spatial_dims, 0);
  const auto di = per_axis(dilation, spatial_dims, 1);
  if (!st || !pa || !di) return std::nullopt;
  return ConvGeometry{(*st)[0], (*st)[1], (*pa)[0], (*pa)[1], (*di)[0], (*di)[1], groups};
}

bool within(std::int64_t v, std::int64_t lo, std::int64_t hi) { return v >= lo && v <= hi; }

// The ranges ocltune's conv2d call accepts (check_conv2d_call), on 4-D sizes: input [n, c, h, w],
// weight [k, c / groups, r, s]. Beyond them the op runs on the CPU.
bool family_takes(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k, std::int64_t r,
                  std::int64_t s, const ConvGeometry& g) {
  constexpr std::int64_t kMaxIndex = (std::int64_t{1} << 31) - 1;
  const bool ranges = within(n, 1, 65535) && within(c, 1, 1 << 20) && within(h, 1, 1 << 16) && within(w, 1, 1 << 16) &&
                      within(k, 1, 1 << 20) && within(r, 1, 64) && within(s, 1, 64) && within(g.stride_h, 1, 64) &&
                      within(g.stride_w, 1, 64) && within(g.pad_h, 0, 64) && within(g.pad_w, 0, 64) &&
                      within(g.dil_h, 1, 64) && within(g.dil_w, 1, 64) && within(g.groups, 1, 1 << 20);
  if (!ranges || c % g.groups != 0 || k % g.groups != 0) return false;
  if (h + 2 * g.pad_h < g.dil_h * (r - 1) + 1 || w + 2 * g.pad_w < g.dil_w * (s - 1) + 1) return false;
  const std::int64_t p = (h + 2 * g.pad_h - g.dil_h * (r - 1) - 1) / g.stride_h + 1;
  const std::int64_t q = (w + 2 * g.pad_w - g.dil_w * (s - 1) - 1) / g.stride_w + 1;
  return n * c * h * w <= kMaxIndex && k * (c / g.groups) * r * s <= kMaxIndex && n * k * p * q <= kMaxIndex;
}

// cuDNN's TF32 switch for convolutions, read as PyTorch's cuDNN convolutions read it in each torch
// version's API: allowTF32CuDNN() (before the fp32_precision settings), allowTF32CuDNN("conv") (their
// first, string form) or allowTF32CuDNN(Float32Op::CONV). Without naming the op, a torch with those
// settings warns that the call is deprecated and raises where conv and rnn were set apart.
template <typename Arg>
struct FirstArg {
  using type = Arg;
};
template <typename R, typename C, typename Arg>
FirstArg<std::decay_t<Arg>> first_arg_of(R (C::*)(Arg) const);
template <typename R, typename C>
FirstArg<void> first_arg_of(R (C::*)() const);

template <typename Arg, typename Context>
bool cudnn_conv_tf32(const Context& context) {
  if constexpr (std::is_void_v<Arg>) {
    return context.allowTF32CuDNN();
  } else if constexpr (std::is_same_v<Arg, std::string>) {
    return context.allowTF32CuDNN("conv");
  } else {
    return context.allowTF32CuDNN(Arg::value_type::CONV);
  }
}

bool allow_tf32() {
  using Arg = typename decltype(first_arg_of(&at::Context::allowTF32CuDNN))::type;
  return cudnn_conv_tf32<Arg>(at::globalContext());
}

// One call of the family on packed 4-D tensors of one dtype (fp32, fp16 or bf16): x [n, c, h, w],
// weight [k, c / groups, r, s], y [n, k, p, q], bias [k] (undefined: none). Which are read and which
// written is the direction's.
void run_conv2d(int direction, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& y,
                const at::Tensor& bias, const ConvGeometry& g, int activation = OCLTUNE_ACTIVATION_NONE) {
  ocltune_conv2d_args a;
  const ocltune_tensor tx = cl_tensor_of(x), tw = cl_tensor_of(weight), ty = cl_tensor_of(y);
  ocltune_conv2d_args_init(&a, direction, x.size(0), x.size(1), x.size(2), x.size(3), weight.size(0), weight.size(2),
                           weight.size(3), tx.buffer, tw.buffer, ty.buffer);
  a.input_offset = tx.offset;
  a.weight_offset = tw.offset;
  a.output_offset = ty.offset;
  a.stride_h = g.stride_h;
  a.stride_w = g.stride_w;
  a.pad_h = g.pad_h;
  a.pad_w = g.pad_w;
  a.dil_h = g.dil_h;
  a.dil_w = g.dil_w;
  a.groups = g.groups;
  if (bias.defined()) {
    const ocltune_tensor tb = cl_tensor_of(bias);
    a.has_bias = 1;
    a.bias = tb.buffer;
    a.bias_offset = tb.offset;
  }
  a.activation = activation;
  a.allow_tf32 = allow_tf32() ? 1 : 0;
  a.dtype = ocltune_dtype_of(x.scalar_type()).value();  // plan_conv took only the kernels' dtypes
  call_ocltune("conv2d", [&] { device_runtime(x.device().index()).conv2d(a); });
}

// 3-D (1-D convolution) tensors as 4-D with H = 1; 4-D ones as they are.
at::Tensor as_4d(const at::Tensor& t) { return t.dim() == 3 ? t.unsqueeze(2) : t; }
at::Tensor from_4d(const at::Tensor& t, std::int64_t dims) { return dims == 3 ? t.squeeze(2) : t; }

// PyTorch's output extent of one spatial axis.
std::int64_t output_extent(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad, std::int64_t dil,
                           bool transposed, std::int64_t output_padding) {
  if (transposed) return (in - 1) * stride - 2 * pad + dil * (k - 1) + output_padding + 1;
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

// Everything the family path needs, or nullopt for the CPU path.
struct ConvPlan {
  ConvGeometry g;
  std::int64_t dims = 4;                            // of the PyTorch tensors (3: conv1d)
  std::int64_t output_pad_h = 0, output_pad_w = 0;  // transposed
};

std::optional<ConvPlan> plan_conv(const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
                                  c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                                  c10::IntArrayRef output_padding, std::int64_t groups) {
  // One of the family's storage types for both (mixed dtypes: the CPU path, which raises).
  if (!kernel_dtype(input.scalar_type()) || weight.scalar_type() != input.scalar_type()) return std::nullopt;
  if ((input.dim() != 4 && input.dim() != 3) || weight.dim() != input.dim()) return std::nullopt;
  const std::optional<ConvGeometry> g = geometry_of(input.dim() - 2, stride, padding, dilation, groups);
  if (!g) return std::nullopt;
  ConvPlan plan{*g, input.dim(), 0, 0};
  if (transposed) {
    // The family's backward-data sizes the gradient from the output: an output_padding below the
    // stride is what floor((h + 2 pad - dil (r - 1) - 1) / stride) + 1 gives back.
    const auto op = per_axis(output_padding, input.dim() - 2, 0);
    if (!op || (*op)[0] < 0 || (*op)[1] < 0 || (*op)[0] >= g->stride_h || (*op)[1] >= g->stride_w) return std::nullopt;
    plan.output_pad_h = (*op)[0];
    plan.output_pad_w = (*op)[1];
  }
  return plan;
}

at::Tensor convolution_on_cpu(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                              c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                              bool transposed, c10::IntArrayRef output_padding, int64_t groups) {
  note_fallback("aten::convolution_overrideable");
  std::optional<at::Tensor> cpu_bias;
  if (bias && bias->defined()) cpu_bias = bias->cpu();
  return at::convolution(input.cpu(), weight.cpu(), cpu_bias, stride, padding, dilation, transposed, output_padding,
                         groups)
      .to(input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_on_cpu(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  note_fallback("aten::convolution_backward_overrideable");
  const std::vector<int64_t> bias_size = {grad_output.size(1)};
  at::OptionalIntArrayRef bias_sizes;
  if (output_mask[2]) bias_sizes = bias_size;
  const auto grads = at::convolution_backward(grad_output.cpu(), input.cpu(), weight.cpu(), bias_sizes, stride, padding,
                                              dilation, transposed, output_padding, groups, output_mask);
  const c10::Device device = input.device();
  auto back = [&](const at::Tensor& t) { return t.defined() ? t.to(device) : t; };
  return {back(std::get<0>(grads)), back(std::get<1>(grads)), back(std::get<2>(grads))};
}

bool family_takes_4d(const at::Tensor& x4, const at::Tensor& w4, const ConvGeometry& g) {
  return family_takes(x4.size(0), x4.size(1), x4.size(2), x4.size(3), w4.size(0), w4.size(2), w4.size(3), g);
}

// The activation by ATen ops, where the family's fused one does not run (the CPU path, transposed
// convolutions, no input channels).
at::Tensor activated(const at::Tensor& y, int activation) {
  switch (activation) {
    case OCLTUNE_ACTIVATION_RELU: return at::relu(y);
    case OCLTUNE_ACTIVATION_RELU6: return at::hardtanh(y, 0, 6);
    case OCLTUNE_ACTIVATION_GELU: return at::gelu(y);
    case OCLTUNE_ACTIVATION_SIGMOID: return at::sigmoid(y);
    default: return y;
  }
}

// convolution_overrideable, and with `activation` after the bias ocltune::conv2d_act: the family
// applies it in the convolution's own output pass (one kernel, one write of the output).
at::Tensor conv_forward_act(const at::Tensor& input, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias_opt, c10::IntArrayRef stride,
                            c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                            c10::IntArrayRef output_padding, int64_t groups, int activation) {
  check_ocl(input, "convolution", "input");
  check_same_device(input, weight, "convolution", "weight");
  const at::Tensor bias = bias_opt && bias_opt->defined() ? *bias_opt : at::Tensor();
  if (bias.defined()) check_same_device(input, bias, "convolution", "bias");
  const std::optional<ConvPlan> plan =
      plan_conv(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  if (!plan || (bias.defined() && bias.scalar_type() != input.scalar_type())) {
    return activated(
        convolution_on_cpu(input, weight, bias_opt, stride, padding, dilation, transposed, output_padding, groups),
        activation);
  }
  const ConvGeometry& g = plan->g;
  const at::Tensor x4 = as_4d(input).contiguous(), w4 = as_4d(weight).contiguous();
  const at::Tensor b = bias.defined() ? bias.contiguous() : at::Tensor();
  const std::int64_t n = x4.size(0);
  std::int64_t out_c = 0, out_h = 0, out_w = 0;
  if (!transposed) {
    out_c = w4.size(0);
    out_h = output_extent(x4.size(2), w4.size(2), g.stride_h, g.pad_h, g.dil_h, false, 0);
    out_w = output_extent(x4.size(3), w4.size(3), g.stride_w, g.pad_w, g.dil_w, false, 0);
  } else {
    out_c = w4.size(1) * groups;
    out_h = output_extent(x4.size(2), w4.size(2), g.stride_h, g.pad_h, g.dil_h, true, plan->output_pad_h);
    out_w = output_extent(x4.size(3), w4.size(3), g.stride_w, g.pad_w, g.dil_w, true, plan->output_pad_w);
  }
  at::Tensor out4 = at::empty({n, out_c, out_h, out_w}, x4.options());
  if (out4.numel() == 0) return from_4d(out4, plan->dims);
  if (x4.numel() == 0 || w4.numel() == 0) {  // no input channels or an empty filter: the bias alone
    out4.zero_();
    if (b.defined()) device_math::binary_into(out4, "add", out4, b.view({1, out_c, 1, 1}));
    return activated(from_4d(out4, plan->dims), activation);
  }
  if (!transposed) {
    if (!family_takes_4d(x4, w4, g)) {
      return activated(
          convolution_on_cpu(input, weight, bias_opt, stride, padding, dilation, transposed, output_padding, groups),
          activation);
    }
    run_conv2d(OCLTUNE_CONV_FORWARD, x4, w4, out4, b, g, activation);
  } else {
    if (!family_takes_4d(out4, w4, g)) {
      return activated(
          convolution_on_cpu(input, weight, bias_opt, stride, padding, dilation, transposed, output_padding, groups),
          activation);
    }
    // The family's backward-data writes its "input" (our output) from its "output" (our input).
    run_conv2d(OCLTUNE_CONV_BACKWARD_DATA, out4, w4, x4, at::Tensor(), g);
    if (b.defined()) device_math::binary_into(out4, "add", out4, b.view({1, out_c, 1, 1}));
    return activated(from_4d(out4, plan->dims), activation);
  }
  return from_4d(out4, plan->dims);
}

at::Tensor conv_forward(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias_opt,
                        c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                        c10::IntArrayRef output_padding, int64_t groups) {
  return conv_forward_act(input, weight, bias_opt, stride, padding, dilation, transposed, output_padding, groups,
                          OCLTUNE_ACTIVATION_NONE);
}

// ---- ocltune::conv2d_act: a convolution and its activation as one op (torch.compile's epilogue
// fusion, compiler.py) ----

std::vector<int64_t> no_output_padding(const at::Tensor& input) {
  return std::vector<int64_t>(static_cast<std::size_t>(std::max<int64_t>(input.dim() - 2, 1)), 0);
}

at::Tensor conv2d_act(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                      c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups,
                      c10::string_view activation) {
  const int act = fused_activation_code(activation, "ocltune::conv2d_act");
  return conv_forward_act(input, weight, bias, stride, padding, dilation, false, no_output_padding(input), groups, act);
}

// Fake tensors (torch.compile traces with them): the convolution's own meta function sizes the result.
at::Tensor conv2d_act_meta(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups,
                           c10::string_view activation) {
  fused_activation_code(activation, "ocltune::conv2d_act");
  return at::convolution(input, weight, bias, stride, padding, dilation, false, no_output_padding(input), groups);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> conv_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                                             const at::Tensor& weight, c10::IntArrayRef stride,
                                                             c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                                             bool transposed, c10::IntArrayRef output_padding,
                                                             int64_t groups, std::array<bool, 3> output_mask) {
  check_ocl(grad_output, "convolution_backward", "grad_output");
  check_same_device(grad_output, input, "convolution_backward", "input");
  check_same_device(grad_output, weight, "convolution_backward", "weight");
  const std::optional<ConvPlan> plan =
      plan_conv(input, weight, stride, padding, dilation, transposed, output_padding, groups);
  auto on_cpu = [&] {
    return convolution_backward_on_cpu(grad_output, input, weight, stride, padding, dilation, transposed,
                                       output_padding, groups, output_mask);
  };
  if (!plan || grad_output.scalar_type() != input.scalar_type() || grad_output.dim() != input.dim()) return on_cpu();
  const ConvGeometry& g = plan->g;
  const at::Tensor x4 = as_4d(input).contiguous(), w4 = as_4d(weight).contiguous();
  const at::Tensor dy4 = as_4d(grad_output).contiguous();
  // In the family's roles: fx is its input, fy its output (swapped for a transposed convolution).
  const at::Tensor& fx = transposed ? dy4 : x4;
  const at::Tensor& fy = transposed ? x4 : dy4;
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) grad_input = at::empty(x4.sizes(), x4.options());
  if (output_mask[1]) grad_weight = at::empty(w4.sizes(), w4.options());
  if (output_mask[2]) grad_bias = at::empty({dy4.size(1)}, dy4.options());
  const bool empty = fx.numel() == 0 || fy.numel() == 0 || w4.numel() == 0;
  if (!empty && !family_takes_4d(fx, w4, g)) return on_cpu();
  if (empty) {
    for (at::Tensor* t : {&grad_input, &grad_weight, &grad_bias}) {
      if (t->defined()) t->zero_();
    }
    if (grad_bias.defined() && dy4.numel() > 0) grad_bias = device_math::sum(dy4, {0, 2, 3}, false);
  } else {
    if (grad_input.defined()) {
      // Not transposed: the input gradient is the backward-data. Transposed: it is the forward
      // convolution of the output gradient by the same weight.
      if (!transposed) {
        run_conv2d(OCLTUNE_CONV_BACKWARD_DATA, grad_input, w4, dy4, at::Tensor(), g);
      } else {
        run_conv2d(OCLTUNE_CONV_FORWARD, dy4, w4, grad_input, at::Tensor(), g);
      }
    }
    // The family's backward-weight writes the bias gradient with the weight's (a sum of its y);
    // for a transposed convolution the bias belongs to its x, summed here.
    const bool fused_bias = grad_bias.defined() && !transposed;
    if (grad_weight.defined()) {
      run_conv2d(OCLTUNE_CONV_BACKWARD_WEIGHT, fx, grad_weight, fy, fused_bias ? grad_bias : at::Tensor(), g);
    }
    if (grad_bias.defined() && (!fused_bias || !grad_weight.defined())) {
      grad_bias = device_math::sum(dy4, {0, 2, 3}, false);
    }
  }
  if (grad_input.defined()) grad_input = from_4d(grad_input, plan->dims);
  if (grad_weight.defined()) grad_weight = from_4d(grad_weight, plan->dims);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", conv_forward);
  m.impl("convolution_backward_overrideable", conv_backward);
}

TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  // Whether ocl's convolutions may use TF32 now (cuDNN's switch, as PyTorch reads it for cuda's).
  m.def("conv_tf32_allowed() -> bool", &allow_tf32);
  m.def(
      "conv2d_act(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, "
      "str activation) -> Tensor");
}

TORCH_LIBRARY_IMPL(ocltune, PrivateUse1, m) { m.impl("conv2d_act", &conv2d_act); }
TORCH_LIBRARY_IMPL(ocltune, Meta, m) { m.impl("conv2d_act", &conv2d_act_meta); }

}  // namespace ocltune_torch
