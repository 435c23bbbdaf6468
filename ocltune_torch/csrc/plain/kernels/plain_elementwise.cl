// Element-wise ops the float families do not cover: casts, comparisons, logical and bitwise ops,
// where, masked_fill, clamp (number and tensor bounds), integer arithmetic, division with a rounding
// mode, and all/any, on strided operands of any plain type.
//
// Slots: A and B (inputs), C (a condition), O (the output), K (the type both inputs are converted to
// before the op, PyTorch's result type of the inputs). s0 and s1 are scalars of type K.
//
// A program holds one kernel: the host defines KERNEL_<name> (plain_elementwise_program), and a
// BINARY's NAME_scalar comes with NAME. NVIDIA's compiler took 4.3-5.1 s for all of them per set
// of types, four such programs 18 s of resnet50's first step on an H100, where the step needs a
// few kernels of each.

#define ELEMENT_LOOP                       \
  FOR_EACH_INDEX(i, sh.numel) {            \
    long c[MAX_DIMS];                      \
    coords_of(&sh, i, c);                  \
    const long o_at = offset_of(&os, c, sh.ndim);
#define ELEMENT_LOOP_END }

#define UNARY(NAME, EXPR)                                                                                    \
  kernel void NAME(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as, \
                   const K_V s0, const K_V s1) {                                                             \
    ELEMENT_LOOP                                                                                             \
    const K_V x = TO_K(A_LOAD(a, offset_of(&as, c, sh.ndim)));                                               \
    O_STORE(out, o_at, TO_O(EXPR));                                                                          \
    ELEMENT_LOOP_END                                                                                         \
  }

// op(a, b), and op(a, s1) as NAME_scalar.
#define BINARY(NAME, EXPR)                                                                                   \
  kernel void NAME(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as, \
                   global const B_S* b, const Strides bs, const K_V s0) {                                    \
    ELEMENT_LOOP                                                                                             \
    const K_V x = TO_K(A_LOAD(a, offset_of(&as, c, sh.ndim)));                                               \
    const K_V y = TO_K(B_LOAD(b, offset_of(&bs, c, sh.ndim)));                                               \
    O_STORE(out, o_at, TO_O(EXPR));                                                                          \
    ELEMENT_LOOP_END                                                                                         \
  }                                                                                                          \
  kernel void NAME##_scalar(const Shape sh, global O_S* out, const Strides os, global const A_S* a,          \
                            const Strides as, const K_V s0, const K_V s1) {                                  \
    ELEMENT_LOOP                                                                                             \
    const K_V x = TO_K(A_LOAD(a, offset_of(&as, c, sh.ndim)));                                               \
    const K_V y = s1;                                                                                        \
    O_STORE(out, o_at, TO_O(EXPR));                                                                          \
    ELEMENT_LOOP_END                                                                                         \
  }

// A cast is the copy from A into O: K is O's type.
#ifdef KERNEL_copy
UNARY(copy, x)
#endif
#ifdef KERNEL_logical_not
UNARY(logical_not, x == 0)
#endif
// clamp as PyTorch: a NaN input stays NaN, and min > max gives max.
#ifdef KERNEL_clamp_both
UNARY(clamp_both, (x < s0 ? s0 : x) > s1 ? s1 : (x < s0 ? s0 : x))
#endif
#ifdef KERNEL_clamp_min
UNARY(clamp_min, x < s0 ? s0 : x)
#endif
#ifdef KERNEL_clamp_max
UNARY(clamp_max, x > s1 ? s1 : x)
#endif
// 2 - x and 2 + x (a number first): s1 - x * s0, s1 + x * s0 with alpha s0.
#ifdef KERNEL_rsub_scalar
UNARY(rsub_scalar, s1 - x * s0)
#endif
#ifdef KERNEL_radd_scalar
UNARY(radd_scalar, s1 + x * s0)
#endif

#ifdef KERNEL_eq
BINARY(eq, x == y)
#endif
#ifdef KERNEL_ne
BINARY(ne, x != y)
#endif
#ifdef KERNEL_lt
BINARY(lt, x < y)
#endif
#ifdef KERNEL_le
BINARY(le, x <= y)
#endif
#ifdef KERNEL_gt
BINARY(gt, x > y)
#endif
#ifdef KERNEL_ge
BINARY(ge, x >= y)
#endif
#ifdef KERNEL_logical_and
BINARY(logical_and, (x != 0) && (y != 0))
#endif
#ifdef KERNEL_logical_or
BINARY(logical_or, (x != 0) || (y != 0))
#endif
#ifdef KERNEL_logical_xor
BINARY(logical_xor, (x != 0) != (y != 0))
#endif
#ifdef KERNEL_add
BINARY(add, x + y * s0)
#endif
#ifdef KERNEL_sub
BINARY(sub, x - y * s0)
#endif
#ifdef KERNEL_mul
BINARY(mul, x * y)
#endif
// b is the mask (converted to K), s0 the value.
#ifdef KERNEL_masked_fill
BINARY(masked_fill, y != 0 ? s0 : x)
#endif

// maximum and minimum as PyTorch's CPU kernels (clamp_min and clamp_max with tensor bounds): NaN
// where either operand is.
#if K_FLOAT
#define NAN_OR(x, y, v) ((x) != (x) || (y) != (y) ? (K_V)NAN : (v))
#else
#define NAN_OR(x, y, v) (v)
#endif
#ifdef KERNEL_maximum
BINARY(maximum, NAN_OR(x, y, x < y ? y : x))
#endif
#ifdef KERNEL_minimum
BINARY(minimum, NAN_OR(x, y, y < x ? y : x))
#endif

// clamp with tensor bounds (clamp.Tensor) as PyTorch's CPU kernel: NaN where a bound is NaN, a NaN
// input stays NaN, and lo > hi gives hi.
#ifdef KERNEL_clamp_tensor
kernel void clamp_tensor(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as,
                         global const B_S* lo, const Strides ls, global const C_S* hi, const Strides hs) {
  ELEMENT_LOOP
  const K_V x = TO_K(A_LOAD(a, offset_of(&as, c, sh.ndim)));
  const K_V l = TO_K(B_LOAD(lo, offset_of(&ls, c, sh.ndim)));
  const K_V h = TO_K(C_LOAD(hi, offset_of(&hs, c, sh.ndim)));
  const K_V m = x < l ? l : x;
  O_STORE(out, o_at, TO_O(NAN_OR(l, h, m > h ? h : m)));
  ELEMENT_LOOP_END
}
#endif

// ---- division with a rounding mode: PyTorch's CPU kernels (native/cpu/BinaryOpsKernel.cpp) ----
#if K_FLOAT
// a / b rounded to nearest, as the CPU divides. OpenCL lets a device's fp32 division err by 2.5 ulp
// unless programs are built with -cl-fp32-correctly-rounded-divide-sqrt, and one ulp below an
// integer quotient moves trunc(a / b) to the integer below. The residual a - q b is exact (fma) for
// q within an ulp of the quotient, so q steps towards the quotient while the residual shrinks and
// stops at the nearest float: no step where the division is correctly rounded (PoCL).
inline float div_rn(const float a, const float b) {
  float q = a / b;
  if (!(fabs(q) < INFINITY) || q == 0.0f) return q;  // NaN, infinities and zeros as the division gives them
  float r = fma(-q, b, a);
  for (int i = 0; i < 3 && r != 0.0f; ++i) {
    const float next = nextafter(q, (r < 0.0f) == (b < 0.0f) ? INFINITY : -INFINITY);
    const float rn = fma(-next, b, a);
    if (!(fabs(rn) < fabs(r))) break;
    q = next;
    r = rn;
  }
  return q;
}

// c10::div_floor_floating (c10/util/generic_math.h): Python's floor division, (a - fmod(a, b)) / b
// with its fix-ups, which keeps a == (a // b) * b + a % b where floor(a / b) rounds the wrong way
// (a multiple of b, a quotient just below an integer). fmod, floor and copysign are exact in OpenCL.
// `r`: each step rounded to K's precision, as the CPU's 16-bit arithmetic (c10::Half and BFloat16
// and their std:: overloads) rounds it.
#define R(v) (r ? K_ROUND(v) : (v))
inline float div_floor_float(const float a, const float b, const bool r) {
  if (b == 0.0f) return a / b;  // IEEE: +-Inf or NaN
  const float mod = fmod(a, b);
  float div = R(div_rn(R(a - mod), b));
  if (mod != 0.0f && (b < 0.0f) != (mod < 0.0f)) div = R(div - 1.0f);
  if (div == 0.0f) return copysign(0.0f, a / b);
  float floordiv = floor(div);
  if (R(div - floordiv) > 0.5f) floordiv = R(floordiv + 1.0f);
  return floordiv;
}
#undef R

// s0 != 0: a 16-bit result type K of two tensors, where the CPU computes in that type, rounding the
// divisor and every step to it. A divisor that is one value (a number, or a tensor broadcast from one
// element) it divides by in fp32, unrounded, as it does for fp32. The dividend is of type K either
// way (an integer one converted first).
inline float div_trunc_k(const float x, const float y, const float s0) {
  if (s0 != 0.0f) return trunc(K_ROUND(div_rn(K_ROUND(x), K_ROUND(y))));
  return trunc(div_rn(K_ROUND(x), y));
}
inline float div_floor_k(const float x, const float y, const float s0) {
  return div_floor_float(K_ROUND(x), s0 != 0.0f ? K_ROUND(y) : y, s0 != 0.0f);
}
#else
// Integers (never bool: the host refuses it, as the CPU does), b != 0 (the host raises the CPU's
// ZeroDivisionError first). The minimum over -1 wraps to itself, as c10::div_floor_integer returns.
#define SIGNED_K (((K_V)-1) < (K_V)0)
inline K_V div_trunc_k(const K_V x, const K_V y, const K_V s0) {
  return SIGNED_K && y == (K_V)-1 ? (K_V)(-x) : (K_V)(x / y);
}
// c10::div_floor_integer: truncation, one less where the signs differ and there is a remainder.
inline K_V div_floor_k(const K_V x, const K_V y, const K_V s0) {
  if (SIGNED_K && y == (K_V)-1) return (K_V)(-x);
  const K_V q = (K_V)(x / y);
  return SIGNED_K && ((x < 0) != (y < 0)) && (K_V)(q * y) != x ? (K_V)(q - 1) : q;
}
#endif
#ifdef KERNEL_div_trunc
BINARY(div_trunc, div_trunc_k(x, y, s0))
#endif
#ifdef KERNEL_div_floor
BINARY(div_floor, div_floor_k(x, y, s0))
#endif

#if !K_FLOAT
#if K_BOOL
#ifdef KERNEL_bitwise_not
UNARY(bitwise_not, x == 0)
#endif
#else
#ifdef KERNEL_bitwise_not
UNARY(bitwise_not, ~x)
#endif
#endif
#ifdef KERNEL_bitwise_and
BINARY(bitwise_and, x & y)
#endif
#ifdef KERNEL_bitwise_or
BINARY(bitwise_or, x | y)
#endif
#ifdef KERNEL_bitwise_xor
BINARY(bitwise_xor, x ^ y)
#endif
#endif

#if K_FLOAT
// native_dropout_backward: b is the mask, s0 the scale.
#ifdef KERNEL_masked_scale
BINARY(masked_scale, y != 0 ? x * s0 : 0.0f)
#endif
// Math the elementwise family has no op for (ops/elementwise_ops.cpp), in float as PyTorch computes
// 16-bit values. Rounding as PyTorch's: round is half to even (rint), floor/ceil/trunc exact; the
// transcendental ones within OpenCL's full-profile ulp bounds of the correctly rounded value. The
// kernels are named math_*: a kernel named like a builtin (log2) hides it and cannot be created.
#ifdef KERNEL_math_floor
UNARY(math_floor, floor(x))
#endif
#ifdef KERNEL_math_ceil
UNARY(math_ceil, ceil(x))
#endif
#ifdef KERNEL_math_trunc
UNARY(math_trunc, trunc(x))
#endif
#ifdef KERNEL_math_round
UNARY(math_round, rint(x))
#endif
#ifdef KERNEL_math_log2
UNARY(math_log2, log2(x))
#endif
#ifdef KERNEL_math_log10
UNARY(math_log10, log10(x))
#endif
#ifdef KERNEL_math_log1p
UNARY(math_log1p, log1p(x))
#endif
#ifdef KERNEL_math_expm1
UNARY(math_expm1, expm1(x))
#endif
#ifdef KERNEL_math_sin
UNARY(math_sin, sin(x))
#endif
#ifdef KERNEL_math_cos
UNARY(math_cos, cos(x))
#endif
// float64 forms of the family's ops (the families compute fp32, fp16 and bf16 only).
#ifdef KERNEL_math_reciprocal
UNARY(math_reciprocal, 1 / x)
#endif
#ifdef KERNEL_math_exp
UNARY(math_exp, exp(x))
#endif
#ifdef KERNEL_math_log
UNARY(math_log, log(x))
#endif
#ifdef KERNEL_math_sqrt
UNARY(math_sqrt, sqrt(x))
#endif
#ifdef KERNEL_math_rsqrt
UNARY(math_rsqrt, rsqrt(x))
#endif
#ifdef KERNEL_math_neg
UNARY(math_neg, -x)
#endif
#ifdef KERNEL_math_abs
UNARY(math_abs, fabs(x))
#endif
#ifdef KERNEL_div_true
BINARY(div_true, x / y)
#endif
#endif

// out = c ? a : b.
#ifdef KERNEL_where
kernel void where(const Shape sh, global O_S* out, const Strides os, global const C_S* cond, const Strides cs,
                  global const A_S* a, const Strides as, global const B_S* b, const Strides bs) {
  ELEMENT_LOOP
  const K_V v = C_LOAD(cond, offset_of(&cs, c, sh.ndim)) != 0 ? TO_K(A_LOAD(a, offset_of(&as, c, sh.ndim)))
                                                              : TO_K(B_LOAD(b, offset_of(&bs, c, sh.ndim)));
  O_STORE(out, o_at, TO_O(v));
  ELEMENT_LOOP_END
}
#endif

// all and any: out (filled with 1 for all, 0 for any) has stride 0 along the reduced dims. Every
// work item that changes the answer stores the same value, so the races are benign.
#ifdef KERNEL_reduce_all
kernel void reduce_all(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as) {
  ELEMENT_LOOP
  if (A_LOAD(a, offset_of(&as, c, sh.ndim)) == 0) O_STORE(out, o_at, TO_O(0));
  ELEMENT_LOOP_END
}
#endif

#ifdef KERNEL_reduce_any
kernel void reduce_any(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as) {
  ELEMENT_LOOP
  if (A_LOAD(a, offset_of(&as, c, sh.ndim)) != 0) O_STORE(out, o_at, TO_O(1));
  ELEMENT_LOOP_END
}
#endif
