// Fused optimiser steps (torch._fused_adam_, _fused_adamw_, _fused_sgd_): one launch updates one
// parameter tensor, its gradient and its state in one pass, where the `_foreach_*` form of the same
// step launches about 12 kernels per tensor.
//
// The arithmetic is PyTorch's CPU fused kernels' (aten/src/ATen/native/cpu/FusedAdamKernel.cpp and
// FusedSGDKernel.cpp), operation for operation, so results agree with CPU fused=True to the bit
// where the device's sqrt and division are correctly rounded: values are computed in float (their
// opmath type) and each state is rounded once when stored; the fmas are where the CPU's vectorised
// loop has them (explicit vec::fmadd, and the a * b + c its compiler contracts, which
// ocltune_torch/tests/test_fused_optim.py pins down). FP_CONTRACT is off so that no other
// expression is fused.
//
// Slots: P (the parameter, its gradient and its state: the fused ops take one dtype per tensor),
// S (the step count of Adam, a tensor on the device: it is read here so the host never waits).
// Optional tensors (lr, grad_scale, found_inf: float32) come with a flag bit; when not given, the
// buffer is any buffer and never read. A found_inf of 1 leaves everything unchanged, as on CPU.
//
// OPTIM_FP64 (defined by the host, 1 when the device has cl_khr_fp64): the scalars of type `real`
// come as double and the bias corrections are computed in double as on CPU; 0: in float (close, not
// exact).

#pragma OPENCL FP_CONTRACT OFF

#if OPTIM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

// The flags' bits.
#define OPTIM_AMSGRAD 1
#define OPTIM_MAXIMIZE 2
#define OPTIM_LR_TENSOR 4
#define OPTIM_GRAD_SCALE 8
#define OPTIM_FOUND_INF 16
#define OPTIM_ADAMW 32
#define OPTIM_NESTEROV 64
#define OPTIM_FIRST_STEP 128
#define OPTIM_WEIGHT_DECAY 256  // weight_decay != 0 (and SGD's momentum != 0), decided in double as on CPU
#define OPTIM_MOMENTUM 512
#define OPTIM_BLOCKED 1024  // a CPU device: each work item takes one contiguous block of elements

// The element indices of a dense kernel's work item: on a GPU every global-size-th one from its id (a
// warp reads consecutive elements), on a CPU (OPTIM_BLOCKED) one contiguous block, an inner loop of
// unit stride the compiler vectorises.
#define FOR_EACH_DENSE_INDEX(i, n, flags)                                                             \
  const long per_item_ = ((flags) & OPTIM_BLOCKED) ? ((n) + get_global_size(0) - 1) / get_global_size(0) : 1; \
  const long first_ = ((flags) & OPTIM_BLOCKED) ? get_global_id(0) * per_item_ : get_global_id(0);          \
  const long step_ = ((flags) & OPTIM_BLOCKED) ? 1 : get_global_size(0);                                   \
  const long end_ = ((flags) & OPTIM_BLOCKED) ? min(first_ + per_item_, (long)(n)) : (long)(n);            \
  for (long i = first_; i < end_; i += step_)

// at::vec::maximum: NaN if either is NaN (fmax would drop it).
inline float maximum_nan(float a, float b) { return isnan(a) || isnan(b) ? NAN : fmax(a, b); }

// Nothing changes when the step had an inf or NaN gradient (the AMP grad scaler's verdict).
inline bool skipped(const int flags, global const float* found_inf, const long found_at) {
  return (flags & OPTIM_FOUND_INF) && found_inf[found_at] == 1.0f;
}

// The scalars of an Adam step, exactly as the CPU kernel derives them: in double (real), each rounded
// to float once.
typedef struct {
  float neg_step_size, bias_correction2_sqrt, w1, w2, b2, wd, decay, eps, scale;
} AdamScalars;

inline AdamScalars adam_scalars(const real lr, const float step, const real beta1, const real beta2,
                                const real weight_decay, const real eps, const float scale) {
  const real t = (real)step;  // state_step.item<float>()
  const real bias_correction1 = 1 - pow(beta1, t);
  const real bias_correction2 = 1 - pow(beta2, t);
  AdamScalars k;
  k.neg_step_size = (float)(-(lr / bias_correction1));
  k.bias_correction2_sqrt = (float)sqrt(bias_correction2);
  k.w1 = (float)(1 - beta1);
  k.w2 = (float)(1 - beta2);
  k.b2 = (float)beta2;
  k.wd = (float)weight_decay;
  k.decay = (float)(1 - lr * weight_decay);
  k.eps = (float)eps;
  k.scale = scale;
  return k;
}

// One element of an Adam or AdamW step (OPTIM_ADAMW: decoupled weight decay). max_exp_avg_sq is read
// and written with OPTIM_AMSGRAD only, grad written (divided by grad_scale) with OPTIM_GRAD_SCALE.
inline void adam_element(global P_S* param, const long p_at, global P_S* grad, const long g_at, global P_S* exp_avg,
                         const long m_at, global P_S* exp_avg_sq, const long v_at, global P_S* max_exp_avg_sq,
                         const long x_at, const AdamScalars* k, const int flags) {
  float p = P_LOAD(param, p_at);
  float g = P_LOAD(grad, g_at);
  if (flags & OPTIM_GRAD_SCALE) {
    g = g / k->scale;
    P_STORE(grad, g_at, g);
  }
  if (flags & OPTIM_MAXIMIZE) g = -g;
  if (flags & OPTIM_WEIGHT_DECAY) {
    if (flags & OPTIM_ADAMW) {
      p = p * k->decay;
    } else {
      g = fma(p, k->wd, g);
    }
  }
  // exp_avg.lerp_(grad, 1 - beta1), in the form of PyTorch's lerp for the weight's range.
  float m = P_LOAD(exp_avg, m_at);
  m = fabs(k->w1) < 0.5f ? fma(k->w1, g - m, m) : fma(k->w1 - 1.0f, g - m, g);
  const float v = fma(k->w2 * g, g, P_LOAD(exp_avg_sq, v_at) * k->b2);
  P_STORE(exp_avg, m_at, m);
  P_STORE(exp_avg_sq, v_at, v);
  float d = v;
  if (flags & OPTIM_AMSGRAD) {
    d = maximum_nan(P_LOAD(max_exp_avg_sq, x_at), v);
    P_STORE(max_exp_avg_sq, x_at, d);
  }
  const float denom = sqrt(d) / k->bias_correction2_sqrt + k->eps;
  p = p + k->neg_step_size * m / denom;
  P_STORE(param, p_at, p);
}

#define ADAM_ARGS                                                                                                    \
  const Shape sh, global P_S *param, const Strides ps, global P_S *grad, const Strides gs, global P_S *exp_avg,      \
      const Strides ms, global P_S *exp_avg_sq, const Strides vs, global P_S *max_exp_avg_sq, const Strides xs,      \
      global const S_S *step, const long step_at, global const float *lr_tensor, const long lr_at,                  \
      global const float *grad_scale, const long scale_at, global const float *found_inf, const long found_at,      \
      const real lr_value, const real beta1, const real beta2, const real weight_decay, const real eps,              \
      const int flags

// The scalars once per work-group (two pows in double per work item would cost more than the
// elements of a small tensor on a CPU device). Every work item of a group returns or none does.
#define ADAM_SCALARS                                                                                                 \
  if (skipped(flags, found_inf, found_at)) return;                                                                   \
  local AdamScalars shared;                                                                                          \
  if (get_local_id(0) == 0) {                                                                                        \
    shared = adam_scalars((flags & OPTIM_LR_TENSOR) ? (real)lr_tensor[lr_at] : lr_value,                             \
                          (float)S_LOAD(step, step_at), beta1, beta2, weight_decay, eps,                             \
                          (flags & OPTIM_GRAD_SCALE) ? grad_scale[scale_at] : 1.0f);                                 \
  }                                                                                                                  \
  barrier(CLK_LOCAL_MEM_FENCE);                                                                                      \
  const AdamScalars k = shared;

// One Adam step of one tensor of any strides.
kernel void fused_adam(ADAM_ARGS) {
  ADAM_SCALARS
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    adam_element(param, offset_of(&ps, c, sh.ndim), grad, offset_of(&gs, c, sh.ndim), exp_avg,
                 offset_of(&ms, c, sh.ndim), exp_avg_sq, offset_of(&vs, c, sh.ndim), max_exp_avg_sq,
                 (flags & OPTIM_AMSGRAD) ? offset_of(&xs, c, sh.ndim) : 0, &k, flags);
  }
}

// The same where every operand is dense in one order (the host merged them to one dim of stride 1, or
// none): element i of each is at its offset + i, with no index arithmetic in the loop. AMSGRAD is
// part of the kernel (fused_adam_dense_amsgrad), not a flag, so that without it the compiler does
// not see max_exp_avg_sq (the host passes exp_avg there, and a possible alias would keep a CPU
// device's loop from being vectorised).
#define ADAM_DENSE(NAME, AMSGRAD)                                                                          \
  kernel void NAME(ADAM_ARGS) {                                                                            \
    ADAM_SCALARS                                                                                           \
    const int f = AMSGRAD ? (flags | OPTIM_AMSGRAD) : (flags & ~OPTIM_AMSGRAD);                            \
    FOR_EACH_DENSE_INDEX(i, sh.numel, flags) {                                                             \
      adam_element(param, ps.offset + i, grad, gs.offset + i, exp_avg, ms.offset + i, exp_avg_sq,          \
                   vs.offset + i, max_exp_avg_sq, xs.offset + i, &k, f);                                   \
    }                                                                                                      \
  }
ADAM_DENSE(fused_adam_dense, 0)
ADAM_DENSE(fused_adam_dense_amsgrad, 1)

// One element of an SGD step. momentum_buffer is read and written with OPTIM_MOMENTUM; with
// OPTIM_FIRST_STEP it is only written (it holds the gradient). All scalars are float: the CPU kernel
// rounds each to float before using it (one_minus_dampening is 1 - dampening rounded on the host).
inline void sgd_element(global P_S* param, const long p_at, global P_S* grad, const long g_at,
                        global P_S* momentum_buffer, const long b_at, const float neg_lr, const float scale,
                        const float weight_decay, const float momentum, const float one_minus_dampening,
                        const int flags) {
  const float p = P_LOAD(param, p_at);
  float g = P_LOAD(grad, g_at);
  if (flags & OPTIM_GRAD_SCALE) {
    g = g / scale;
    P_STORE(grad, g_at, g);
  }
  if (flags & OPTIM_MAXIMIZE) g = -g;
  if (flags & OPTIM_WEIGHT_DECAY) g = fma(p, weight_decay, g);
  if (flags & OPTIM_MOMENTUM) {
    const float b =
        (flags & OPTIM_FIRST_STEP) ? g : fma(one_minus_dampening, g, P_LOAD(momentum_buffer, b_at) * momentum);
    P_STORE(momentum_buffer, b_at, b);
    g = (flags & OPTIM_NESTEROV) ? fma(b, momentum, g) : b;
  }
  P_STORE(param, p_at, fma(g, neg_lr, p));
}

#define SGD_ARGS                                                                                                     \
  const Shape sh, global P_S *param, const Strides ps, global P_S *grad, const Strides gs,                          \
      global P_S *momentum_buffer, const Strides bs, global const float *lr_tensor, const long lr_at,               \
      global const float *grad_scale, const long scale_at, global const float *found_inf, const long found_at,      \
      const float lr_value, const float weight_decay, const float momentum, const float one_minus_dampening,         \
      const int flags

#define SGD_SCALARS                                                                                                  \
  if (skipped(flags, found_inf, found_at)) return;                                                                   \
  const float neg_lr = -((flags & OPTIM_LR_TENSOR) ? lr_tensor[lr_at] : lr_value);                                   \
  const float scale = (flags & OPTIM_GRAD_SCALE) ? grad_scale[scale_at] : 1.0f;

// One SGD step of one tensor of any strides.
kernel void fused_sgd(SGD_ARGS) {
  SGD_SCALARS
  FOR_EACH_INDEX(i, sh.numel) {
    long c[MAX_DIMS];
    coords_of(&sh, i, c);
    sgd_element(param, offset_of(&ps, c, sh.ndim), grad, offset_of(&gs, c, sh.ndim), momentum_buffer,
                (flags & OPTIM_MOMENTUM) ? offset_of(&bs, c, sh.ndim) : 0, neg_lr, scale, weight_decay, momentum,
                one_minus_dampening, flags);
  }
}

// The same on dense operands (see fused_adam_dense; MOMENTUM likewise, the host passes param as the
// momentum buffer without it).
#define SGD_DENSE(NAME, MOMENTUM)                                                                          \
  kernel void NAME(SGD_ARGS) {                                                                             \
    SGD_SCALARS                                                                                            \
    const int f = MOMENTUM ? (flags | OPTIM_MOMENTUM) : (flags & ~OPTIM_MOMENTUM);                         \
    FOR_EACH_DENSE_INDEX(i, sh.numel, flags) {                                                             \
      sgd_element(param, ps.offset + i, grad, gs.offset + i, momentum_buffer, bs.offset + i, neg_lr, scale, \
                  weight_decay, momentum, one_minus_dampening, f);                                         \
    }                                                                                                      \
  }
SGD_DENSE(fused_sgd_dense, 0)
SGD_DENSE(fused_sgd_dense_momentum, 1)
