// GEMM: C = act(alpha * op(A) * op(B) + beta * C + bias), row-major, strided batches; fp32, fp16 or
// bf16 storage with fp32 accumulation and fp32 scalars; bias (a row of N values added to every row
// of C, as nn.Linear's) and act (core/activation.h) optional, applied as C is stored.
// Problem description, parameter space, launch geometry, FLOP/byte model and float64 reference.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/activation.h"
#include "core/config.h"
#include "core/math_mode.h"
#include "core/space.h"
#include "core/storage.h"
#include "harness/cl.h"
#include "harness/device.h"
#include "harness/launch.h"
#include "harness/workspace.h"

namespace ocltune {

struct GemmShape {
  std::int64_t m = 1, n = 1, k = 1;
  std::int64_t batch = 1;
  bool trans_a = false;  // A stored K x M
  bool trans_b = false;  // B stored N x K
  float alpha = 1.0f;
  float beta = 0.0f;
  // "exact" (fp32 FMA) or "tf32" (matrix units allowed, like PyTorch's allow_tf32). Part of the
  // database key through Problem::math(), not of the shape key.
  MathMode math = MathMode::kExact;
  // Storage type of A, B and C (a database key of its own through Problem::dtype()). fp16 and
  // bf16 values are exact in TF32, so for them the tensor-core variants multiply exactly and are
  // offered in both math modes (as PyTorch runs half matmuls on tensor cores).
  DType dtype = DType::kFp32;
  // The epilogue (kernels/gemm_epilogue.cl): a bias row of N values of C's storage type added to every
  // row of C, then the activation. Like alpha and beta, per call: in the JSON, not in the shape key,
  // so a product's rows serve it with or without an epilogue (the tiles do not depend on it; it costs
  // one read of N values and the activation as C is stored).
  bool bias = false;
  Activation act = Activation::kNone;

  // Tight leading dimensions (row lengths of A, B, C as stored).
  std::int64_t packed_lda() const { return trans_a ? m : k; }
  std::int64_t packed_ldb() const { return trans_b ? k : n; }
  std::int64_t packed_ldc() const { return n; }
  // Rows of A, B as stored.
  std::int64_t rows_a() const { return trans_a ? k : m; }
  std::int64_t rows_b() const { return trans_b ? n : k; }

  // "batch=1,k=1024,layout=NN,m=1024,n=1024": what the database keys results by. Scalars, the
  // epilogue and memory layout are per call and not part of it.
  std::string key() const;
  bool has_epilogue() const { return bias || act != Activation::kNone; }
  nlohmann::json to_json() const;
  static GemmShape from_json(const nlohmann::json& j);  // throws ocltune::Error
  // Whether matrix units with TF32 (or 16-bit) inputs may serve the shape: math "tf32", or
  // 16-bit storage, whose values those inputs hold exactly.
  bool tensor_cores_allowed() const { return math == MathMode::kTf32 || dtype != DType::kFp32; }
  double flops() const;
  double bytes() const;
};

// Where the matrices live: buffers, element offsets, leading dimensions, batch strides; the bias
// (when the shape has one): N contiguous elements from bias_offset, shared by every batch entry.
struct GemmOperands {
  cl::Buffer a, b, c;
  std::int64_t a_offset = 0, b_offset = 0, c_offset = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  cl::Buffer bias;
  std::int64_t bias_offset = 0;
};

// Operands with packed leading dimensions and batch strides.
GemmOperands packed_operands(const GemmShape& shape, cl::Buffer a, cl::Buffer b, cl::Buffer c);

// Throws ocltune::Error when a leading dimension is too small or an index would exceed 32 bits.
void check_operands(const GemmShape& shape, const GemmOperands& operands);
// Throws ocltune::Error when a (non-null) buffer is too small for the matrices the call indexes:
// the operands' offsets, leading dimensions and batch strides on the buffers a, b and c, and the
// bias's N elements from its offset on `bias` (where the shape has one).
void check_buffer_extents(const GemmShape& shape, const GemmOperands& operands, cl_mem a, cl_mem b, cl_mem c,
                          cl_mem bias = nullptr);

// Tunables of kernels/gemm.cl (variant "fma"), with constraints from divisibility and from the
// device; on GPUs, for a K of 32 or more, also gemm.cl with K split into KSPLIT parts summed by a
// second kernel (variant "fma_ksplit"), up to the split that gives one wave of work-groups
// (gemm_resident_groups; small M x N, long K: weight gradients); in tf32 mode on NVIDIA GPUs of
// compute capability >= 8.0 also those of kernels/gemm_mma.cl (variant "mma_tf32", parameter
// MMA=1), and on 9.x those of gemm_wgmma.cl
// ("wgmma_tf32", WGMMA=1) and gemm_wgmma_packed.cl ("wgmma_packed_tf32", WGMMA_PACKED=1).
// On CPU devices also those of kernels/gemm_cpu.cl (variant "cpu", parameter CPU=1).
SearchSpace gemm_space(const GemmShape& shape, const DeviceInfo& device);
// A configuration valid on every OpenCL 1.2 device (64 work-items, 4 KiB of local memory).
Config gemm_default_config();
// The same with its tiles shrunk to the shape (16-row or 16-column tiles where M or N is at most
// 16), so that it is a point of gemm_space for every shape.
Config gemm_default_config(const GemmShape& shape);
// gemm.cl's tiles that a GPU runs well untuned, largest first: 256x128, 128x128, 64x128, 64x64 and
// 32x64, staged, with vectors of 4 and the inner loop unrolled 8 times (the H200's tuned fp32 rows:
// 30-46 TFLOP/s, against 3-12 for gemm_default_config()'s 32x32 tile of scalars).
const std::vector<Config>& gemm_gpu_tiles();
// The first of gemm_gpu_tiles() that `accepts` (a space's contains) and that gives `shape` at least
// one work-group per compute unit: a big tile on a half-empty device loses more than it gains. None
// where no tile does (small problems keep gemm_default_config(shape)).
std::optional<Config> gemm_gpu_tile(const GemmShape& shape, std::int64_t compute_units,
                                    const std::function<bool(const Config&)>& accepts);
// Work-groups of gemm.cl's `config` that one compute unit holds at once, estimated from NVIDIA's
// per-SM limits (2048 work-items, 65536 registers, 32 work-groups) and a register count of
// accumulators + fragments + 32: a launch of fewer work-groups than compute units times this (one
// wave) leaves the device short of work. Local memory is left out: OpenCL reports a work-group's
// limit, not a compute unit's (the H200: 48 KiB against 228 KiB per SM).
std::int64_t gemm_resident_groups(const Config& config);
// `config` (one of gemm.cl's) with K split into the fewest parts (2-16) that give `shape` half a
// wave of work-groups (gemm_resident_groups), each part at least 1024 long, as far as `accepts` (a
// space's contains) allows; `config` itself where the unsplit launch has them or no split is accepted.
Config gemm_gpu_split(const Config& config, const GemmShape& shape, const DeviceInfo& device,
                      const std::function<bool(const Config&)>& accepts);
// The untuned tensor-core configuration (only meaningful where the mma_tf32 variant exists).
Config gemm_mma_default_config();
bool is_mma_config(const Config& config);
// The untuned warpgroup tensor-core configuration (only where the wgmma_tf32 variant exists).
Config gemm_wgmma_default_config();
bool is_wgmma_config(const Config& config);
// The untuned configuration of mma.sync on packed operands (mma_packed_*: tf32 math or 16-bit
// storage, compute capability >= 8.0).
Config gemm_mma_packed_default_config();
bool is_mma_packed_config(const Config& config);
// The untuned configuration of the warpgroup variant on packed operands (wgmma_packed_tf32).
Config gemm_wgmma_packed_default_config();
bool is_wgmma_packed_config(const Config& config);
// Whether a 16-bit GEMM on `config` reads its 16-bit operands as they are: the variants on packed
// operands do; every other one multiplies fp32 copies that its plan widens first. A caller that
// builds an operand for the GEMM (conv2d's im2col matrix) builds it in fp32 where it would be widened.
bool gemm_reads_16bit(const Config& config);
// The untuned CPU configuration for `shape` (only meaningful where the cpu variant exists).
Config gemm_cpu_default_config(const GemmShape& shape);
bool is_cpu_config(const Config& config);

// Workspace slots of the operands the wgmma_packed_tf32 variant packs (kept apart from the slots
// other ops' plans use around a GEMM, such as conv2d's 0-2).
inline constexpr int kGemmPackSlotA = 3;
inline constexpr int kGemmPackSlotB = 4;
// Workspace slot of the partial products of a split-K plan (gemm.cl with KSPLIT > 1), apart from
// conv2d's 8-11, which live around a GEMM plan.
inline constexpr int kGemmSplitSlot = 12;

// The pieces of the wgmma_packed variants, for ops that pack an operand of their own (conv2d's
// im2col matrix). Packed operands are stored K-major in wgmma's core matrices, fp32 rounded to
// TF32 (kernels/gemm_pack_tf32.cl), fp16 and bf16 as they are (kernels/gemm_pack_16bit.cl); rows
// padded to whole tiles of `config`, K to 64 words (64 fp32 or 128 16-bit elements): a batch
// entry of A is rows_a x k elements (rows_a x k_words words), of B rows_b x k.
struct PackedGemmSizes {
  std::int64_t rows_a = 0, rows_b = 0, k = 0, k_words = 0;
};
PackedGemmSizes packed_gemm_sizes(const GemmShape& shape, const Config& config);
// Packs rows x k of each of `batches` entries of one fp32 operand (element (r, k) at offset + batch
// * stride + r * ld + k when k_contiguous, + k * ld + r otherwise) into dst, padded_rows x
// padded_k words per entry.
KernelLaunch pack_tf32_launch(std::int64_t batches, const cl::Buffer& src, std::int64_t offset, std::int64_t ld,
                              std::int64_t stride, bool k_contiguous, std::int64_t rows, std::int64_t k,
                              std::int64_t padded_rows, std::int64_t padded_k, const cl::Buffer& dst);
// The same for an operand of 16-bit storage (fp16 or bf16): padded_rows x padded_k 16-bit elements
// per entry (padded_k a multiple of 128).
KernelLaunch pack_16bit_launch(std::int64_t batches, const cl::Buffer& src, std::int64_t offset, std::int64_t ld,
                               std::int64_t stride, bool k_contiguous, std::int64_t rows, std::int64_t k,
                               std::int64_t padded_rows, std::int64_t padded_k, const cl::Buffer& dst);
// The GEMM on packed A and B (batch strides in words, 0 for an operand every entry shares),
// writing C of shape.dtype where `c` says (c.c, c.c_offset, c.ldc, c.stride_c). `config` holds at least the
// variant's tile parameters (BM, BN, BK, WGS, STAGES, LAG).
KernelLaunch packed_gemm_launch(const GemmShape& shape, const Config& config, const cl::Buffer& a,
                                std::int64_t stride_a, const cl::Buffer& b, std::int64_t stride_b,
                                const GemmOperands& c);

// Whether `config` splits K (variant fma_ksplit: KSPLIT > 1).
bool is_ksplit_config(const Config& config);

// The launches of `config`'s variant (one kernel; two for a split K, whose partial products live
// in `workspace`; three for wgmma_packed_tf32, whose packed operands do), after check_operands.
LaunchPlan gemm_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config, Workspace& workspace);
// The same for operands that passed check_operands already: the runtime's, whose call is checked
// once at its entry (docs/decisions/0053), and a 16-bit plan's fp32 copies.
LaunchPlan gemm_plan_unchecked(const GemmShape& shape, const GemmOperands& operands, const Config& config,
                               Workspace& workspace);

}  // namespace ocltune
