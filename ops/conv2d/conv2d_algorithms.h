// Internal to the conv2d op: one search space, default configuration and launch plan per
// algorithm, and the helpers their plans share. ops/conv2d/conv2d.cpp dispatches on ALGO.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ops/conv2d/conv2d.h"
#include "ops/gemm/gemm.h"

namespace ocltune::conv2d_detail {

// Per algorithm: its variant of the search space (ALGO is a parameter with that one value), its
// untuned default configuration, and its kernels appended to a plan.
SearchSpace direct_space(const Conv2dShape& shape, const DeviceInfo& device);
Config direct_default(const Conv2dShape& shape);
void direct_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                 LaunchPlan& plan);

SearchSpace igemm_space(const Conv2dShape& shape, const DeviceInfo& device);
Config igemm_default(const Conv2dShape& shape);
void igemm_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, LaunchPlan& plan);

// The same GEMMs on NVIDIA tensor cores (kernels/conv2d_igemm_mma.cl): fp32 tensors in math "tf32"
// (igemm_tf32), fp16 / bf16 tensors in any math mode (igemm_mma16); the spaces are empty where the
// device lacks the capability.
SearchSpace igemm_tf32_space(const Conv2dShape& shape, const DeviceInfo& device);
Config igemm_tf32_default(const Conv2dShape& shape);
void igemm_tf32_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                     LaunchPlan& plan);
SearchSpace igemm_mma16_space(const Conv2dShape& shape, const DeviceInfo& device);
Config igemm_mma16_default(const Conv2dShape& shape);
void igemm_mma16_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                      LaunchPlan& plan);
// The im2col matrix of each image packed for the wgmma GEMM on packed operands, then that GEMM
// (math "tf32", forward, groups 1); the space is empty where the device lacks wgmma. The packed
// operands live in `workspace` (the GEMM's pack slots).
SearchSpace im2col_tf32_space(const Conv2dShape& shape, const DeviceInfo& device);
Config im2col_tf32_default(const Conv2dShape& shape);
void im2col_tf32_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                      LaunchPlan& plan);
// Its GEMM (per image: K x PQ = K x CRS filter times CRS x PQ im2col), and the launch that packs
// the im2col matrices of all images into dst as `sizes` lays out B.
GemmShape im2col_gemm(const Conv2dShape& shape);
KernelLaunch im2col_pack_launch(const Conv2dShape& shape, const Conv2dOperands& o, const PackedGemmSizes& sizes,
                                const cl::Buffer& dst);
// out[a][c][b] = in[a][b][c] for `batches` planes of rows x cols storage values of `shape`'s dtype,
// copied bit for bit (conv2d_transpose.cl): the tensor-core implicit GEMM's channels-last and
// tap-major operand copies (KMAJOR).
KernelLaunch transpose_launch(const Conv2dShape& shape, std::int64_t batches, std::int64_t rows, std::int64_t cols,
                              const cl::Buffer& in, std::int64_t in_offset, const cl::Buffer& out);
// What both implicit-GEMM kernels compute per group (sizes and the shape's math mode), and their
// arguments: the shape, then A, B, C and the bias with element offsets.
// A strided input gradient (dilation 1) is one GEMM per stride phase (the kernels' PHASED):
// implicit_gemm is then phase (0, 0)'s, the largest, and grid dimension 2 runs the groups times
// phase_count phases; add_phases sets PHASED in a program of either kernel.
GemmShape implicit_gemm(const Conv2dShape& shape);
std::vector<KernelArg> implicit_gemm_args(const Conv2dShape& shape, const Conv2dOperands& o);
bool phased_input_gradient(const Conv2dShape& shape);
std::int64_t phase_count(const Conv2dShape& shape);
void add_phases(const Conv2dShape& shape, ProgramSource& program);

SearchSpace winograd_space(const Conv2dShape& shape, const DeviceInfo& device);
// With `gpu`, the defaults of the GEMM-based algorithms (Winograd, 1x1, im2col) take the largest of
// the GEMM family's GPU tiles that fills that device (on_gpu_tile below).
Config winograd_default(const Conv2dShape& shape, const DeviceInfo* gpu = nullptr);
void winograd_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                   LaunchPlan& plan);

SearchSpace gemm1x1_space(const Conv2dShape& shape, const DeviceInfo& device);
Config gemm1x1_default(const Conv2dShape& shape, const DeviceInfo* gpu = nullptr);
void gemm1x1_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                  LaunchPlan& plan);

// im2col in fp32 (groups of any size but depthwise): chunks of CHUNK images gathered into their
// im2col matrices, one batched GEMM per group on any of the GEMM family's variants (the CPU kernel
// on CPUs), then col2im for the input gradient or a sum over images for the weight gradient.
SearchSpace im2col_space(const Conv2dShape& shape, const DeviceInfo& device);
Config im2col_default(const Conv2dShape& shape, const DeviceInfo* gpu = nullptr);
void im2col_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, Workspace& workspace,
                 LaunchPlan& plan);
// The same algorithm with the CPU GEMM kernel's untuned tile (kernels/gemm_cpu.cl).
Config im2col_cpu_default(const Conv2dShape& shape);
Config gemm1x1_cpu_default(const Conv2dShape& shape);

SearchSpace depthwise_space(const Conv2dShape& shape, const DeviceInfo& device);
Config depthwise_default(const Conv2dShape& shape);
void depthwise_plan(const Conv2dShape& shape, const Conv2dOperands& o, const Config& config, LaunchPlan& plan);

// ---- Shared by the plans ----

// Workspace slots of conv2d's own buffers; the GEMM plans use 0-7 and 12 (Winograd's transformed
// tiles 0-2, the packed GEMMs 3-4, the 16-bit GEMM's widened operands 5-7, split-K partials 12).
inline constexpr int kPartialSlot = 8;        // per-image weight-gradient partials of the GEMM-based algorithms
inline constexpr int kSplitSlot = 9;          // the direct weight gradient's per-chunk partials (direct_split)
inline constexpr int kColumnsSlot = 10;       // im2col matrices
inline constexpr int kBlocksSlot = 11;        // im2col's outputs or output gradients in blocks of WIDE images
inline constexpr int kTotalSlot = 13;         // a 16-bit weight gradient's fp32 sum of the chunks before the last
inline constexpr int kWeightsSlot = 14;       // 16-bit weights widened for im2col's fp32 GEMMs
inline constexpr int kChannelsLastSlot = 15;  // the tensor-core implicit GEMM's channels-last copy (KMAJOR)
inline constexpr int kTapMajorSlot = 16;      // and its tap-major copy of the filter
// The per-image partials of one chunk of images stay within this many bytes.
inline constexpr std::int64_t kPartialBytes = std::int64_t{256} << 20;

// The GEMM family's space for `gemm` with fewer values, so that a GEMM-based algorithm does not
// crowd the others out of a random search; one variant per GEMM variant, ALGO = `algo` in front,
// named `name` (gemm.cl's variant) or `name`_<variant>.
SearchSpace gemm_based_space(const std::string& name, std::int64_t algo, const GemmShape& gemm,
                             const DeviceInfo& device);
// The GEMM configuration of a GEMM-based algorithm's configuration: every parameter but the
// algorithm's own (ALGO and `own`), on gemm.cl's default for gemm.cl's variant (the other variants
// have their own defaults).
Config gemm_part(const Config& config, std::initializer_list<const char*> own = {});
// `base` (a GEMM-based algorithm's default) on the first of gemm_gpu_tiles() that gives `gemm`, the
// algorithm's GEMM as launched, a work-group per compute unit of `device` and that `space` holds: the
// tile's parameters replace those `base` has. `base` where no tile does. Then K split where the
// launch is still short of work-items and `space` has the split (gemm_gpu_split).
Config on_gpu_tile(const Config& base, const GemmShape& gemm, const DeviceInfo& device, const SearchSpace& space);
// dw = (or += with `accumulate`) the sum of `images` partial planes of `plane` weights, in order
// (kernels/conv2d_sum_images.cl), in fp32, rounded to the shape's storage type once. The partials
// are fp32 (the direct kernel's) or of the shape's storage type (a 16-bit GEMM's C): `partial_dtype`.
// `last`: the last chunk of images (16-bit storage keeps the sum of the earlier ones in fp32, in
// `workspace`, and stores dw at the last).
KernelLaunch sum_images_launch(const Conv2dShape& shape, std::int64_t images, std::int64_t plane,
                               const cl::Buffer& partial, const Conv2dOperands& o, bool accumulate, bool last,
                               Workspace& workspace, DType partial_dtype = DType::kFp32);

std::int64_t at(const Config& config, const char* name);
std::int64_t ceil_div(std::int64_t a, std::int64_t b);
std::int64_t next_pow2(std::int64_t x);

// The 16 shape arguments of CONV_SHAPE_PARAMS in kernels/conv2d_common.cl.
std::vector<KernelArg> shape_args(const Conv2dShape& shape);
// storage.cl, activation.cl, conv2d_common.cl + `file` (or `files`, in order), with HAS_BIAS, ACT and the listed
// parameters of `config` as defines.
ProgramSource conv_program(const std::string& file, const Conv2dShape& shape, const Config& config,
                           std::initializer_list<const char*> params);
ProgramSource conv_program(const std::vector<std::string>& files, const Conv2dShape& shape, const Config& config,
                           std::initializer_list<const char*> params);
// A kernel launch with 3-D ranges.
KernelLaunch make_launch(ProgramSource program, std::string kernel, std::vector<KernelArg> args, std::int64_t g0,
                         std::int64_t g1, std::int64_t g2, std::int64_t l0, std::int64_t l1, std::int64_t l2);
// Forward epilogue y = act(y + bias) for algorithms that end in a plain GEMM (nothing when the
// shape has neither bias nor activation).
void add_bias_act(const Conv2dShape& shape, const Conv2dOperands& o, LaunchPlan& plan);
// Backward-weight: the bias gradient, when the shape has a bias.
void add_bias_grad(const Conv2dShape& shape, const Conv2dOperands& o, LaunchPlan& plan);
// A buffer to pass where a kernel declares a bias it will not read.
cl::Buffer bias_or(const Conv2dOperands& o, const cl::Buffer& stand_in);

// One variant of a GEMM-based algorithm's space: ALGO = `algo` first, then the parameters and
// constraints of `variant` (a variant of the GEMM's space), under the name `name`.
SearchSpace algorithm_variant(const std::string& name, std::int64_t algo, const SearchSpace::Variant& variant);

// A copy of `space` with the listed parameters restricted to the given values (the GEMM spaces
// are reused with fewer values, so that no algorithm's variant dominates a random search).
SearchSpace restrict_values(const SearchSpace& space,
                            const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& values);

// A copy of `space` without the listed parameters, each fixed at the given value in the constraints
// that read it (e.g. the GEMM space without VWL and DB for the implicit-GEMM kernel).
SearchSpace drop_parameters(const SearchSpace& space, const Config& fixed);

// Device limits every variant checks.
struct DeviceLimits {
  std::int64_t max_wg, max_x, max_y, max_z, local_bytes;
};
DeviceLimits device_limits(const DeviceInfo& device);

}  // namespace ocltune::conv2d_detail
