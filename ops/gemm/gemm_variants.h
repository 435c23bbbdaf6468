// Internal to the GEMM op: the kernel variants besides gemm.cl's FMA kernel (each with its space
// and launch plan in its own file) and the helpers they share with ops/gemm/gemm.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ops/gemm/gemm.h"

namespace ocltune::gemm_detail {

std::int64_t at(const Config& config, const char* name);
std::int64_t next_pow2(std::int64_t x);
// The 17 arguments every GEMM kernel takes (sizes, scalars, then A, B, C with offset, ld, stride).
std::vector<KernelArg> gemm_args(const GemmShape& shape, const GemmOperands& operands);
// The epilogue on the kernel that stores C (kernels/gemm_epilogue.cl, whose program lists
// activation.cl and gemm_epilogue.cl before the kernel's file): the ACT and HAS_BIAS defines, and
// the bias buffer and offset appended to its arguments.
void add_epilogue(const GemmShape& shape, const GemmOperands& operands, KernelLaunch& store);

// Tensor cores through inline PTX (ops/gemm/gemm_mma.cpp, kernels/gemm_mma.cl): variant "mma_tf32".
SearchSpace mma_space(const GemmShape& shape, const DeviceInfo& device);
LaunchPlan mma_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config);

// Hopper's warpgroup tensor cores through inline PTX (ops/gemm/gemm_wgmma.cpp, kernels/gemm_wgmma.cl):
// variant "wgmma_tf32".
SearchSpace wgmma_space(const GemmShape& shape, const DeviceInfo& device);
// The tile rules both wgmma variants share (BM, BN, BK, WGS): tiles no larger than the problem's
// next powers of two, whole m64 blocks per warpgroup, at most 128 accumulators per work-item,
// 16-byte chunks split evenly over the work-items, a work-group size the device allows.
void constrain_warpgroup_tiles(SearchSpace& space, const GemmShape& shape, const DeviceInfo& device);
LaunchPlan wgmma_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config);

// The same on operands packed by kernels/gemm_pack_tf32.cl (ops/gemm/gemm_wgmma_packed.cpp,
// kernels/gemm_wgmma_packed.cl): variant "wgmma_packed_tf32".
SearchSpace wgmma_packed_space(const GemmShape& shape, const DeviceInfo& device);
LaunchPlan wgmma_packed_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config,
                             Workspace& workspace);

// 16-bit storage through any fp32 variant (ops/gemm/gemm_widen.cpp, kernels/gemm_convert.cl): widen
// A, B (and C when beta != 0) into fp32 scratch, run `config`, narrow C.
LaunchPlan widened_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config,
                        Workspace& workspace);

// The plan of a kernel on packed operands: A and op(B) packed into the workspace (pack_tf32 or
// pack_16bit by the dtype; an operand every batch entry shares once), then `gemm` on them (packed
// buffers and their batch strides in words).
using PackedGemmLaunch =
    std::function<KernelLaunch(const cl::Buffer& a, std::int64_t stride_a, const cl::Buffer& b, std::int64_t stride_b)>;
LaunchPlan packed_operands_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config,
                                Workspace& workspace, const PackedGemmLaunch& gemm);

// The 13 arguments of both GEMM kernels on packed operands (sizes, scalars, packed A and B with
// their batch strides in words, then C where `c` says).
std::vector<KernelArg> packed_gemm_args(const GemmShape& shape, const PackedGemmSizes& sizes, const cl::Buffer& a,
                                        std::int64_t stride_a, const cl::Buffer& b, std::int64_t stride_b,
                                        const GemmOperands& c);

// mma.sync on packed operands (ops/gemm/gemm_mma_packed.cpp, kernels/mma_packed.cl +
// gemm_mma_packed.cl): variant "mma_packed_tf32" / "_fp16" / "_bf16", compute capability >= 8.0.
SearchSpace mma_packed_space(const GemmShape& shape, const DeviceInfo& device);
LaunchPlan mma_packed_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config,
                           Workspace& workspace);

// Explicitly vectorised register tiles for CPU devices (ops/gemm/gemm_cpu.cpp, kernels/gemm_cpu.cl):
// variant "cpu".
SearchSpace cpu_space(const GemmShape& shape, const DeviceInfo& device);
LaunchPlan cpu_plan(const GemmShape& shape, const GemmOperands& operands, const Config& config);

}  // namespace ocltune::gemm_detail
