// The activation the conv2d and GEMM families fuse after their bias (core/activation.h): ACT 0 none,
// 1 relu, 2 relu6, 3 gelu (erf), 4 sigmoid. Prepended to the programs that apply it.

#ifndef ACT
#define ACT 0
#endif

static inline float activate(const float x) {
#if ACT == 1
  return fmax(x, 0.0f);
#elif ACT == 2
  return fmin(fmax(x, 0.0f), 6.0f);
#elif ACT == 3
  return 0.5f * x * (1.0f + erf(x * 0.70710678118654752f));
#elif ACT == 4
  return 1.0f / (1.0f + exp(-x));
#else
  return x;
#endif
}
