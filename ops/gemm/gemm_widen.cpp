// GEMMs of 16-bit storage (fp16, bf16) on the fp32 kernels: A and B (and C when beta != 0) are
// widened into fp32 scratch copies, any fp32 variant multiplies them, and C is narrowed back with
// one rounding (kernels/gemm_convert.cl). Exact with respect to the stored inputs: fp16 and bf16
// values are exact in fp32 (and in TF32, so the tensor-core variants multiply them exactly too).
// This serves every variant but the packed wgmma one, which reads 16-bit operands itself.
#include "ops/gemm/gemm_variants.h"

namespace ocltune {
namespace {

// Scratch slots of the fp32 copies, apart from the packed variant's (3, 4) and conv2d's (0-2).
constexpr int kWidenSlotA = 5;
constexpr int kWidenSlotB = 6;
constexpr int kWidenSlotC = 7;

// Where one matrix lives: offset, leading dimension, batch stride (elements).
struct Place {
  cl::Buffer buffer;
  std::int64_t offset = 0, ld = 0, stride = 0;
};

KernelLaunch convert_launch(const char* kernel, DType dtype, std::int64_t batches, std::int64_t rows, std::int64_t cols,
                            const Place& src, const Place& dst) {
  KernelLaunch launch;
  launch.program.files = {"storage.cl", "activation.cl", "gemm_epilogue.cl", "gemm_convert.cl"};
  launch.program.defines = {dtype_define(dtype)};
  launch.kernel = kernel;
  launch.global = cl::NDRange(static_cast<std::size_t>((cols + 63) / 64 * 64), static_cast<std::size_t>(rows),
                              static_cast<std::size_t>(batches));
  launch.local = cl::NDRange(64, 1, 1);
  launch.args = {
      static_cast<cl_int>(rows),   static_cast<cl_int>(cols),        src.buffer, static_cast<cl_long>(src.offset),
      static_cast<cl_int>(src.ld), static_cast<cl_long>(src.stride), dst.buffer, static_cast<cl_long>(dst.offset),
      static_cast<cl_int>(dst.ld), static_cast<cl_long>(dst.stride)};
  return launch;
}

// The tight fp32 copy of a rows x cols operand: one entry when every batch entry shares it.
Place scratch_for(Workspace& workspace, int slot, std::int64_t batches, std::int64_t rows, std::int64_t cols) {
  const std::int64_t entry = rows * cols;
  return {workspace.get(static_cast<std::size_t>(batches * entry) * sizeof(float), slot), 0, cols,
          batches == 1 ? 0 : entry};
}

}  // namespace

namespace gemm_detail {

LaunchPlan widened_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  GemmShape wide = s;
  wide.dtype = DType::kFp32;
  wide.bias = false;  // the epilogue is the narrowing's (gemm_plan_unchecked), on the bias as stored
  wide.act = Activation::kNone;
  const std::int64_t a_batches = o.stride_a == 0 ? 1 : s.batch, b_batches = o.stride_b == 0 ? 1 : s.batch;
  const std::int64_t a_cols = s.packed_lda(), b_cols = s.packed_ldb();
  const Place a = scratch_for(workspace, kWidenSlotA, a_batches, s.rows_a(), a_cols);
  const Place b = scratch_for(workspace, kWidenSlotB, b_batches, s.rows_b(), b_cols);
  const Place c = scratch_for(workspace, kWidenSlotC, s.batch, s.m, s.n);

  LaunchPlan plan;
  plan.kernels.push_back(
      convert_launch("widen_matrix", s.dtype, a_batches, s.rows_a(), a_cols, {o.a, o.a_offset, o.lda, o.stride_a}, a));
  plan.kernels.push_back(
      convert_launch("widen_matrix", s.dtype, b_batches, s.rows_b(), b_cols, {o.b, o.b_offset, o.ldb, o.stride_b}, b));
  const Place caller_c{o.c, o.c_offset, o.ldc, o.stride_c};
  if (s.beta != 0.0f) plan.kernels.push_back(convert_launch("widen_matrix", s.dtype, s.batch, s.m, s.n, caller_c, c));

  GemmOperands wide_operands;
  wide_operands.a = a.buffer;
  wide_operands.b = b.buffer;
  wide_operands.c = c.buffer;
  wide_operands.lda = a.ld;
  wide_operands.ldb = b.ld;
  wide_operands.ldc = c.ld;
  wide_operands.stride_a = a.stride;
  wide_operands.stride_b = b.stride;
  wide_operands.stride_c = c.stride;
  // The copies are laid out here from operands the caller checked: no check again.
  for (KernelLaunch& launch : gemm_plan_unchecked(wide, wide_operands, config, workspace).kernels) {
    plan.kernels.push_back(std::move(launch));
  }
  plan.kernels.push_back(convert_launch("narrow_matrix", s.dtype, s.batch, s.m, s.n, c, caller_c));
  return plan;
}

}  // namespace gemm_detail
}  // namespace ocltune
