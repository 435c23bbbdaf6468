// The warpgroup tensor-core variant of GEMM on packed operands ("wgmma_packed_tf32", and
// "wgmma_packed_fp16"/"_bf16" for 16-bit storage): two passes of kernels/gemm_pack_tf32.cl (round
// A and op(B) to TF32) or kernels/gemm_pack_16bit.cl (copy their bits) write K-major, zero-padded
// scratch buffers, then kernels/gemm_wgmma_packed.cl multiplies them with a cp.async pipeline and
// stores C in the storage type. Offered where tensor cores are allowed (tf32 math or 16-bit
// storage) on compute capability 9.x.
#include "ops/gemm/gemm_variants.h"

namespace ocltune {

// The fastest of the first ten configurations measured at 4096^3 NN on the H200 (probe35: 589 us,
// 233 TFLOP/s with both packing passes): one warpgroup of 128 x 128, so two work-groups share an SM.
Config gemm_wgmma_packed_default_config() {
  return {{"WGMMA_PACKED", 1}, {"BM", 128},   {"BN", 128}, {"BK", 16},
          {"WGS", 1},          {"STAGES", 3}, {"LAG", 0},  {"GROUP_M", 1}};
}

bool is_wgmma_packed_config(const Config& config) { return config.count("WGMMA_PACKED") != 0; }

namespace {

std::int64_t round_up(std::int64_t x, std::int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

}  // namespace

PackedGemmSizes packed_gemm_sizes(const GemmShape& s, const Config& config) {
  // Whole tiles of rows (multiples of 64, so whole 64 x 64 blocks of the pack kernels) and a K of
  // 64 words (whole blocks of either pack kernel), which every BK (8, 16, 32 words) divides.
  const std::int64_t per_word = s.dtype == DType::kFp32 ? 1 : 2;
  const std::int64_t k = round_up(s.k, 64 * per_word);
  return {round_up(s.m, config.at("BM")), round_up(s.n, config.at("BN")), k, k / per_word};
}

namespace {

// The two pack kernels take the same arguments and grid (64 x 64 blocks of elements).
KernelLaunch pack_launch(const char* file, const char* kernel, std::int64_t batches, const cl::Buffer& src,
                         std::int64_t offset, std::int64_t ld, std::int64_t stride, bool k_contiguous,
                         std::int64_t rows, std::int64_t k, std::int64_t padded_rows, std::int64_t padded_k,
                         const cl::Buffer& dst) {
  KernelLaunch launch;
  launch.program.files = {file};
  launch.kernel = kernel;
  launch.global = cl::NDRange(static_cast<std::size_t>(padded_k / 2), static_cast<std::size_t>(padded_rows / 8),
                              static_cast<std::size_t>(batches));
  launch.local = cl::NDRange(32, 8, 1);
  launch.args = {src,
                 static_cast<cl_long>(offset),
                 static_cast<cl_int>(ld),
                 static_cast<cl_long>(stride),
                 static_cast<cl_int>(k_contiguous ? 1 : 0),
                 static_cast<cl_int>(rows),
                 static_cast<cl_int>(k),
                 static_cast<cl_int>(padded_k),
                 static_cast<cl_long>(padded_rows * padded_k),
                 dst};
  return launch;
}

}  // namespace

KernelLaunch pack_tf32_launch(std::int64_t batches, const cl::Buffer& src, std::int64_t offset, std::int64_t ld,
                              std::int64_t stride, bool k_contiguous, std::int64_t rows, std::int64_t k,
                              std::int64_t padded_rows, std::int64_t padded_k, const cl::Buffer& dst) {
  return pack_launch("gemm_pack_tf32.cl", "pack_tf32", batches, src, offset, ld, stride, k_contiguous, rows, k,
                     padded_rows, padded_k, dst);
}

KernelLaunch pack_16bit_launch(std::int64_t batches, const cl::Buffer& src, std::int64_t offset, std::int64_t ld,
                               std::int64_t stride, bool k_contiguous, std::int64_t rows, std::int64_t k,
                               std::int64_t padded_rows, std::int64_t padded_k, const cl::Buffer& dst) {
  return pack_launch("gemm_pack_16bit.cl", "pack_16bit", batches, src, offset, ld, stride, k_contiguous, rows, k,
                     padded_rows, padded_k, dst);
}

KernelLaunch packed_gemm_launch(const GemmShape& s, const Config& config, const cl::Buffer& a, std::int64_t stride_a,
                                const cl::Buffer& b, std::int64_t stride_b, const GemmOperands& c) {
  const PackedGemmSizes p = packed_gemm_sizes(s, config);
  const std::int64_t threads = 128 * config.at("WGS");
  KernelLaunch launch;
  launch.program.files = {"storage.cl", "tile_order.cl",      "activation.cl",       "gemm_epilogue.cl",
                          "wgmma.cl",   "packed_pipeline.cl", "gemm_wgmma_packed.cl"};
  launch.program.ptx_target = "sm_90a";  // wgmma (see harness/program.h)
  launch.program.defines.push_back(dtype_define(s.dtype));
  for (const char* name : {"BM", "BN", "BK", "WGS", "STAGES", "LAG", "GROUP_M"}) {
    launch.program.defines.emplace_back(name, std::to_string(config.at(name)));
  }
  launch.kernel = "gemm_wgmma_packed";
  launch.global = cl::NDRange(static_cast<std::size_t>(p.rows_b / config.at("BN") * threads),
                              static_cast<std::size_t>(p.rows_a / config.at("BM")), static_cast<std::size_t>(s.batch));
  launch.local = cl::NDRange(static_cast<std::size_t>(threads), 1, 1);
  launch.args = gemm_detail::packed_gemm_args(s, p, a, stride_a, b, stride_b, c);
  return launch;
}

namespace gemm_detail {

std::vector<KernelArg> packed_gemm_args(const GemmShape& s, const PackedGemmSizes& p, const cl::Buffer& a,
                                        std::int64_t stride_a, const cl::Buffer& b, std::int64_t stride_b,
                                        const GemmOperands& c) {
  return {static_cast<cl_int>(s.m),         static_cast<cl_int>(s.n),
          static_cast<cl_int>(p.k_words),   static_cast<cl_float>(s.alpha),
          static_cast<cl_float>(s.beta),    a,
          static_cast<cl_long>(stride_a),   b,
          static_cast<cl_long>(stride_b),   c.c,
          static_cast<cl_long>(c.c_offset), static_cast<cl_int>(c.ldc),
          static_cast<cl_long>(c.stride_c)};
}

SearchSpace wgmma_packed_space(const GemmShape& shape, const DeviceInfo& device) {
  SearchSpace space(shape.dtype == DType::kFp32 ? "wgmma_packed_tf32"
                                                : std::string("wgmma_packed_") + dtype_name(shape.dtype));
  space.add("WGMMA_PACKED", {1}, "warpgroup tensor-core kernel on packed operands (kernels/gemm_wgmma_packed.cl)")
      .add("BM", {64, 128, 256}, "rows of C per work-group, in m64 blocks")
      .add("BN", {64, 128, 256}, "columns of C per work-group: the N of each wgmma")
      .add("BK", {8, 16, 32}, "depth of the K tile per pipeline stage, in 32-bit words (two 16-bit elements each)")
      .add("WGS", {1, 2}, "warpgroups of 128 work-items per work-group, stacked along M")
      .add("STAGES", {2, 3, 4}, "local buffers in the cp.async pipeline")
      .add("LAG", {0, 1}, "wgmma groups left running across each barrier (their buffers are refilled a step later)")
      .add("GROUP_M", {1, 8}, "tile rows that work-groups launched together cover before moving along N (L2 reuse)");
  constrain_warpgroup_tiles(space, shape, device);
  space.constrain("1 to 3 tiles loading ahead (STAGES - 1 - LAG)", {"STAGES", "LAG"}, [](const Config& c) {
    const std::int64_t ahead = at(c, "STAGES") - 1 - at(c, "LAG");
    return ahead >= 1 && ahead <= 3;
  });
  const auto local_bytes = static_cast<std::int64_t>(device.local_mem_bytes);
  space.constrain("the pipeline's local buffers fit the device", {"BM", "BN", "BK", "STAGES"}, [=](const Config& c) {
    return at(c, "STAGES") * (at(c, "BM") + at(c, "BN")) * at(c, "BK") * 4 <= local_bytes;
  });
  return space;
}

LaunchPlan packed_operands_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace,
                                const PackedGemmLaunch& gemm) {
  const PackedGemmSizes p = packed_gemm_sizes(s, config);
  // An operand shared by every batch entry (batch stride 0, as conv2d's weights) is packed once.
  const std::int64_t a_batches = o.stride_a == 0 ? 1 : s.batch, b_batches = o.stride_b == 0 ? 1 : s.batch;
  const cl::Buffer ap = workspace.get(static_cast<std::size_t>(a_batches * p.rows_a * p.k_words * 4), kGemmPackSlotA);
  const cl::Buffer bp = workspace.get(static_cast<std::size_t>(b_batches * p.rows_b * p.k_words * 4), kGemmPackSlotB);
  const auto pack = s.dtype == DType::kFp32 ? pack_tf32_launch : pack_16bit_launch;
  LaunchPlan plan;
  // A (M x K, op applied) has K contiguous unless stored transposed; B (K x N) the other way round.
  plan.kernels.push_back(pack(a_batches, o.a, o.a_offset, o.lda, o.stride_a, !s.trans_a, s.m, s.k, p.rows_a, p.k, ap));
  plan.kernels.push_back(pack(b_batches, o.b, o.b_offset, o.ldb, o.stride_b, s.trans_b, s.n, s.k, p.rows_b, p.k, bp));
  plan.kernels.push_back(
      gemm(ap, a_batches == 1 ? 0 : p.rows_a * p.k_words, bp, b_batches == 1 ? 0 : p.rows_b * p.k_words));
  return plan;
}

LaunchPlan wgmma_packed_plan(const GemmShape& s, const GemmOperands& o, const Config& config, Workspace& workspace) {
  return packed_operands_plan(
      s, o, config, workspace,
      [&](const cl::Buffer& a, std::int64_t stride_a, const cl::Buffer& b, std::int64_t stride_b) {
        return packed_gemm_launch(s, config, a, stride_a, b, stride_b, o);
      });
}

}  // namespace gemm_detail
}  // namespace ocltune
