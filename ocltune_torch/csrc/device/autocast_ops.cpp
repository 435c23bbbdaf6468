// torch.autocast(device_type="ocl"): the casts of the AutocastPrivateUse1 dispatch key, with the op
// lists and policies PyTorch registers for CUDA (ATen/autocast_mode.h): matrix products and
// convolutions in the autocast dtype, the ops that need range (exp, log, norms, losses, softmax
// with a dtype, sums) in fp32, mixed-dtype ops promoted. Every other op falls through to the
// backend's kernels unchanged. Without this key's kernels, autocast on ocl raised at the first
// convolution.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace ocltune_torch {
namespace {

// The signatures of AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE name these unqualified. Which of them
// depends on the torch version: 2.11's list has norm's DimnameList overloads; 2.15 has no named
// tensors (no ATen/core/Dimname.h) and no such overloads.
#if __has_include(<ATen/core/Dimname.h>)
using at::Dimname;
using at::DimnameList;
#endif
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define OCL_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define OCL_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define OCL_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define OCL_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(OCL_LOWER_PRECISION_FP)
  AT_FORALL_FP32(OCL_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(OCL_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(OCL_PROMOTE)
#undef OCL_LOWER_PRECISION_FP
#undef OCL_FP32
#undef OCL_FP32_SET_OPT_DTYPE
#undef OCL_PROMOTE
}

}  // namespace
}  // namespace ocltune_torch
