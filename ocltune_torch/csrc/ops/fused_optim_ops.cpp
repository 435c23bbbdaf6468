// torch._fused_adam_, _fused_adamw_ and _fused_sgd_ (and their .tensor_lr overloads): what
// torch.optim's Adam, AdamW and SGD call with fused=True, on the plain kernels of
// plain/kernels/plain_optim.cl. One launch updates one parameter tensor, its gradient and its state; the
// foreach form of the same step (foreach_ops.cpp) launches about 12 per tensor (issue 21).
//
// The step counts, a tensor lr on the device, grad_scale and found_inf are read by the kernels, so a
// step never waits for the device. The functional and out= overloads are PyTorch's composites over
// these. Parameters in float32, float16 and bfloat16 of any strides; the gradient and state of each
// tensor in its parameter's dtype, as PyTorch's CPU kernels require. Other dtypes (float64) take the
// CPU fallback, counted.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {
namespace {

// The flag bits of plain/kernels/plain_optim.cl.
constexpr int kAmsgrad = 1;
constexpr int kMaximize = 2;
constexpr int kLrTensor = 4;
constexpr int kGradScale = 8;
constexpr int kFoundInf = 16;
constexpr int kAdamW = 32;
constexpr int kNesterov = 64;
constexpr int kFirstStep = 128;
constexpr int kWeightDecay = 256;
constexpr int kMomentum = 512;
constexpr int kBlocked = 1024;

// The program of plain/kernels/plain_optim.cl for a parameter dtype and a step dtype on a device, remembered
// for the tensors of a call that have the same (plain_program's lookup builds its key text each time).
class OptimProgram {
 public:
  cl_program get(int device, at::ScalarType param, at::ScalarType step) {
    if (!program_ || device != device_ || param != param_ || step != step_) {
      fp64_ = plain_float64(device);  // the bias corrections in double, as PyTorch's CPU kernel computes them
      cpu_ = plain_cpu_device(device);
      program_ = plain_program(device, "plain_optim.cl", {{"P", param}, {"S", step}},
                               fp64_ ? "#define OPTIM_FP64 1\n" : "#define OPTIM_FP64 0\n");
      device_ = device;
      param_ = param;
      step_ = step;
    }
    return program_;
  }
  bool fp64() const { return fp64_; }  // of the last get()
  int blocked() const { return cpu_ ? kBlocked : 0; }

 private:
  cl_program program_ = nullptr;
  int device_ = -1;
  at::ScalarType param_ = at::kFloat, step_ = at::kFloat;
  bool fp64_ = false;
  bool cpu_ = false;
};

// A scalar of the kernels' `real` type: double with OPTIM_FP64, else float.
void real_arg(PlainLaunch& launch, bool fp64, double value) {
  if (fp64) {
    launch.arg<cl_double>(value);
  } else {
    launch.arg<cl_float>(static_cast<float>(value));
  }
}

// The lr of a .tensor_lr overload: a CPU tensor is read here (no device to wait for), as the CPU
// kernel reads it (item<double>); an ocl one is read by the kernel, as float32.
struct Lr {
  double value = 0;
  at::Tensor tensor;  // defined: on the device
};

Lr lr_of(double value) { return Lr{value, {}}; }

Lr lr_of(const at::Tensor& lr) {
  TORCH_CHECK(lr.numel() == 1, "ocltune_torch: a tensor lr must have one element, got ", lr.numel());
  if (!is_ocl(lr)) return Lr{lr.item<double>(), {}};
  return Lr{0, lr.scalar_type() == at::kFloat ? lr : lr.to(at::kFloat)};
}

// An optional one-element float32 tensor (grad_scale, found_inf, a tensor lr) on `like`'s device: a
// copy where it is elsewhere (torch.optim moves them to the parameters' device first).
at::Tensor on_device(const at::Tensor& t, const at::Tensor& like, const char* what) {
  if (!t.defined()) return t;
  TORCH_CHECK(t.numel() == 1, "ocltune_torch: ", what, " must have one element, got ", t.numel());
  at::Tensor r = t.device() == like.device() ? t : t.to(like.device());
  return r.scalar_type() == at::kFloat ? r : r.to(at::kFloat);
}

// The buffer and element offset of an optional tensor, or of `like` (never read: its flag is off).
void optional_at(PlainLaunch& launch, const at::Tensor& t, const at::Tensor& like) {
  launch.tensor_at(t.defined() ? t : like);
}

bool float_params(at::TensorList params) {
  for (const at::Tensor& p : params) {
    const at::ScalarType t = p.scalar_type();
    if (t != at::kFloat && t != at::kHalf && t != at::kBFloat16) return false;
  }
  return true;
}

// Raises unless t is on p's device, of p's dtype and sizes (what the CPU kernels assume).
void check_like(const char* op, const at::Tensor& p, const at::Tensor& t, const char* what) {
  check_same_device(p, t, op, what);
  TORCH_CHECK(t.scalar_type() == p.scalar_type(), "ocltune_torch: ", op, ": ", what, " is ", t.scalar_type(),
              " where its parameter is ", p.scalar_type(), " (the fused optimisers take one dtype per tensor)");
  TORCH_CHECK(t.sizes() == p.sizes(), "ocltune_torch: ", op, ": ", what, " has sizes ", t.sizes(),
              " where its parameter has ", p.sizes());
}

// The per-device copies of grad_scale, found_inf and a tensor lr, made once per call.
struct DeviceScalars {
  at::Tensor lr, grad_scale, found_inf;
};

class ScalarsPerDevice {
 public:
  ScalarsPerDevice(const Lr& lr, const std::optional<at::Tensor>& grad_scale,
                   const std::optional<at::Tensor>& found_inf)
      : lr_(lr.tensor), grad_scale_(grad_scale.value_or(at::Tensor())), found_inf_(found_inf.value_or(at::Tensor())) {}

  const DeviceScalars& of(const at::Tensor& p) {
    const int device = p.device().index();
    auto it = copies_.find(device);
    if (it != copies_.end()) return it->second;
    DeviceScalars s{on_device(lr_, p, "lr"), on_device(grad_scale_, p, "grad_scale"),
                    on_device(found_inf_, p, "found_inf")};
    return copies_.emplace(device, std::move(s)).first->second;
  }

 private:
  at::Tensor lr_, grad_scale_, found_inf_;
  std::map<int, DeviceScalars> copies_;
};

// True when every operand of the layout is dense in one order (merged to one dim of stride 1, or no
// dim): the kernels' _dense forms then index element i at offset + i.
bool dense(const PlainLayout& layout) {
  if (layout.shape.ndim == 0) return true;
  if (layout.shape.ndim > 1) return false;
  for (const KernelStrides& s : layout.operands) {
    if (s.strides[0] != 1) return false;
  }
  return true;
}

void fused_adam(const char* op, at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, const Lr& lr,
                double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf, bool adamw) {
  const std::size_t n = params.size();
  TORCH_CHECK(grads.size() == n, op, ": ", grads.size(), " grads for ", n, " params");
  TORCH_CHECK(exp_avgs.size() == n, op, ": ", exp_avgs.size(), " exp_avgs for ", n, " params");
  TORCH_CHECK(exp_avg_sqs.size() == n, op, ": ", exp_avg_sqs.size(), " exp_avg_sqs for ", n, " params");
  if (amsgrad) {
    TORCH_CHECK(max_exp_avg_sqs.size() == n, op, ": ", max_exp_avg_sqs.size(), " max_exp_avg_sqs for ", n,
                " params with amsgrad");
  } else {
    TORCH_CHECK(max_exp_avg_sqs.empty(), op, ": max_exp_avg_sqs must be empty without amsgrad");
  }
  TORCH_CHECK(state_steps.size() == n, op, ": ", state_steps.size(), " state_steps for ", n, " params");
  ScalarsPerDevice scalars(lr, grad_scale, found_inf);
  OptimProgram programs;
  PlainLaunchCache launches;
  int flags = (amsgrad ? kAmsgrad : 0) | (maximize ? kMaximize : 0) | (adamw ? kAdamW : 0) |
              (weight_decay != 0 ? kWeightDecay : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const at::Tensor& p = params[i];
    check_ocl(p, op, "self");
    const at::Tensor& g = grads[i];
    const at::Tensor& m = exp_avgs[i];
    const at::Tensor& v = exp_avg_sqs[i];
    const at::Tensor& x = amsgrad ? max_exp_avg_sqs[i] : m;
    check_like(op, p, g, "grads");
    check_like(op, p, m, "exp_avgs");
    check_like(op, p, v, "exp_avg_sqs");
    check_like(op, p, x, "max_exp_avg_sqs");
    TORCH_CHECK(state_steps[i].numel() == 1, op, ": a state step must have one element, got ", state_steps[i].numel());
    if (p.numel() == 0) continue;
    at::Tensor step = state_steps[i].device() == p.device() ? state_steps[i] : state_steps[i].to(p.device());
    if (!plain_dtype(step.scalar_type())) step = step.to(at::kFloat);
    for (const at::Tensor* t : {&p, &m, &v, &x}) at::assert_no_internal_overlap(*t);
    const DeviceScalars& s = scalars.of(p);
    if (s.grad_scale.defined()) at::assert_no_internal_overlap(g);
    const int device = p.device().index();
    const PlainLayout layout = plain_layout(p.sizes(), {&p, &g, &m, &v, &x});
    const cl_program program = programs.get(device, p.scalar_type(), step.scalar_type());
    const bool fp64 = programs.fp64();
    const int all_flags = flags | programs.blocked() | (s.lr.defined() ? kLrTensor : 0) |
                          (s.grad_scale.defined() ? kGradScale : 0) | (s.found_inf.defined() ? kFoundInf : 0);
    PlainLaunch& launch = launches.get(device, program,
                                       !dense(layout) ? "fused_adam"
                                       : amsgrad      ? "fused_adam_dense_amsgrad"
                                                      : "fused_adam_dense");
    launch.arg(layout.shape);
    launch.tensor(p).arg(layout.operands[0]).tensor(g).arg(layout.operands[1]);
    launch.tensor(m).arg(layout.operands[2]).tensor(v).arg(layout.operands[3]);
    launch.tensor(x).arg(layout.operands[4]);
    launch.tensor_at(step);
    optional_at(launch, s.lr, p);
    optional_at(launch, s.grad_scale, p);
    optional_at(launch, s.found_inf, p);
    real_arg(launch, fp64, lr.value);
    real_arg(launch, fp64, beta1);
    real_arg(launch, fp64, beta2);
    real_arg(launch, fp64, weight_decay);
    real_arg(launch, fp64, eps);
    launch.arg<cl_int>(all_flags);
    launch.run(layout.shape.numel);
  }
}

void fused_sgd(const char* op, at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers,
               double weight_decay, double momentum, const Lr& lr, double dampening, bool nesterov, bool maximize,
               bool is_first_step, const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  const std::size_t n = params.size();
  TORCH_CHECK(grads.size() == n, op, ": ", grads.size(), " grads for ", n, " params");
  const bool has_momentum = momentum != 0.0;
  if (has_momentum) {
    TORCH_CHECK(momentum_buffers.size() == n, op, ": ", momentum_buffers.size(), " momentum buffers for ", n,
                " params");
  } else {
    TORCH_CHECK(momentum_buffers.empty(), op, ": momentum_buffer_list must be empty without momentum");
  }
  ScalarsPerDevice scalars(lr, grad_scale, found_inf);
  OptimProgram programs;
  PlainLaunchCache launches;
  const int flags = (maximize ? kMaximize : 0) | (nesterov ? kNesterov : 0) | (is_first_step ? kFirstStep : 0) |
                    (weight_decay != 0.0 ? kWeightDecay : 0) | (has_momentum ? kMomentum : 0);
  for (std::size_t i = 0; i < n; ++i) {
    const at::Tensor& p = params[i];
    check_ocl(p, op, "self");
    const at::Tensor& g = grads[i];
    const at::Tensor& b = has_momentum ? momentum_buffers[i] : p;
    check_like(op, p, g, "grads");
    check_like(op, p, b, "momentum_buffer_list");
    if (p.numel() == 0) continue;
    at::assert_no_internal_overlap(p);
    at::assert_no_internal_overlap(b);
    const DeviceScalars& s = scalars.of(p);
    if (s.grad_scale.defined()) at::assert_no_internal_overlap(g);
    const int device = p.device().index();
    const PlainLayout layout = plain_layout(p.sizes(), {&p, &g, &b});
    // S is unused by fused_sgd; the program is the Adam kernels' of the same P.
    const cl_program program = programs.get(device, p.scalar_type(), at::kFloat);
    const int all_flags = flags | programs.blocked() | (s.lr.defined() ? kLrTensor : 0) |
                          (s.grad_scale.defined() ? kGradScale : 0) | (s.found_inf.defined() ? kFoundInf : 0);
    PlainLaunch& launch = launches.get(device, program,
                                       !dense(layout) ? "fused_sgd"
                                       : has_momentum ? "fused_sgd_dense_momentum"
                                                      : "fused_sgd_dense");
    launch.arg(layout.shape);
    launch.tensor(p).arg(layout.operands[0]).tensor(g).arg(layout.operands[1]).tensor(b).arg(layout.operands[2]);
    optional_at(launch, s.lr, p);
    optional_at(launch, s.grad_scale, p);
    optional_at(launch, s.found_inf, p);
    // Each scalar rounded to float as the CPU kernel rounds it (1 - dampening in double first).
    launch.arg<cl_float>(static_cast<float>(lr.value));
    launch.arg<cl_float>(static_cast<float>(weight_decay));
    launch.arg<cl_float>(static_cast<float>(momentum));
    launch.arg<cl_float>(static_cast<float>(1.0 - dampening));
    launch.arg<cl_int>(all_flags);
    launch.run(layout.shape.numel);
  }
}

// ---- the registered overloads ----

// Op is the ATEN_OP of the overload (its name for messages, its fallback), LrArg double or a tensor.
template <class Op, bool AdamW, class LrArg>
void adam_entry(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                at::TensorList max_exp_avg_sqs, at::TensorList state_steps, LrArg lr, double beta1, double beta2,
                double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  if (!float_params(self)) {
    return fallback<Op>::call(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2,
                              weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
  }
  fused_adam(Op::name, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr_of(lr), beta1, beta2,
             weight_decay, eps, amsgrad, maximize, grad_scale, found_inf, AdamW);
}

template <class Op, class LrArg>
void sgd_entry(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double weight_decay,
               double momentum, LrArg lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
               const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  if (!float_params(self)) {
    return fallback<Op>::call(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov,
                              maximize, is_first_step, grad_scale, found_inf);
  }
  fused_sgd(Op::name, self, grads, momentum_buffer_list, weight_decay, momentum, lr_of(lr), dampening, nesterov,
            maximize, is_first_step, grad_scale, found_inf);
}

}  // namespace

// The in-place overloads of torch 2.11 and 2.15 (their schemas are the same); the functional and
// out= overloads are CompositeExplicitAutograd over these.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using Tensor = const at::Tensor&;
  m.impl("_fused_adam_", adam_entry<ATEN_OP(_fused_adam_), false, double>);
  m.impl("_fused_adam_.tensor_lr", adam_entry<ATEN_OP(_fused_adam__tensor_lr), false, Tensor>);
  m.impl("_fused_adamw_", adam_entry<ATEN_OP(_fused_adamw_), true, double>);
  m.impl("_fused_adamw_.tensor_lr", adam_entry<ATEN_OP(_fused_adamw__tensor_lr), true, Tensor>);
  m.impl("_fused_sgd_", sgd_entry<ATEN_OP(_fused_sgd_), double>);
  m.impl("_fused_sgd_.tensor_lr", sgd_entry<ATEN_OP(_fused_sgd__tensor_lr), Tensor>);
}

}  // namespace ocltune_torch
