// The elementwise family's ops as macros over fp32 values of the includer's type floatV (a vector of
// VW floats, or float): the fused chains of elementwise.cl and the prologues of prologue.cl compute
// the same expressions. Files: storage.cl, [reduce_vec.cl,] elementwise_ops.cl, then the user.

// ---- Ops (a: the running value or a reversed operand, b: the other operand; unary ops ignore b) ----
// PyTorch semantics: NaN propagates through relu, relu6, maximum and minimum; IEEE elsewhere.
#define OP_RELU(a, b) select((a), (floatV)0.0f, (a) < (floatV)0.0f)
#define OP_RELU6(a, b) select(OP_RELU(a, b), (floatV)6.0f, (a) > (floatV)6.0f)
#define OP_GELU(a, b) (0.5f * (a) * (1.0f + erf((a) * 0.70710678118654752f)))
// 0.5 a (1 + tanh(w)) as a / (1 + exp(-2w)): no cancellation for negative a, and +Inf stays +Inf.
#define OP_GELU_TANH(a, b) ((a) / (1.0f + exp(-1.5957691216057307f * ((a) + 0.044715f * (a) * (a) * (a)))))
#define OP_SILU(a, b) ((a) / (1.0f + exp(-(a))))
#define OP_SIGMOID(a, b) (1.0f / (1.0f + exp(-(a))))
#define OP_TANH(a, b) tanh(a)
#define OP_EXP(a, b) exp(a)
#define OP_LOG(a, b) log(a)
#define OP_SQRT(a, b) sqrt(a)
#define OP_RSQRT(a, b) rsqrt(a)
#define OP_NEG(a, b) (-(a))
#define OP_ABS(a, b) fabs(a)
#define OP_ADD(a, b) ((a) + (b))
#define OP_SUB(a, b) ((a) - (b))
#define OP_MUL(a, b) ((a) * (b))
#define OP_DIV(a, b) ((a) / (b))
#define OP_POW(a, b) pow((a), (b))
// fmax/fmin drop a NaN operand; a + b is NaN whenever either is. x != x rather than isnan(x),
// which is 10x slower on PoCL.
#define OP_MAXIMUM(a, b) select(fmax((a), (b)), (a) + (b), ((a) != (a)) | ((b) != (b)))
#define OP_MINIMUM(a, b) select(fmin((a), (b)), (a) + (b), ((a) != (a)) | ((b) != (b)))
// x relu6(x + 3) / 6 and relu6(x + 3) / 6; clamp drops a NaN, so hardsigmoid puts it back.
#define OP_HARDSWISH(a, b) ((a) * clamp((a) + 3.0f, 0.0f, 6.0f) / 6.0f)
#define OP_HARDSIGMOID(a, b) select(clamp((a) + 3.0f, 0.0f, 6.0f) / 6.0f, (a), (a) != (a))
#define OP_LEAKY_RELU(a, b) select((a), (a) * (b), (a) < (floatV)0.0f)
// Backward ops, a = the output gradient, b = the forward input (or output for sigmoid and tanh),
// with the comparisons of PyTorch's CPU kernels, so the zero set (and a NaN input) agree exactly.
#define OP_RELU_GRAD(a, b) select((a), (floatV)0.0f, (b) <= (floatV)0.0f)
#define OP_RELU6_GRAD(a, b) select((a), (floatV)0.0f, ((b) <= (floatV)0.0f) | ((b) >= (floatV)6.0f))
#define OP_GELU_GRAD(a, b) \
  ((a) * (0.5f * (1.0f + erf((b) * 0.70710678118654752f)) + (b) * 0.39894228040143268f * exp(-0.5f * (b) * (b))))
#define GELU_TANH_TH(b) tanh(0.79788456080286536f * ((b) + 0.044715f * (b) * (b) * (b)))
// At an infinite input PyTorch's formula multiplies Inf by 1 - tanh^2 = 0: NaN. A device tanh that
// stops short of 1 would give Inf instead, so that case is explicit.
#define OP_GELU_TANH_GRAD(a, b)                                                                        \
  select((a) * (0.5f * (1.0f + GELU_TANH_TH(b)) + 0.5f * (b) * (1.0f - GELU_TANH_TH(b) * GELU_TANH_TH(b)) * \
                                                  0.79788456080286536f * (1.0f + 0.134145f * (b) * (b))),  \
         (floatV)NAN, fabs(b) == (floatV)INFINITY)
#define OP_SILU_GRAD(a, b) ((a) * OP_SIGMOID(b, b) * (1.0f + (b) * (1.0f - OP_SIGMOID(b, b))))
#define OP_SIGMOID_GRAD(a, b) ((a) * (1.0f - (b)) * (b))
#define OP_TANH_GRAD(a, b) ((a) * (1.0f - (b) * (b)))
#define OP_HARDSWISH_GRAD(a, b) \
  select(select((a), (a) * ((b) / 3.0f + 0.5f), (b) < (floatV)3.0f), (floatV)0.0f, (b) <= (floatV)-3.0f)
#define OP_HARDSIGMOID_GRAD(a, b) \
  select((floatV)0.0f, (a) * (1.0f / 6.0f), ((b) > (floatV)-3.0f) & ((b) < (floatV)3.0f))
// sign(NaN) = 0, as in PyTorch: neither comparison holds.
#define OP_SIGN(a, b) select(select((floatV)0.0f, (floatV)1.0f, (a) > (floatV)0.0f), (floatV)-1.0f, (a) < (floatV)0.0f)
// b is alpha / beta. softplus's threshold is PyTorch's default 20 (the host falls back otherwise).
#define OP_ELU(a, b) select((a), (b) * expm1(a), (a) <= (floatV)0.0f)
#define OP_SOFTPLUS(a, b) select(log1p(exp((a) * (b))) / (b), (a), (a) * (b) > (floatV)20.0f)

// Step k applied to the running value v with its operand b.
#define STEP_FN(op, rev, v, b) ((rev) ? CAT(OP_, op)((b), (v)) : CAT(OP_, op)((v), (b)))
