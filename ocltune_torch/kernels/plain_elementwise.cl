// Element-wise ops the float families do not cover: casts, comparisons, logical and bitwise ops,
// where, masked_fill, clamp, integer arithmetic, and all/any, on strided operands of any plain type.
//
// Slots: A and B (inputs), C (a condition), O (the output), K (the type both inputs are converted to
// before the op, PyTorch's result type of the inputs). s0 and s1 are scalars of type K.

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
UNARY(copy, x)
UNARY(logical_not, x == 0)
// clamp as PyTorch: a NaN input stays NaN, and min > max gives max.
UNARY(clamp_both, (x < s0 ? s0 : x) > s1 ? s1 : (x < s0 ? s0 : x))
UNARY(clamp_min, x < s0 ? s0 : x)
UNARY(clamp_max, x > s1 ? s1 : x)
// 2 - x and 2 + x (a number first): s1 - x * s0, s1 + x * s0 with alpha s0.
UNARY(rsub_scalar, s1 - x * s0)
UNARY(radd_scalar, s1 + x * s0)

BINARY(eq, x == y)
BINARY(ne, x != y)
BINARY(lt, x < y)
BINARY(le, x <= y)
BINARY(gt, x > y)
BINARY(ge, x >= y)
BINARY(logical_and, (x != 0) && (y != 0))
BINARY(logical_or, (x != 0) || (y != 0))
BINARY(logical_xor, (x != 0) != (y != 0))
BINARY(add, x + y * s0)
BINARY(sub, x - y * s0)
BINARY(mul, x * y)
// b is the mask (converted to K), s0 the value.
BINARY(masked_fill, y != 0 ? s0 : x)

#if !K_FLOAT
#if K_BOOL
UNARY(bitwise_not, x == 0)
#else
UNARY(bitwise_not, ~x)
#endif
BINARY(bitwise_and, x & y)
BINARY(bitwise_or, x | y)
BINARY(bitwise_xor, x ^ y)
#endif

#if K_FLOAT
// native_dropout_backward: b is the mask, s0 the scale.
BINARY(masked_scale, y != 0 ? x * s0 : 0.0f)
#endif

// out = c ? a : b.
kernel void where(const Shape sh, global O_S* out, const Strides os, global const C_S* cond, const Strides cs,
                  global const A_S* a, const Strides as, global const B_S* b, const Strides bs) {
  ELEMENT_LOOP
  const K_V v = C_LOAD(cond, offset_of(&cs, c, sh.ndim)) != 0 ? TO_K(A_LOAD(a, offset_of(&as, c, sh.ndim)))
                                                              : TO_K(B_LOAD(b, offset_of(&bs, c, sh.ndim)));
  O_STORE(out, o_at, TO_O(v));
  ELEMENT_LOOP_END
}

// all and any: out (filled with 1 for all, 0 for any) has stride 0 along the reduced dims. Every
// work item that changes the answer stores the same value, so the races are benign.
kernel void reduce_all(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as) {
  ELEMENT_LOOP
  if (A_LOAD(a, offset_of(&as, c, sh.ndim)) == 0) O_STORE(out, o_at, TO_O(0));
  ELEMENT_LOOP_END
}

kernel void reduce_any(const Shape sh, global O_S* out, const Strides os, global const A_S* a, const Strides as) {
  ELEMENT_LOOP
  if (A_LOAD(a, offset_of(&as, c, sh.ndim)) != 0) O_STORE(out, o_at, TO_O(1));
  ELEMENT_LOOP_END
}
