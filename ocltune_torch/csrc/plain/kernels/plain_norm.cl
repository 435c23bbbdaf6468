// Eval-mode batch norm (csrc/ops/norm_ops.cpp): y = x * alpha[c] + beta[c] with alpha = weight / sqrt(var +
// eps) and beta = bias - mean * alpha, in float and rounded once to y's type, as PyTorch's CPU kernel
// (batch_norm_cpu_inference) computes it. It was eight launches of elementwise ops (the per-channel
// scale and shift, then two passes over x): 8.5 of mobilenet_v2's 15.6 ms of inference on the H200.
// Nothing in it is worth tuning: one read and one write of each element.
//
// Slots: A (x), O (y; x's type), S (mean and var), W (weight and bias): fp32, fp16 or bf16 (autocast
// keeps the statistics and weights fp32 with 16-bit x). x and y are contiguous [N, C, L] (L = 1 for
// [N, C]) of fewer than 2^31 elements (the host's limit); has_weight / has_bias 0: the host passes
// another buffer that is never read.

#define BN_ARGS                                                                                           \
  global const S_S *mean, global const S_S *var, const float eps, global const W_S *weight, const int has_weight, \
      global const W_S *bias, const int has_bias

inline void bn_affine(const long c, BN_ARGS, float* alpha, float* beta) {
  float a = 1.0f / sqrt((float)S_LOAD(var, c) + eps);
  if (has_weight) a *= (float)W_LOAD(weight, c);
  *alpha = a;
  *beta = (has_bias ? (float)W_LOAD(bias, c) : 0.0f) - (float)S_LOAD(mean, c) * a;
}

// An eval batch norm folded into the convolution before it (torch.compile, compiler.py): with
// bn_affine's alpha and beta of output channel k, w'[k, ...] = w[k, ...] * alpha and
// b'[k] = conv_bias[k] * alpha + beta, so that conv(x, w') + b' is the batch norm of conv(x, w) +
// conv_bias. A (the convolution's weight and bias), O (their folded copies). One work item per
// weight element; the first element of each channel's run also writes the channel's bias.
kernel void fold_batch_norm(const long count, const long per_channel, const float eps, global const A_S* w_base,
                            const long w_at, global const A_S* conv_bias_base, const long conv_bias_at,
                            const int has_conv_bias, global const S_S* mean_base, const long mean_at,
                            global const S_S* var_base, const long var_at, global const W_S* weight_base,
                            const long weight_at, const int has_weight, global const W_S* bias_base,
                            const long bias_at, const int has_bias, global O_S* w_out_base, const long w_out_at,
                            global O_S* b_out_base, const long b_out_at) {
  global const A_S* w = w_base + w_at;
  global O_S* w_out = w_out_base + w_out_at;
  global O_S* b_out = b_out_base + b_out_at;
  FOR_EACH_INDEX(i, count) {
    const long c = i / per_channel;
    float alpha, beta;
    bn_affine(c, mean_base + mean_at, var_base + var_at, eps, weight_base + weight_at, has_weight,
              bias_base + bias_at, has_bias, &alpha, &beta);
    O_STORE(w_out, i, TO_O((float)A_LOAD(w, i) * alpha));
    if (i % per_channel == 0) {
      const float conv_bias = has_conv_bias ? (float)A_LOAD(conv_bias_base + conv_bias_at, c) : 0.0f;
      O_STORE(b_out, c, TO_O(conv_bias * alpha + beta));
    }
  }
}

kernel void batch_norm_eval(const long count, const long channels, const long plane, const float eps,
                            global const A_S* x_base, const long x_at, global const S_S* mean_base,
                            const long mean_at, global const S_S* var_base, const long var_at,
                            global const W_S* weight_base, const long weight_at, const int has_weight,
                            global const W_S* bias_base, const long bias_at, const int has_bias,
                            global O_S* y_base, const long y_at) {
  global const A_S* x = x_base + x_at;
  global O_S* y = y_base + y_at;
#define BN_PARAMS mean_base + mean_at, var_base + var_at, eps, weight_base + weight_at, has_weight, bias_base + bias_at, has_bias
  float alpha, beta;
#ifdef PLAIN_CPU
  // One contiguous block per work item (as FOR_EACH_INDEX): a channel's run of the block at a time,
  // one division per run and a loop the compiler vectorises.
  const long per_item = (count + (long)get_global_size(0) - 1) / (long)get_global_size(0);
  long i = get_global_id(0) * per_item;
  const long end = min(count, i + per_item);
  while (i < end) {
    const long row = i / plane, stop = min(end, (row + 1) * plane);
    bn_affine(row % channels, BN_PARAMS, &alpha, &beta);
    for (; i < stop; ++i) O_STORE(y, i, TO_O((float)A_LOAD(x, i) * alpha + beta));
  }
#else
  FOR_EACH_INDEX(i, count) {
    const uint c = ((uint)i / (uint)plane) % (uint)channels;  // 32-bit: count < 2^31
    bn_affine(c, BN_PARAMS, &alpha, &beta);
    O_STORE(y, i, TO_O((float)A_LOAD(x, i) * alpha + beta));
  }
#endif
#undef BN_PARAMS
}
