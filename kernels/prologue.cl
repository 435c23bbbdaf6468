// Elementwise prologue of a reduction or normalisation: a chain of up to four ops of
// elementwise_ops.cl applied to each input element as the kernel reads it, so that the chain's
// result is never written to memory (compiled graphs: sum(relu(x)), layer_norm(x + residual)).
// Files: storage.cl, reduce_vec.cl, elementwise_ops.cl, prologue.cl, then the kernel that reads
// its input through PROLOGUE_V (VW-vectors) and PROLOGUE_S (single elements).
//
// PRO_STEPS (0..4) steps; step k: PROk_OP names the op (RELU, ADD, ...), PROk_ARG is 0 (unary),
// 1 (a tensor ptk + ptk_off with the input's dims and layout, read at the input's index) or 2 (the
// scalar psk), PROk_REV 1 computes op(operand, v). A kernel's parameter list ends with
// PROLOGUE_PARAMS: three per step (tensor, offset, scalar), whatever the step's kind.
#ifndef PRO_STEPS
#define PRO_STEPS 0
#endif

#if PRO_STEPS == 0
#define PROLOGUE_PARAMS
#define PROLOGUE_V(x, e) (x)
#define PROLOGUE_S(x, e) (x)
#else

#define PRO_PARAM(k) , const global STORAGE *restrict pt##k, const long pt##k##_off, const float ps##k
#define PRO_ARG(k) , pt##k, pt##k##_off, ps##k

// Step k on the running value v; `tensor` is its operand when PROk_ARG is 1 (a constant: the other
// branch folds away, and a scalar step never reads ptk).
#define PRO_OPERAND(k, tensor) (PRO##k##_ARG == 1 ? (tensor) : (floatV)(ps##k))
// On VW elements at index e, or on one element broadcast to a vector (the ops are written for floatV).
#define PRO_STEP_V(k, v, e) \
  v = STEP_FN(PRO##k##_OP, PRO##k##_REV, v, PRO_OPERAND(k, LOADV(pt##k, pt##k##_off + (e))))
#define PRO_STEP_S(k, v, e) \
  v = STEP_FN(PRO##k##_OP, PRO##k##_REV, v, PRO_OPERAND(k, (floatV)(LOAD(pt##k, pt##k##_off + (e)))))

#if PRO_STEPS == 1
#define PROLOGUE_PARAMS PRO_PARAM(1)
#define PROLOGUE_ARGS PRO_ARG(1)
#define PRO_CHAIN(STEP, v, e) STEP(1, v, e)
#elif PRO_STEPS == 2
#define PROLOGUE_PARAMS PRO_PARAM(1) PRO_PARAM(2)
#define PROLOGUE_ARGS PRO_ARG(1) PRO_ARG(2)
#define PRO_CHAIN(STEP, v, e) STEP(1, v, e); STEP(2, v, e)
#elif PRO_STEPS == 3
#define PROLOGUE_PARAMS PRO_PARAM(1) PRO_PARAM(2) PRO_PARAM(3)
#define PROLOGUE_ARGS PRO_ARG(1) PRO_ARG(2) PRO_ARG(3)
#define PRO_CHAIN(STEP, v, e) STEP(1, v, e); STEP(2, v, e); STEP(3, v, e)
#else
#define PROLOGUE_PARAMS PRO_PARAM(1) PRO_PARAM(2) PRO_PARAM(3) PRO_PARAM(4)
#define PROLOGUE_ARGS PRO_ARG(1) PRO_ARG(2) PRO_ARG(3) PRO_ARG(4)
#define PRO_CHAIN(STEP, v, e) STEP(1, v, e); STEP(2, v, e); STEP(3, v, e); STEP(4, v, e)
#endif

// The chain on the VW elements of the input at element index e (from the tensor's start).
static inline floatV prologue_v(floatV v, const long e PROLOGUE_PARAMS) {
  PRO_CHAIN(PRO_STEP_V, v, e);
  return v;
}

// The chain on one element: computed in every lane of a vector, lane 0 kept.
static inline float prologue_s(const float x, const long e PROLOGUE_PARAMS) {
  floatV v = (floatV)(x);
  PRO_CHAIN(PRO_STEP_S, v, e);
#if VW == 1
  return v;
#else
  return v.s0;
#endif
}

#define PROLOGUE_V(x, e) prologue_v((x), (e)PROLOGUE_ARGS)
#define PROLOGUE_S(x, e) prologue_s((x), (e)PROLOGUE_ARGS)
#endif
