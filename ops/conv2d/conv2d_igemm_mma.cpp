// The tensor-core implicit-GEMM algorithms of conv2d (kernels/conv2d_igemm_mma.cl), both on the
// tensor-core GEMM's space (ops/gemm/gemm_mma.cpp) over the same per-group GEMMs as the FMA implicit
// GEMM, offered only where the GEMM offers it (NVIDIA, compute capability >= 8.0):
// - implicit_gemm_tf32: fp32 tensors in math "tf32", one TF32 value per word of a staged tile;
// - implicit_gemm_mma16: fp16 / bf16 tensors in any math mode, two 16-bit values per word and
//   m16n8k16 mma with fp32 sums, as cuDNN's tensor-core convolutions of 16-bit tensors compute (their
//   products are exact; PyTorch's autocast convolutions run on them by default).
// A word is 32 bytes of K per mma in both, so the tile tunables (BK in words) mean the same.
#include <algorithm>

#include "ops/conv2d/conv2d_algorithms.h"

namespace ocltune::conv2d_detail {
namespace {

// K by filter tap outside and channel inside (the kernel's TAP_OUTER) where a staged tile's K
// values share one tap: the channels the GEMM sums per tap are a multiple of the tile's K values,
// and each thread gathers B from one column (a work-group's threads a multiple of BN).
bool tap_outer(const Conv2dShape& s, const Config& c) {
  const std::int64_t tile_k = at(c, "BK") * (s.dtype == DType::kFp32 ? 1 : 2);
  const std::int64_t channels = s.dir == ConvDirection::kForward ? s.c_per_group() : s.k_per_group();
  return s.dir != ConvDirection::kBackwardWeight && channels % tile_k == 0 &&
         (32 * at(c, "WM") * at(c, "WN")) % at(c, "BN") == 0;
}

// With the tap-outer order and more than one tap, the operands are copied with K contiguous
// (KMAJOR): every channel offset a tile reads is then a multiple of TILE_K values, 16-byte aligned.
// The copy is one more pass over the gathered tensor, which the taps repay: measured on an H100 in
// bf16 (2026-12-07), resnet50's 3x3 layers at 28x28 and below took 0.66-0.87 of the time of the
// NCHW gathers, its 1x1 layers 1.06-1.54 (each value read once either way). 16-bit tensors only for
// now: the TF32 kernel passes its GPU tests with the copies, but no TF32 figure says they pay there
// (fp32 copies move twice the bytes), and the shipped tf32 rows were tuned without them.
// The copies stay within kPartialBytes, like the other workspaces of a call (a batch-256 layer of
// 64 channels at 224 x 224 would take 1.6 GB more): larger tensors keep the NCHW gathers.
bool kmajor_operands(const Conv2dShape& s, const Config& c) {
  const std::int64_t gathered = s.dir == ConvDirection::kForward ? s.input_elements() : s.output_elements();
  const std::int64_t copied = static_cast<std::int64_t>(dtype_bytes(s.dtype)) * (s.weight_elements() + gathered);
  return tap_outer(s, c) && s.r * s.s > 1 && s.dtype != DType::kFp32 && copied <= kPartialBytes;
}

// The tensor-core GEMM's variant for `s`'s GEMM as the kernel stages it (32-bit words of K), under
// `name` with ALGO = `algo`, or an empty space without the capability. With `staged`, its cp.async
// stages too (STAGES 2-3, 16-bit tensors), on the KMAJOR operands only: their tiles are rows of
// 16-byte pieces (A as stored, B as Bs[n][k]), where the NCHW gathers have none.
SearchSpace mma_variant(const Conv2dShape& s, const DeviceInfo& device, const std::string& name, std::int64_t algo,
                        const std::vector<std::int64_t>& bk, bool staged) {
  GemmShape g = implicit_gemm(s);
  g.math = MathMode::kTf32;  // the GEMM's mma_tf32 variant: its tiles, constraints and capability
  g.dtype = DType::kFp32;
  // The staged B tile is Bs[n][k] as a transposed B's is (the GEMM's local-memory and BVEC rules).
  g.trans_a = false;
  g.trans_b = staged;
  const SearchSpace gemm = gemm_space(g, device);
  const auto mma = std::find_if(gemm.variants().begin(), gemm.variants().end(),
                                [](const SearchSpace::Variant& v) { return v.name == "mma_tf32"; });
  if (mma == gemm.variants().end()) return {};  // no tensor cores: the algorithm is absent
  SearchSpace one(mma->name);
  for (const Parameter& p : mma->parameters) one.add(p.name, p.values, p.meaning);
  for (const Constraint& c : mma->constraints) one.constrain(c.description, c.params, c.holds);
  // The gathered im2col matrix has no 16-byte rows to copy with cp.async: its tiles go through
  // registers (STAGES = 0); the KMAJOR copies have them (staged). No FRAG_DBUF; the kernel keeps the
  // plain launch order (GROUP_M = 1). Fewer tile values than the GEMM, so that these algorithms do
  // not crowd the others out of a random search.
  Config fixed = {{"MMA", 1}, {"GROUP_M", 1}, {"FRAG_DBUF", 0}};
  if (!staged) fixed["STAGES"] = 0;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> values = {
      {"BM", {32, 64, 128}}, {"BN", {32, 64, 128}}, {"BK", bk}, {"WM", {1, 2, 4}}, {"WN", {1, 2, 4}}};
  if (staged) values.emplace_back("STAGES", std::vector<std::int64_t>{0, 2, 3});
  SearchSpace space = restrict_values(drop_parameters(one, fixed), values);
  if (staged) {
    space.constrain("cp.async stages only on the KMAJOR operands (16-bit, tap-outer K, more than one tap)",
                    {"STAGES", "BK", "BN", "WM", "WN"},
                    [s](const Config& c) { return at(c, "STAGES") == 0 || kmajor_operands(s, c); });
  }
  SearchSpace variant = algorithm_variant(name, algo, space.variants().front());
  // Rows tuned before the stages (2026-12-07) staged through registers: STAGES = 0, its first value.
  if (staged) variant.added_later("STAGES");
  return variant;
}

// 64x64 tiles of four 32x32 warp tiles, shrunk to 32 along a GEMM dimension of 32 or less.
Config mma_default(const Conv2dShape& s, std::int64_t algo) {
  const GemmShape g = implicit_gemm(s);
  Config c = {{"ALGO", algo},
              {"BM", g.m <= 32 ? 32 : 64},
              {"BN", g.n <= 32 ? 32 : 64},
              {"BK", 16},
              {"WM", 2},
              {"WN", 2},
              {"DBUF", 1},
              {"LDSM", 0},
              {"BVEC", 0},
              {"SWIZZLE", 0}};
  if (algo == kAlgoImplicitGemmMma16) c["STAGES"] = 0;  // registers: cp.async stages are unmeasured
  return c;
}

// The weight gradient's K split (the kernel's KSPLIT), from the shape and the tile: work-groups for
// a large GPU (256: two per compute unit of a 128-unit device) while each part keeps at least 8 K
// tiles; 1 for the other directions. Not a tuning parameter, so that the tf32 rows tuned before it
// stay points of the space.
std::int64_t weight_gradient_split(const Conv2dShape& s, const Config& c) {
  if (s.dir != ConvDirection::kBackwardWeight) return 1;
  const GemmShape g = implicit_gemm(s);
  const std::int64_t tile_k = at(c, "BK") * (s.dtype == DType::kFp32 ? 1 : 2);
  const std::int64_t tiles = ceil_div(g.m, at(c, "BM")) * ceil_div(g.n, at(c, "BN")) * s.groups;
  const std::int64_t k_tiles = ceil_div(g.k, tile_k);
  std::int64_t split = 1;
  while (split < 128 && tiles * split < 256 && k_tiles / (2 * split) >= 8) split *= 2;
  return split;
}

}  // namespace

KernelLaunch transpose_launch(const Conv2dShape& s, std::int64_t batches, std::int64_t rows, std::int64_t cols,
                              const cl::Buffer& in, std::int64_t in_offset, const cl::Buffer& out) {
  ProgramSource program;
  program.files = {"storage.cl", "conv2d_transpose.cl"};
  program.defines = {dtype_define(s.dtype)};
  return make_launch(std::move(program), "conv2d_transpose",
                     {static_cast<cl_int>(rows), static_cast<cl_int>(cols), in, static_cast<cl_long>(in_offset), out},
                     ceil_div(cols, 32) * 32, ceil_div(rows, 32) * 8, batches, 32, 8, 1);
}

namespace {

// The KMAJOR operands (see conv2d_igemm_mma.cl) copied into the workspace ahead of the convolution:
// the gathered tensor in channels-last order and the filter in tap-major order; the GEMM's A and B
// arguments (after the shape's) then point at the copies.
void add_kmajor_copies(const Conv2dShape& s, const Conv2dOperands& o, Workspace& workspace,
                       std::vector<KernelArg>& args, LaunchPlan& plan) {
  const std::size_t word = dtype_bytes(s.dtype);
  const bool forward = s.dir == ConvDirection::kForward;
  const cl::Buffer& gathered = forward ? o.input : o.output;
  const std::int64_t gathered_offset = forward ? o.input_offset : o.output_offset;
  const std::int64_t channels = forward ? s.c : s.k, plane = forward ? s.h * s.w : s.p() * s.q();
  const cl::Buffer b = workspace.get(static_cast<std::size_t>(s.n * channels * plane) * word, kChannelsLastSlot);
  const cl::Buffer a = workspace.get(static_cast<std::size_t>(s.weight_elements()) * word, kTapMajorSlot);
  plan.kernels.push_back(transpose_launch(s, s.n, channels, plane, gathered, gathered_offset, b));  // [n][HW][C]
  if (forward) {  // w[k][c][rs] -> [k][rs][c]
    plan.kernels.push_back(transpose_launch(s, s.k, s.c_per_group(), s.r * s.s, o.weight, o.weight_offset, a));
  } else {  // per group w[k][c rs] -> [c rs][k]: w^T with the taps of each channel together
    plan.kernels.push_back(
        transpose_launch(s, s.groups, s.k_per_group(), s.c_per_group() * s.r * s.s, o.weight, o.weight_offset, a));
  }
  const std::size_t at = args.size() - 8;  // A, a_offset, B, b_offset, C, c_offset, bias, bias_offset
  args[at] = a;
  args[at + 1] = cl_long{0};
  args[at + 2] = b;
  args[at + 3] = cl_long{0};
}

void mma_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace, LaunchPlan& plan) {
  const GemmShape g = implicit_gemm(s);
  ProgramSource program =
      conv_program(std::vector<std::string>{"conv2d_igemm_gather.cl", "mma_tf32.cl", "conv2d_igemm_mma.cl"}, s, c,
                   {"BM", "BN", "BK", "WM", "WN", "DBUF", "LDSM", "BVEC", "SWIZZLE"});
  program.defines.emplace_back("DIR", std::to_string(static_cast<int>(s.dir)));
  add_phases(s, program);
  if (s.dtype != DType::kFp32) program.defines.emplace_back("MMA_INPUT", std::to_string(static_cast<int>(s.dtype)));
  const std::int64_t bm = at(c, "BM"), bn = at(c, "BN"), wm = at(c, "WM"), wn = at(c, "WN");
  program.defines.emplace_back("TAP_OUTER", tap_outer(s, c) ? "1" : "0");
  const bool kmajor = kmajor_operands(s, c);
  program.defines.emplace_back("KMAJOR", kmajor ? "1" : "0");
  // cp.async stages (the 16-bit space's STAGES; its constraint keeps them to the KMAJOR operands).
  const std::int64_t stages = c.count("STAGES") ? c.at("STAGES") : 0;
  program.defines.emplace_back("STAGES", std::to_string(stages));
  if (stages >= 2) program.defines.emplace_back("B_NK", "1");
  const std::int64_t split = weight_gradient_split(s, c);
  program.defines.emplace_back("KSPLIT", std::to_string(split));
  std::vector<KernelArg> args = implicit_gemm_args(s, o);
  if (kmajor) add_kmajor_copies(s, o, workspace, args, plan);
  const std::int64_t plane = s.weight_elements();
  cl::Buffer partial;
  if (split > 1) {  // the output is the partial planes: args end with out, out_offset, bias, bias_offset
    partial = workspace.get(static_cast<std::size_t>(split * plane) * sizeof(float), kPartialSlot);
    args[args.size() - 4] = partial;
    args[args.size() - 3] = cl_long{0};
  }
  plan.kernels.push_back(make_launch(std::move(program), "conv2d_igemm_mma", std::move(args),
                                     ceil_div(g.n, bn) * 32 * wn, ceil_div(g.m, bm) * wm,
                                     s.groups * split * phase_count(s), 32 * wn, wm, 1));
  if (split > 1) {
    plan.kernels.push_back(sum_images_launch(s, split, plane, partial, o, false, true, workspace, DType::kFp32));
  }
  if (s.dir == ConvDirection::kBackwardWeight) add_bias_grad(s, o, plan);
}

}  // namespace

SearchSpace igemm_tf32_space(const Conv2dShape& s, const DeviceInfo& device) {
  return mma_variant(s, device, "implicit_gemm_tf32", kAlgoImplicitGemmTf32, {8, 16, 32}, false);
}

Config igemm_tf32_default(const Conv2dShape& s) { return mma_default(s, kAlgoImplicitGemmTf32); }

void igemm_tf32_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                     LaunchPlan& plan) {
  mma_plan(s, o, c, workspace, plan);
}

SearchSpace igemm_mma16_space(const Conv2dShape& s, const DeviceInfo& device) {
  // Two values per word double the registers a thread gathers a tile into: no 32-word tiles.
  return mma_variant(s, device, "implicit_gemm_mma16", kAlgoImplicitGemmMma16, {8, 16}, true);
}

Config igemm_mma16_default(const Conv2dShape& s) { return mma_default(s, kAlgoImplicitGemmMma16); }

void igemm_mma16_plan(const Conv2dShape& s, const Conv2dOperands& o, const Config& c, Workspace& workspace,
                      LaunchPlan& plan) {
  mma_plan(s, o, c, workspace, plan);
}

}  // namespace ocltune::conv2d_detail
