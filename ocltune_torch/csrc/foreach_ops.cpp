// The multi-tensor `_foreach_*` ops torch.optim dispatches (SGD, Adam, AdamW with foreach, the default
// on a device torch lists as foreach-capable, which PrivateUse1 is): PyTorch's own per-tensor
// ("slow") kernels, which call add_, mul_, addcmul_, lerp_, sqrt, ... of each tensor, so every step
// of the optimiser runs on ocltune's kernels without a copy to the CPU, about 12 kernels per tensor
// for Adam; the per-tensor loop is what CPU PyTorch runs too. fused=True takes fused_optim_ops.cpp's
// one kernel per tensor instead (issue 21).
//
// The list below was generated from torch's schemas and native headers, matching argument names and
// types, and the library checks each signature against its schema when it loads.
#include <ATen/ops/_foreach_abs_native.h>
#include <ATen/ops/_foreach_add_native.h>
#include <ATen/ops/_foreach_addcdiv_native.h>
#include <ATen/ops/_foreach_addcmul_native.h>
#include <ATen/ops/_foreach_clamp_max_native.h>
#include <ATen/ops/_foreach_clamp_min_native.h>
#include <ATen/ops/_foreach_copy_native.h>
#include <ATen/ops/_foreach_div_native.h>
#include <ATen/ops/_foreach_exp_native.h>
#include <ATen/ops/_foreach_lerp_native.h>
#include <ATen/ops/_foreach_log_native.h>
#include <ATen/ops/_foreach_maximum_native.h>
#include <ATen/ops/_foreach_minimum_native.h>
#include <ATen/ops/_foreach_mul_native.h>
#include <ATen/ops/_foreach_neg_native.h>
#include <ATen/ops/_foreach_norm_native.h>
#include <ATen/ops/_foreach_pow_native.h>
#include <ATen/ops/_foreach_reciprocal_native.h>
#include <ATen/ops/_foreach_rsqrt_native.h>
#include <ATen/ops/_foreach_sigmoid_native.h>
#include <ATen/ops/_foreach_sign_native.h>
#include <ATen/ops/_foreach_sqrt_native.h>
#include <ATen/ops/_foreach_sub_native.h>
#include <ATen/ops/_foreach_tanh_native.h>
#include <ATen/ops/_foreach_zero_native.h>
#include <torch/library.h>

namespace ocltune_torch {

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_foreach_abs", at::native::foreach_tensor_abs_slow);
  m.impl("_foreach_abs_", at::native::foreach_tensor_abs_slow_);
  m.impl("_foreach_add.List", at::native::foreach_tensor_add_list_kernel_slow);
  m.impl("_foreach_add.Scalar", at::native::foreach_tensor_add_scalar_kernel_slow);
  m.impl("_foreach_add.ScalarList", at::native::foreach_tensor_add_scalarlist_kernel_slow);
  m.impl("_foreach_add.Tensor", at::native::foreach_tensor_add_tensor_kernel_slow);
  m.impl("_foreach_add_.List", at::native::foreach_tensor_add_list_kernel_slow_);
  m.impl("_foreach_add_.Scalar", at::native::foreach_tensor_add_scalar_kernel_slow_);
  m.impl("_foreach_add_.ScalarList", at::native::foreach_tensor_add_scalarlist_kernel_slow_);
  m.impl("_foreach_add_.Tensor", at::native::foreach_tensor_add_tensor_kernel_slow_);
  m.impl("_foreach_addcdiv.Scalar", at::native::foreach_tensor_addcdiv_scalar_slow);
  m.impl("_foreach_addcdiv.ScalarList", at::native::foreach_tensor_addcdiv_scalarlist_slow);
  m.impl("_foreach_addcdiv.Tensor", at::native::foreach_tensor_addcdiv_tensor_slow);
  m.impl("_foreach_addcdiv_.Scalar", at::native::foreach_tensor_addcdiv_scalar_slow_);
  m.impl("_foreach_addcdiv_.ScalarList", at::native::foreach_tensor_addcdiv_scalarlist_slow_);
  m.impl("_foreach_addcdiv_.Tensor", at::native::foreach_tensor_addcdiv_tensor_slow_);
  m.impl("_foreach_addcmul.Scalar", at::native::foreach_tensor_addcmul_scalar_slow);
  m.impl("_foreach_addcmul.ScalarList", at::native::foreach_tensor_addcmul_scalarlist_slow);
  m.impl("_foreach_addcmul.Tensor", at::native::foreach_tensor_addcmul_tensor_slow);
  m.impl("_foreach_addcmul_.Scalar", at::native::foreach_tensor_addcmul_scalar_slow_);
  m.impl("_foreach_addcmul_.ScalarList", at::native::foreach_tensor_addcmul_scalarlist_slow_);
  m.impl("_foreach_addcmul_.Tensor", at::native::foreach_tensor_addcmul_tensor_slow_);
  m.impl("_foreach_clamp_max.List", at::native::foreach_tensor_clamp_max_list_kernel_slow);
  m.impl("_foreach_clamp_max.Scalar", at::native::foreach_tensor_clamp_max_scalar_kernel_slow);
  m.impl("_foreach_clamp_max.ScalarList", at::native::foreach_tensor_clamp_max_scalarlist_kernel_slow);
  m.impl("_foreach_clamp_max_.List", at::native::foreach_tensor_clamp_max_list_kernel_slow_);
  m.impl("_foreach_clamp_max_.Scalar", at::native::foreach_tensor_clamp_max_scalar_kernel_slow_);
  m.impl("_foreach_clamp_max_.ScalarList", at::native::foreach_tensor_clamp_max_scalarlist_kernel_slow_);
  m.impl("_foreach_clamp_min.List", at::native::foreach_tensor_clamp_min_list_kernel_slow);
  m.impl("_foreach_clamp_min.Scalar", at::native::foreach_tensor_clamp_min_scalar_kernel_slow);
  m.impl("_foreach_clamp_min.ScalarList", at::native::foreach_tensor_clamp_min_scalarlist_kernel_slow);
  m.impl("_foreach_clamp_min_.List", at::native::foreach_tensor_clamp_min_list_kernel_slow_);
  m.impl("_foreach_clamp_min_.Scalar", at::native::foreach_tensor_clamp_min_scalar_kernel_slow_);
  m.impl("_foreach_clamp_min_.ScalarList", at::native::foreach_tensor_clamp_min_scalarlist_kernel_slow_);
  m.impl("_foreach_div.List", at::native::foreach_tensor_div_list_kernel_slow);
  m.impl("_foreach_div.Scalar", at::native::foreach_tensor_div_scalar_kernel_slow);
  m.impl("_foreach_div.ScalarList", at::native::foreach_tensor_div_scalarlist_kernel_slow);
  m.impl("_foreach_div.Tensor", at::native::foreach_tensor_div_tensor_kernel_slow);
  m.impl("_foreach_div_.List", at::native::foreach_tensor_div_list_kernel_slow_);
  m.impl("_foreach_div_.Scalar", at::native::foreach_tensor_div_scalar_kernel_slow_);
  m.impl("_foreach_div_.ScalarList", at::native::foreach_tensor_div_scalarlist_kernel_slow_);
  m.impl("_foreach_div_.Tensor", at::native::foreach_tensor_div_tensor_kernel_slow_);
  m.impl("_foreach_exp", at::native::foreach_tensor_exp_slow);
  m.impl("_foreach_exp_", at::native::foreach_tensor_exp_slow_);
  m.impl("_foreach_lerp.List", at::native::foreach_tensor_ternary_lerp_slow);
  m.impl("_foreach_lerp.Scalar", at::native::foreach_tensor_lerp_list_kernel_slow);
  m.impl("_foreach_lerp.ScalarList", at::native::foreach_tensor_lerp_scalarlist_kernel_slow);
  m.impl("_foreach_lerp_.List", at::native::foreach_tensor_ternary_lerp_slow_);
  m.impl("_foreach_lerp_.Scalar", at::native::foreach_tensor_lerp_list_kernel_slow_);
  m.impl("_foreach_lerp_.ScalarList", at::native::foreach_tensor_lerp_scalarlist_kernel_slow_);
  m.impl("_foreach_log", at::native::foreach_tensor_log_slow);
  m.impl("_foreach_log_", at::native::foreach_tensor_log_slow_);
  m.impl("_foreach_maximum.List", at::native::foreach_tensor_clamp_min_list_kernel_slow);
  m.impl("_foreach_maximum.Scalar", at::native::foreach_tensor_clamp_min_scalar_kernel_slow);
  m.impl("_foreach_maximum.ScalarList", at::native::foreach_tensor_clamp_min_scalarlist_kernel_slow);
  m.impl("_foreach_maximum_.List", at::native::foreach_tensor_clamp_min_list_kernel_slow_);
  m.impl("_foreach_maximum_.Scalar", at::native::foreach_tensor_clamp_min_scalar_kernel_slow_);
  m.impl("_foreach_maximum_.ScalarList", at::native::foreach_tensor_clamp_min_scalarlist_kernel_slow_);
  m.impl("_foreach_minimum.List", at::native::foreach_tensor_clamp_max_list_kernel_slow);
  m.impl("_foreach_minimum.Scalar", at::native::foreach_tensor_clamp_max_scalar_kernel_slow);
  m.impl("_foreach_minimum.ScalarList", at::native::foreach_tensor_clamp_max_scalarlist_kernel_slow);
  m.impl("_foreach_minimum_.List", at::native::foreach_tensor_clamp_max_list_kernel_slow_);
  m.impl("_foreach_minimum_.Scalar", at::native::foreach_tensor_clamp_max_scalar_kernel_slow_);
  m.impl("_foreach_minimum_.ScalarList", at::native::foreach_tensor_clamp_max_scalarlist_kernel_slow_);
  m.impl("_foreach_mul.List", at::native::foreach_tensor_mul_list_kernel_slow);
  m.impl("_foreach_mul.Scalar", at::native::foreach_tensor_mul_scalar_kernel_slow);
  m.impl("_foreach_mul.ScalarList", at::native::foreach_tensor_mul_scalarlist_kernel_slow);
  m.impl("_foreach_mul.Tensor", at::native::foreach_tensor_mul_tensor_kernel_slow);
  m.impl("_foreach_mul_.List", at::native::foreach_tensor_mul_list_kernel_slow_);
  m.impl("_foreach_mul_.Scalar", at::native::foreach_tensor_mul_scalar_kernel_slow_);
  m.impl("_foreach_mul_.ScalarList", at::native::foreach_tensor_mul_scalarlist_kernel_slow_);
  m.impl("_foreach_mul_.Tensor", at::native::foreach_tensor_mul_tensor_kernel_slow_);
  m.impl("_foreach_neg", at::native::foreach_tensor_neg_slow);
  m.impl("_foreach_neg_", at::native::foreach_tensor_neg_slow_);
  m.impl("_foreach_pow.List", at::native::foreach_tensor_pow_list_kernel_slow);
  m.impl("_foreach_pow.Scalar", at::native::foreach_tensor_pow_scalar_kernel_slow);
  m.impl("_foreach_pow.ScalarAndTensor", at::native::foreach_scalar_pow_list_kernel_slow);
  m.impl("_foreach_pow.ScalarList", at::native::foreach_tensor_pow_scalarlist_kernel_slow);
  m.impl("_foreach_pow_.List", at::native::foreach_tensor_pow_list_kernel_slow_);
  m.impl("_foreach_pow_.Scalar", at::native::foreach_tensor_pow_scalar_kernel_slow_);
  m.impl("_foreach_pow_.ScalarList", at::native::foreach_tensor_pow_scalarlist_kernel_slow_);
  m.impl("_foreach_reciprocal", at::native::foreach_tensor_reciprocal_slow);
  m.impl("_foreach_reciprocal_", at::native::foreach_tensor_reciprocal_slow_);
  m.impl("_foreach_rsqrt", at::native::foreach_tensor_rsqrt_slow);
  m.impl("_foreach_rsqrt_", at::native::foreach_tensor_rsqrt_slow_);
  m.impl("_foreach_sigmoid", at::native::foreach_tensor_sigmoid_slow);
  m.impl("_foreach_sigmoid_", at::native::foreach_tensor_sigmoid_slow_);
  m.impl("_foreach_sign", at::native::foreach_tensor_sign_slow);
  m.impl("_foreach_sign_", at::native::foreach_tensor_sign_slow_);
  m.impl("_foreach_sqrt", at::native::foreach_tensor_sqrt_slow);
  m.impl("_foreach_sqrt_", at::native::foreach_tensor_sqrt_slow_);
  m.impl("_foreach_sub.List", at::native::foreach_tensor_sub_list_kernel_slow);
  m.impl("_foreach_sub.Scalar", at::native::foreach_tensor_sub_scalar_kernel_slow);
  m.impl("_foreach_sub.ScalarList", at::native::foreach_tensor_sub_scalarlist_kernel_slow);
  m.impl("_foreach_sub_.List", at::native::foreach_tensor_sub_list_kernel_slow_);
  m.impl("_foreach_sub_.Scalar", at::native::foreach_tensor_sub_scalar_kernel_slow_);
  m.impl("_foreach_sub_.ScalarList", at::native::foreach_tensor_sub_scalarlist_kernel_slow_);
  m.impl("_foreach_tanh", at::native::foreach_tensor_tanh_slow);
  m.impl("_foreach_tanh_", at::native::foreach_tensor_tanh_slow_);
  m.impl("_foreach_zero_", at::native::foreach_tensor_zero_slow_);
  m.impl("_foreach_copy_", at::native::foreach_tensor_copy_list_kernel_slow_);
  m.impl("_foreach_norm.Scalar", at::native::foreach_tensor_norm_slow);
}

}  // namespace ocltune_torch
