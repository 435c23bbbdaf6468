// The multi-tensor `_foreach_*` ops torch.optim dispatches (SGD, Adam, AdamW with foreach, the default
// on a device torch lists as foreach-capable, which PrivateUse1 is): PyTorch's own per-tensor
// ("slow") kernels, which call add_, mul_, addcmul_, lerp_, sqrt, ... of each tensor, so every step
// of the optimiser runs on ocltune's kernels without a copy to the CPU, about 12 kernels per tensor
// for Adam; the per-tensor loop is what CPU PyTorch runs too. fused=True takes fused_optim_ops.cpp's
// one kernel per tensor instead (issue 21).
//
// The ones torch.optim's default (foreach) SGD and Adam/AdamW spend their calls in (_foreach_add_.List
// and .Scalar, _foreach_mul_.Scalar, _foreach_lerp_.Scalar, _foreach_addcmul_.Scalar,
// _foreach_addcdiv_.Scalar and .ScalarList, _foreach_div_.ScalarList, _foreach_sqrt) launch
// plain/kernels/plain_foreach.cl on up to 16 dense tensors at a time, as CUDA's multi-tensor apply does:
// the slow kernels' add_, mul_, ... cost about 24 us a tensor on the H200, most of the step of a
// small network, and even a launch per tensor is three per parameter in an SGD step. A tensor the
// kernels do not take (not contiguous, not a float type, a different type or size from its
// partners, a partial overlap) goes the slow way.
//
// The list below was generated from torch's schemas and native headers, matching argument names and
// types, and the library checks each signature against its schema when it loads.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

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
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/plain/plain_kernels.h"

namespace ocltune_torch {

namespace {

// What one launch of plain/kernels/plain_foreach.cl takes (mirrors its MtTable and MT_* macros): up to
// kMtTensors tensors of one type and device, kMtOperands lists, in up to kMtBuffers distinct buffers.
// The table goes by value as a kernel argument, so it stays within the 1024 bytes of arguments every
// OpenCL device takes, with the buffers and the kernel's other arguments.
constexpr int kMtTensors = 16;
constexpr int kMtOperands = 3;
constexpr int kMtBuffers = 8;
struct MtTable {
  cl_long numel[kMtTensors];
  cl_long offset[kMtOperands][kMtTensors];
  cl_int first_chunk[kMtTensors + 1];
  cl_int tensors;
  cl_float scalar[kMtTensors];
  cl_uchar slot[kMtOperands][kMtTensors];
};
static_assert(sizeof(MtTable) + kMtBuffers * sizeof(cl_mem) <= 1024, "kernel arguments over OpenCL's minimum");

// Elements per chunk, the unit of work of a work-group: on a GPU 64 per work item of a work-group of
// 64; on a CPU a block large enough to stream (MT_FOR_CHUNK in the kernel file).
std::int64_t chunk_elements(int device) { return plain_cpu_device(device) ? 65536 : 4096; }

// A tensor plain_foreach.cl takes: on an ocl device, dense in row-major order, of a float type.
bool fast_tensor(const at::Tensor& t) {
  return t.defined() && t.device().is_privateuseone() && t.is_contiguous() &&
         (t.scalar_type() == at::kFloat || t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

// The tensors of one launch, gathered index by index, launched by flush(): one launch for up to
// kMtTensors tensors where PyTorch's own loop launches one op per tensor.
class MultiTensorLaunch {
 public:
  explicit MultiTensorLaunch(const char* kernel) : kernel_(kernel) {}
  ~MultiTensorLaunch() = default;

  // Adds the i-th tensors of `lists` (alike and dense; lists[0] is written) with the op's scalar,
  // launching what is gathered first where they do not fit or must not share the launch.
  void add(const std::vector<at::TensorList>& lists, std::size_t i, float scalar) {
    const at::Tensor& out = lists[0][i];
    cl_mem buffers[kMtOperands] = {};  // each operand's buffer, resolved once
    for (std::size_t j = 0; j < lists.size(); ++j) buffers[j] = kernel_buffer(lists[j][i]);
    if (!fits(lists, i, buffers)) flush();
    if (table_.tensors == 0) start(out);
    const int k = table_.tensors++;
    table_.numel[k] = out.numel();
    table_.scalar[k] = scalar;
    for (std::size_t j = 0; j < lists.size(); ++j) {
      const at::Tensor& t = lists[j][i];
      table_.offset[j][k] = element_offset(t);
      table_.slot[j][k] = static_cast<cl_uchar>(slot_of(buffers[j]));
      tensors_.push_back(t);
    }
    table_.first_chunk[k + 1] = table_.first_chunk[k] + static_cast<cl_int>((out.numel() + chunk_ - 1) / chunk_);
    written_.push_back(out);
  }

  // Launches what is gathered (nothing when empty).
  void flush() {
    if (table_.tensors == 0) return;
    PlainLaunch& launch = launches_.get(device_, program_, kernel_);
    launch.arg(table_);
    for (int b = 0; b < kMtBuffers; ++b) launch.buffer(buffers_[std::min<std::size_t>(b, buffers_.size() - 1)]);
    launch.run(static_cast<std::int64_t>(table_.first_chunk[table_.tensors]) * 64);
    table_ = MtTable{};
    buffers_.clear();
    tensors_.clear();
    written_.clear();
  }

 private:
  // Whether the i-th tensors can join the gathered ones: the same device and type, buffers to spare,
  // and no overlap between what one tensor writes and what another reads or writes (the tensors of
  // a launch are updated in any order; PyTorch's loop goes index by index).
  bool fits(const std::vector<at::TensorList>& lists, std::size_t i, const cl_mem* buffers) {
    if (table_.tensors == 0) return true;
    const at::Tensor& out = lists[0][i];
    if (table_.tensors == kMtTensors || out.device().index() != device_ || out.scalar_type() != type_) return false;
    std::size_t wanted = buffers_.size();
    for (std::size_t j = 0; j < lists.size(); ++j) {
      const bool seen = std::find(buffers_.begin(), buffers_.end(), buffers[j]) != buffers_.end() ||
                        std::find(buffers, buffers + j, buffers[j]) != buffers + j;
      if (!seen) ++wanted;
    }
    if (wanted > static_cast<std::size_t>(kMtBuffers)) return false;
    for (const at::Tensor& w : written_) {
      for (const at::TensorList list : lists) {
        if (may_overlap(w, list[i])) return false;
      }
    }
    for (const at::Tensor& t : tensors_) {
      if (may_overlap(out, t)) return false;
    }
    return true;
  }

  // A new launch for tensors like `out`: its device's chunk size and the program of its type (kept
  // while they stay the same).
  void start(const at::Tensor& out) {
    const int device = out.device().index();
    if (!program_ || device != device_ || out.scalar_type() != type_) {
      device_ = device;
      type_ = out.scalar_type();
      chunk_ = chunk_elements(device_);
      program_ = plain_program(
          device_, "plain_foreach.cl", {{"P", type_}},
          "#define MT_TENSORS " + std::to_string(kMtTensors) + "\n#define MT_CHUNK " + std::to_string(chunk_) + "\n");
    }
    table_.first_chunk[0] = 0;
  }

  std::size_t slot_of(cl_mem buffer) {
    auto it = std::find(buffers_.begin(), buffers_.end(), buffer);
    if (it != buffers_.end()) return static_cast<std::size_t>(it - buffers_.begin());
    buffers_.push_back(buffer);
    return buffers_.size() - 1;
  }

  const char* kernel_;
  MtTable table_{};
  int device_ = -1;
  at::ScalarType type_ = at::kFloat;
  std::int64_t chunk_ = 1;
  cl_program program_ = nullptr;
  std::vector<cl_mem> buffers_;
  std::vector<at::Tensor> tensors_;  // every operand gathered (kept alive until launched)
  std::vector<at::Tensor> written_;  // the written ones
  PlainLaunchCache launches_;
};

// The op over every index i: operands[0][i] (written), the other lists' i-th tensors (read), and
// scalar_of(i) as a float when given, gathered into multi-tensor launches of `kernel`. Where the i-th
// tensors are not alike and dense (fast_tensor, one type, one device, one size, the written one
// overlapping no other unless it is the same), or scalar_ok(i) is false, slow(i) runs PyTorch's
// per-tensor op instead, after what was gathered before it (so that an index's order is kept
// where tensors alias).
template <class Scalar, class Ok, class Slow>
void foreach_launch(const char* op, const std::vector<at::TensorList>& operands, const char* kernel, Scalar scalar_of,
                    Ok scalar_ok, Slow slow) {
  const at::TensorList out = operands.front();
  for (const at::TensorList list : operands) {
    TORCH_CHECK(list.size() == out.size(), op, ": tensor lists must have the same length, got ", out.size(), " and ",
                list.size());
  }
  TORCH_INTERNAL_ASSERT(operands.size() <= static_cast<std::size_t>(kMtOperands));
  MultiTensorLaunch launch(kernel);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const at::Tensor& o = out[i];
    bool fast = fast_tensor(o) && scalar_ok(i);
    for (std::size_t l = 0; const at::TensorList list : operands) {
      if (l++ == 0 || !fast) continue;  // the written list itself
      const at::Tensor& t = list[i];
      fast = fast_tensor(t) && t.scalar_type() == o.scalar_type() && t.device() == o.device() &&
             t.sizes().equals(o.sizes()) && (t.is_same(o) || !may_overlap(o, t));
    }
    if (!fast) {
      launch.flush();
      slow(i);
      continue;
    }
    if (o.numel() == 0) continue;
    float scalar = 0.0f;
    if constexpr (!std::is_same_v<Scalar, std::nullptr_t>) scalar = scalar_of(i).template to<float>();
    launch.add(operands, i, scalar);
  }
  launch.flush();
}

// A scalar the kernels can take as a float (the opmath type of the float types).
bool fast_scalar(const c10::Scalar& s) { return !s.isComplex(); }

void foreach_add_list_(at::TensorList self, at::TensorList other, const c10::Scalar& alpha) {
  foreach_launch(
      "_foreach_add_", {self, other}, "foreach_add_list", [&](std::size_t) { return alpha; },
      [&](std::size_t) { return fast_scalar(alpha); }, [&](std::size_t i) { self[i].add_(other[i], alpha); });
}

void foreach_mul_scalar_(at::TensorList self, const c10::Scalar& scalar) {
  foreach_launch(
      "_foreach_mul_", {self}, "foreach_mul_scalar", [&](std::size_t) { return scalar; },
      [&](std::size_t) { return fast_scalar(scalar); }, [&](std::size_t i) { self[i].mul_(scalar); });
}

void foreach_add_scalar_(at::TensorList self, const c10::Scalar& scalar) {
  foreach_launch(
      "_foreach_add_", {self}, "foreach_add_scalar", [&](std::size_t) { return scalar; },
      [&](std::size_t) { return fast_scalar(scalar); }, [&](std::size_t i) { self[i].add_(scalar); });
}

void foreach_lerp_scalar_(at::TensorList self, at::TensorList end, const c10::Scalar& weight) {
  foreach_launch(
      "_foreach_lerp_", {self, end}, "foreach_lerp_scalar", [&](std::size_t) { return weight; },
      [&](std::size_t) { return fast_scalar(weight); }, [&](std::size_t i) { self[i].lerp_(end[i], weight); });
}

void foreach_addcmul_scalar_(at::TensorList self, at::TensorList a, at::TensorList b, const c10::Scalar& value) {
  foreach_launch(
      "_foreach_addcmul_", {self, a, b}, "foreach_addcmul_scalar", [&](std::size_t) { return value; },
      [&](std::size_t) { return fast_scalar(value); }, [&](std::size_t i) { self[i].addcmul_(a[i], b[i], value); });
}

void foreach_addcdiv_scalar_(at::TensorList self, at::TensorList a, at::TensorList b, const c10::Scalar& value) {
  foreach_launch(
      "_foreach_addcdiv_", {self, a, b}, "foreach_addcdiv_scalar", [&](std::size_t) { return value; },
      [&](std::size_t) { return fast_scalar(value); }, [&](std::size_t i) { self[i].addcdiv_(a[i], b[i], value); });
}

void foreach_addcdiv_scalarlist_(at::TensorList self, at::TensorList a, at::TensorList b,
                                 at::ArrayRef<c10::Scalar> values) {
  TORCH_CHECK(values.size() == self.size(), "_foreach_addcdiv_: ", values.size(), " scalars for ", self.size(),
              " tensors");
  foreach_launch(
      "_foreach_addcdiv_", {self, a, b}, "foreach_addcdiv_scalar", [&](std::size_t i) { return values[i]; },
      [&](std::size_t i) { return fast_scalar(values[i]); },
      [&](std::size_t i) { self[i].addcdiv_(a[i], b[i], values[i]); });
}

void foreach_div_scalarlist_(at::TensorList self, at::ArrayRef<c10::Scalar> values) {
  TORCH_CHECK(values.size() == self.size(), "_foreach_div_: ", values.size(), " scalars for ", self.size(), " tensors");
  foreach_launch(
      "_foreach_div_", {self}, "foreach_div_scalar", [&](std::size_t i) { return values[i]; },
      [&](std::size_t i) { return fast_scalar(values[i]); }, [&](std::size_t i) { self[i].div_(values[i]); });
}

std::vector<at::Tensor> foreach_sqrt(at::TensorList self) {
  std::vector<at::Tensor> out;
  out.reserve(self.size());
  for (const at::Tensor& t : self) out.push_back(fast_tensor(t) ? at::empty_like(t) : at::Tensor());
  // A tensor the kernel does not take leaves its slot undefined, so the launcher's check sends it the
  // slow way, which fills the slot.
  foreach_launch(
      "_foreach_sqrt", {out, self}, "foreach_sqrt", nullptr, [](std::size_t) { return true; },
      [&](std::size_t i) { out[i] = self[i].sqrt(); });
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_foreach_abs", at::native::foreach_tensor_abs_slow);
  m.impl("_foreach_abs_", at::native::foreach_tensor_abs_slow_);
  m.impl("_foreach_add.List", at::native::foreach_tensor_add_list_kernel_slow);
  m.impl("_foreach_add.Scalar", at::native::foreach_tensor_add_scalar_kernel_slow);
  m.impl("_foreach_add.ScalarList", at::native::foreach_tensor_add_scalarlist_kernel_slow);
  m.impl("_foreach_add.Tensor", at::native::foreach_tensor_add_tensor_kernel_slow);
  m.impl("_foreach_add_.List", foreach_add_list_);
  m.impl("_foreach_add_.Scalar", foreach_add_scalar_);
  m.impl("_foreach_add_.ScalarList", at::native::foreach_tensor_add_scalarlist_kernel_slow_);
  m.impl("_foreach_add_.Tensor", at::native::foreach_tensor_add_tensor_kernel_slow_);
  m.impl("_foreach_addcdiv.Scalar", at::native::foreach_tensor_addcdiv_scalar_slow);
  m.impl("_foreach_addcdiv.ScalarList", at::native::foreach_tensor_addcdiv_scalarlist_slow);
  m.impl("_foreach_addcdiv.Tensor", at::native::foreach_tensor_addcdiv_tensor_slow);
  m.impl("_foreach_addcdiv_.Scalar", foreach_addcdiv_scalar_);
  m.impl("_foreach_addcdiv_.ScalarList", foreach_addcdiv_scalarlist_);
  m.impl("_foreach_addcdiv_.Tensor", at::native::foreach_tensor_addcdiv_tensor_slow_);
  m.impl("_foreach_addcmul.Scalar", at::native::foreach_tensor_addcmul_scalar_slow);
  m.impl("_foreach_addcmul.ScalarList", at::native::foreach_tensor_addcmul_scalarlist_slow);
  m.impl("_foreach_addcmul.Tensor", at::native::foreach_tensor_addcmul_tensor_slow);
  m.impl("_foreach_addcmul_.Scalar", foreach_addcmul_scalar_);
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
  m.impl("_foreach_div_.ScalarList", foreach_div_scalarlist_);
  m.impl("_foreach_div_.Tensor", at::native::foreach_tensor_div_tensor_kernel_slow_);
  m.impl("_foreach_exp", at::native::foreach_tensor_exp_slow);
  m.impl("_foreach_exp_", at::native::foreach_tensor_exp_slow_);
  m.impl("_foreach_lerp.List", at::native::foreach_tensor_ternary_lerp_slow);
  m.impl("_foreach_lerp.Scalar", at::native::foreach_tensor_lerp_list_kernel_slow);
  m.impl("_foreach_lerp.ScalarList", at::native::foreach_tensor_lerp_scalarlist_kernel_slow);
  m.impl("_foreach_lerp_.List", at::native::foreach_tensor_ternary_lerp_slow_);
  m.impl("_foreach_lerp_.Scalar", foreach_lerp_scalar_);
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
  m.impl("_foreach_mul_.Scalar", foreach_mul_scalar_);
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
  m.impl("_foreach_sqrt", foreach_sqrt);
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
