// mm, addmm, bmm and baddbmm through ocltune's GEMM: fp32, fp16 and bf16; transposed inputs by trans flags.
// addmv and dot (mv, matmul's vector products) are GEMMs of one column. addmm's bias row (nn.Linear's)
// is the GEMM's epilogue, added as C is stored, and ocltune::addmm_act (torch.compile's fusion,
// compiler.py) applies an activation there too.
#include <algorithm>
#include <optional>

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Operators.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "ocltune_torch/csrc/device/copy.h"
#include "ocltune_torch/csrc/device/device.h"
#include "ocltune_torch/csrc/device/errors.h"
#include "ocltune_torch/csrc/device/fallback.h"
#include "ocltune_torch/csrc/device/tensor_util.h"
#include "ocltune_torch/csrc/ops/fused_activation.h"

namespace ocltune_torch {
namespace {

// How a [rows, cols] matrix is stored for the row-major GEMM: as is (rows adjacent in memory) or as
// the transpose of a row-major [cols, rows] (a transposed view), with its leading dimension.
struct MatrixLayout {
  bool trans = false;
  std::int64_t ld = 1;
};

// A dim of size 1 has no meaningful stride, so it never decides the layout.
std::optional<MatrixLayout> layout_of(std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                      std::int64_t col_stride) {
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= std::max<std::int64_t>(cols, 1))) {
    return MatrixLayout{false, rows == 1 ? std::max<std::int64_t>(cols, 1) : row_stride};
  }
  if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= std::max<std::int64_t>(rows, 1))) {
    return MatrixLayout{true, cols == 1 ? std::max<std::int64_t>(rows, 1) : col_stride};
  }
  return std::nullopt;
}

// A batch of matrices: the tensor (a packed copy when its strides fit no layout) and its layout.
struct Operand {
  at::Tensor tensor;
  MatrixLayout layout;
};

Operand operand_of(const at::Tensor& t) {
  if (std::optional<MatrixLayout> l = layout_of(t.size(1), t.size(2), t.stride(1), t.stride(2))) return {t, *l};
  at::Tensor packed = t.contiguous();
  return {packed, *layout_of(t.size(1), t.size(2), packed.stride(1), packed.stride(2))};
}

// cuBLAS's TF32 switch, which ocl's fp32 matrix products follow as cuda's do:
// torch.set_float32_matmul_precision("high" or "medium"), torch.backends.cuda.matmul.allow_tf32, or
// its fp32_precision = "tf32"; off by default. Convolutions follow cuDNN's switch instead (conv_ops.cpp).
// Where the device has no TF32 units the runtime makes the call exact.
bool matmul_tf32_allowed() { return at::globalContext().allowTF32CuBLAS(); }

// What the GEMM applies as it stores C: a bias row of n elements adjacent in memory (a 1-D tensor of
// c's dtype on c's device), then an activation (OCLTUNE_ACTIVATION_*).
struct Epilogue {
  const at::Tensor* bias = nullptr;
  int activation = OCLTUNE_ACTIVATION_NONE;
};

// c = act(alpha * a @ b + beta * c + bias) for 3-D a [batch, m, k], b [batch, k, n] and a packed c
// [batch, m, n], enqueued on the device of c. k is at least 1 and c has elements.
void run_gemm(const char* op, const at::Tensor& c, const at::Tensor& a, const at::Tensor& b, float alpha, float beta,
              const Epilogue& epilogue = {}) {
  const std::int64_t batch = c.size(0), m = c.size(1), n = c.size(2), k = a.size(2);
  const Operand A = operand_of(a);
  const Operand B = operand_of(b);
  const ocltune_tensor ta = cl_tensor_of(A.tensor), tb = cl_tensor_of(B.tensor), tc = cl_tensor_of(c);
  ocltune_gemm_args g;  // packed ldc and stride_c: c is packed; A and B keep their own layouts
  ocltune_gemm_args_init(&g, A.layout.trans, B.layout.trans, m, n, k, batch, ta.buffer, tb.buffer, tc.buffer);
  g.alpha = alpha;
  g.beta = beta;
  g.a_offset = ta.offset;
  g.b_offset = tb.offset;
  g.c_offset = tc.offset;
  g.lda = A.layout.ld;
  g.ldb = B.layout.ld;
  if (batch > 1) {
    g.stride_a = A.tensor.stride(0);
    g.stride_b = B.tensor.stride(0);
  }
  g.dtype = *ocltune_dtype_of(c.scalar_type());
  // 16-bit products run on matrix units whatever the switch (as cuBLAS's do); the switch is fp32's.
  g.allow_tf32 = c.scalar_type() == at::kFloat && matmul_tf32_allowed() ? 1 : 0;
  if (epilogue.bias) {
    const ocltune_tensor tbias = cl_tensor_of(*epilogue.bias);
    g.has_bias = 1;
    g.bias = tbias.buffer;
    g.bias_offset = tbias.offset;
  }
  g.activation = epilogue.activation;
  call_ocltune(op, [&] { device_runtime(c.device().index()).gemm(g); });
}

void check_matmul_args(const char* op, const at::Tensor& a, const at::Tensor& b, std::int64_t dims) {
  check_ocl(a, op, "self");
  check_same_device(a, b, op, "mat2");
  TORCH_CHECK(a.dim() == dims, op, ": self must be a ", dims, "-D tensor, got ", a.dim(), "-D");
  TORCH_CHECK(b.dim() == dims, op, ": mat2 must be a ", dims, "-D tensor, got ", b.dim(), "-D");
  TORCH_CHECK(a.size(-1) == b.size(-2), op, ": mat1 and mat2 shapes cannot be multiplied (", a.size(-2), "x",
              a.size(-1), " and ", b.size(-2), "x", b.size(-1), ")");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(),
              "expected m1 and m2 to have the same dtype, but got: ", a.scalar_type(), " != ", b.scalar_type());
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  check_matmul_args("mm", self, mat2, 2);
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(mm)>::call(self, mat2);
  at::Tensor out = at::empty({self.size(0), mat2.size(1)}, self.options());
  if (out.numel() == 0) return out;
  if (self.size(1) == 0) return out.zero_();
  run_gemm("mm", out.unsqueeze(0), self.unsqueeze(0), mat2.unsqueeze(0), 1.0f, 0.0f);
  return out;
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  check_matmul_args("bmm", self, mat2, 3);
  TORCH_CHECK(self.size(0) == mat2.size(0), "bmm: batch1 and batch2 must have the same number of batches, got ",
              self.size(0), " and ", mat2.size(0));
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(bmm)>::call(self, mat2);
  at::Tensor out = at::empty({self.size(0), self.size(1), mat2.size(2)}, self.options());
  if (out.numel() == 0) return out;
  if (self.size(2) == 0) return out.zero_();
  run_gemm("bmm", out, self, mat2, 1.0f, 0.0f);
  return out;
}

// out = beta * self + alpha * a @ b for 3-D a [batch, m, k], b [batch, k, n] and a packed out
// [batch, m, n] (a 3-D view of addmm's 2-D result), self already expanded to out's sizes.
void add_product(const char* op, const at::Tensor& out, const at::Tensor& self, const at::Tensor& a,
                 const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha) {
  if (out.numel() == 0) return;
  const float beta_f = beta.to<float>();
  // ocltune's 16-bit GEMM plans another number of kernels for beta 0 and beta != 0 of one shape, and
  // its decision cache refuses that ("the plan changed its number of kernels"): 16-bit calls always
  // run with beta 0, and beta * self is added by an elementwise op.
  const bool fused_beta = beta_f != 0.0f && self.scalar_type() == at::kFloat;
  if (fused_beta) copy_on_device(out, self);  // beta 0 ignores self, NaN and Inf too
  if (a.size(2) == 0) {
    if (beta_f == 0.0f) {
      out.zero_();
      return;
    }
    if (!fused_beta) copy_on_device(out, self);
    out.mul_(beta);
    return;
  }
  run_gemm(op, out, a, b, alpha.to<float>(), fused_beta ? beta_f : 0.0f);
  if (beta_f != 0.0f && !fused_beta) out.add_(self, beta);
}

// self of addmm as the bias row of an [m, n] result: the same n elements, adjacent in memory, for every
// row (nn.Linear's bias, a [1, n] row); none where self varies along m or its elements are strided.
std::optional<at::Tensor> bias_row(const at::Tensor& self, std::int64_t m, std::int64_t n) {
  const at::Tensor row = self.expand({m, n});
  if ((m > 1 && row.stride(0) != 0) || (n > 1 && row.stride(1) != 1)) return std::nullopt;
  return row.select(0, 0);
}

void check_addmm_args(const char* op, const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2) {
  check_matmul_args(op, mat1, mat2, 2);
  check_same_device(mat1, self, op, "self");
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type(), "self and mat2 must have the same dtype, but got ",
              self.scalar_type(), " and ", mat1.scalar_type());
}

// act(self + alpha * mat1 @ mat2) with self a bias row, as one GEMM that adds the bias and applies the
// activation as it stores the result; nullopt where the GEMM cannot (another self, no K, no result).
std::optional<at::Tensor> linear_epilogue(const char* op, const at::Tensor& self, const at::Tensor& mat1,
                                          const at::Tensor& mat2, float alpha, int activation) {
  const std::int64_t m = mat1.size(0), n = mat2.size(1);
  if (m == 0 || n == 0 || mat1.size(1) == 0) return std::nullopt;
  const std::optional<at::Tensor> bias = bias_row(self, m, n);
  if (!bias) return std::nullopt;
  at::Tensor out = at::empty({m, n}, mat1.options());
  run_gemm(op, out.unsqueeze(0), mat1.unsqueeze(0), mat2.unsqueeze(0), alpha, 0.0f, {&*bias, activation});
  return out;
}

// beta * self + alpha * mat1 @ mat2, with self broadcast to the result (a bias row, usually: then the
// GEMM's epilogue adds it, with no copy of it into the result and no second pass).
at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  check_addmm_args("addmm", self, mat1, mat2);
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(addmm)>::call(self, mat1, mat2, beta, alpha);
  if (beta.to<float>() == 1.0f) {
    if (std::optional<at::Tensor> out =
            linear_epilogue("addmm", self, mat1, mat2, alpha.to<float>(), OCLTUNE_ACTIVATION_NONE)) {
      return *out;
    }
  }
  const std::int64_t m = mat1.size(0), n = mat2.size(1);
  at::Tensor out = at::empty({m, n}, mat1.options());
  add_product("addmm", out.unsqueeze(0), self.expand({m, n}).unsqueeze(0), mat1.unsqueeze(0), mat2.unsqueeze(0), beta,
              alpha);
  return out;
}

// ---- ocltune::addmm_act: a linear layer and its activation as one op (torch.compile's epilogue
// fusion, compiler.py): act(self + mat1 @ mat2) ----

at::Tensor apply_activation(const at::Tensor& x, int activation) {
  switch (activation) {
    case OCLTUNE_ACTIVATION_RELU: return at::relu(x);
    case OCLTUNE_ACTIVATION_RELU6: return at::hardtanh(x, 0.0, 6.0);
    case OCLTUNE_ACTIVATION_GELU: return at::gelu(x);
    case OCLTUNE_ACTIVATION_SIGMOID: return at::sigmoid(x);
    default: return x;
  }
}

at::Tensor addmm_act(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                     c10::string_view activation) {
  const int act = fused_activation_code(activation, "ocltune::addmm_act");
  check_addmm_args("ocltune::addmm_act", self, mat1, mat2);
  if (kernel_dtype(self.scalar_type())) {
    if (std::optional<at::Tensor> out = linear_epilogue("ocltune::addmm_act", self, mat1, mat2, 1.0f, act)) return *out;
  }
  // Not a bias row, no K or another dtype: the ops one by one, with the same result.
  return apply_activation(at::addmm(self, mat1, mat2), act);
}

// Fake tensors (torch.compile traces with them): addmm's own meta function sizes the result.
at::Tensor addmm_act_meta(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          c10::string_view activation) {
  fused_activation_code(activation, "ocltune::addmm_act");
  return at::addmm(self, mat1, mat2);
}

// The batched form: scaled_dot_product_attention's scores, alpha the softmax scale and self the
// attention mask broadcast over batches and heads.
at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  check_matmul_args("baddbmm", batch1, batch2, 3);
  check_same_device(batch1, self, "baddbmm", "self");
  TORCH_CHECK(batch1.size(0) == batch2.size(0), "batch1 and batch2 must have same number of batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  TORCH_CHECK(self.scalar_type() == batch1.scalar_type(), "Input dtypes must be the same, got: input ",
              self.scalar_type(), ", batch1: ", batch1.scalar_type(), ", batch2: ", batch2.scalar_type());
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(baddbmm)>::call(self, batch1, batch2, beta, alpha);
  at::Tensor out = at::empty({batch1.size(0), batch1.size(1), batch2.size(2)}, batch1.options());
  TORCH_CHECK(at::is_expandable_to(self.sizes(), out.sizes()), "baddbmm: self of shape ", self.sizes(),
              " cannot be broadcast to ", out.sizes());
  add_product("baddbmm", out, self.expand(out.sizes()), batch1, batch2, beta, alpha);
  return out;
}

// ---- matrix-vector and vector-vector products (mv and matmul reach them) as GEMMs of one column ----

// beta * self + alpha * mat @ vec: addmm with vec as a [k, 1] matrix and self (broadcast to [m])
// as a column.
at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  check_ocl(mat, "addmv", "mat");
  check_same_device(mat, vec, "addmv", "vec");
  check_same_device(mat, self, "addmv", "self");
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1, "vector + matrix @ vector expected, got ",
              self.dim(), ", ", mat.dim(), ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.dim() == 0 ? 1 : self.size(0), "), mat (", mat.size(0), "x",
              mat.size(1), "), vec (", vec.size(0), ")");
  if (!kernel_dtype(mat.scalar_type()) || vec.scalar_type() != mat.scalar_type() ||
      self.scalar_type() != mat.scalar_type()) {
    return fallback<ATEN_OP(addmv)>::call(self, mat, vec, beta, alpha);
  }
  const at::Tensor column = self.expand({mat.size(0)}).unsqueeze(1);
  return ocltune_torch::addmm(column, mat, vec.unsqueeze(1), beta, alpha).squeeze(1);
}
at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  check_ocl(self, "addmv_", "self");
  TORCH_CHECK(self.dim() == 1 && self.size(0) == mat.size(0), "addmv_: self of shape ", self.sizes(),
              " cannot hold the product of mat (", mat.sizes(), ") and vec (", vec.sizes(), ")");
  const at::Tensor out = ocltune_torch::addmv(self, mat, vec, beta, alpha);
  return self.copy_(out);
}
// mv's form (mv is a composite over it): out is resized to [m] as PyTorch resizes an out= argument.
at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  check_ocl(out, "addmv", "out");
  const at::Tensor result = ocltune_torch::addmv(self, mat, vec, beta, alpha);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

// a . b as a [1, k] @ [k, 1] GEMM; vdot is the same for real dtypes (complex ones fall back).
at::Tensor dot(const at::Tensor& self, const at::Tensor& other) {
  check_ocl(self, "dot", "self");
  check_same_device(self, other, "dot", "tensor");
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
              "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(), "] and src [",
              other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ", other.numel(),
              " elements respectively");
  if (!kernel_dtype(self.scalar_type())) return fallback<ATEN_OP(dot)>::call(self, other);
  return ocltune_torch::mm(self.unsqueeze(0), other.unsqueeze(1))
      .view(at::IntArrayRef{});  // 0-dim (view({}) would be view(dtype))
}
at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) {
  if (self.is_complex() || other.is_complex()) return fallback<ATEN_OP(vdot)>::call(self, other);
  return ocltune_torch::dot(self, other);
}

}  // namespace

// Whether ocl's fp32 matrix products may use TF32 now (the matmul precision, as cuda's read it).
TORCH_LIBRARY_FRAGMENT(ocltune, m) {
  m.def("matmul_tf32_allowed() -> bool", &matmul_tf32_allowed);
  m.def("addmm_act(Tensor self, Tensor mat1, Tensor mat2, str activation) -> Tensor");
}

TORCH_LIBRARY_IMPL(ocltune, PrivateUse1, m) { m.impl("addmm_act", &addmm_act); }
TORCH_LIBRARY_IMPL(ocltune, Meta, m) { m.impl("addmm_act", &addmm_act_meta); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("mm", mm);
  m.impl("bmm", bmm);
  m.impl("addmm", addmm);
  m.impl("baddbmm", baddbmm);
  m.impl("addmv", addmv);
  m.impl("addmv_", addmv_);
  m.impl("addmv.out", addmv_out);
  m.impl("dot", dot);
  m.impl("vdot", vdot);
}

}  // namespace ocltune_torch
