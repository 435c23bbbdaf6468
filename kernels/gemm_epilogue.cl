// The GEMM family's epilogue: C = act(alpha * op(A) * op(B) + beta * C + bias), with bias a row of N
// values added to every row of C (nn.Linear's) and act one of activation.cl's. Prepended to every
// program whose kernel writes C, after activation.cl and, where the kernel stores 16-bit C, after
// storage.cl (the bias then has C's storage type; fp32 otherwise). The host appends
// GEMM_EPILOGUE_PARAMS to the kernel's arguments only when HAS_BIAS is 1 (ops/gemm/gemm.cpp
// add_epilogue); without bias and activation GEMM_EPILOGUE(v, n) is v itself, so the kernels compile
// as they did before the epilogue existed.

#ifndef HAS_BIAS
#define HAS_BIAS 0
#endif

#ifdef STORAGE
#define GEMM_BIAS_T STORAGE
#define GEMM_BIAS_LOAD(p, i) LOAD(p, i)
#else
#define GEMM_BIAS_T float
#define GEMM_BIAS_LOAD(p, i) ((p)[i])
#endif

#if HAS_BIAS
#define GEMM_EPILOGUE_PARAMS , const global GEMM_BIAS_T* restrict bias, const long bias_offset
#define GEMM_EPILOGUE_ARGS , bias, bias_offset
#define GEMM_EPILOGUE(v, n) activate((v) + GEMM_BIAS_LOAD(bias, bias_offset + (n)))
#define GEMM_HAS_EPILOGUE 1
#elif ACT != 0
#define GEMM_EPILOGUE_PARAMS
#define GEMM_EPILOGUE_ARGS
#define GEMM_EPILOGUE(v, n) activate(v)
#define GEMM_HAS_EPILOGUE 1
#else
#define GEMM_EPILOGUE_PARAMS
#define GEMM_EPILOGUE_ARGS
#define GEMM_EPILOGUE(v, n) (v)
#define GEMM_HAS_EPILOGUE 0
#endif
