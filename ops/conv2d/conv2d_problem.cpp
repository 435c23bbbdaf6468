// conv2d as a tunable Problem: random tensors, float64 reference, verification with canaries.
#include "ops/conv2d/conv2d_problem.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/storage.h"
#include "harness/capability.h"
#include "harness/error.h"
#include "harness/session.h"
#include "ops/conv2d/conv2d_reference.h"
#include "ops/gemm/gemm_problem.h"

namespace ocltune {
namespace {

// One tensor in its buffer: host contents before the run and, when the op writes it, the
// reference and the mask of written elements.
struct Tensor {
  std::string name;
  std::int64_t offset = 0, elements = 0;
  std::vector<float> before;
  cl::Buffer buffer;
  bool written = false;
  std::vector<Expected> expected;
  std::vector<std::uint8_t> written_mask;
};

class Conv2dEvaluation : public Evaluation {
 public:
  Conv2dEvaluation(Session& session, const Conv2dShape& shape, const Conv2dLayout& layout,
                   double reference_macs = kConv2dFullCheckMacs);
  LaunchPlan plan(const Config& config) override;
  void reset() override;
  VerifyResult verify() override;

 private:
  void build_reference(double reference_macs);
  double tolerance() const;

  Session& session_;
  Conv2dShape shape_;
  Workspace workspace_;
  Tensor input_, weight_, output_, bias_;
  Conv2dOperands operands_;
  Config last_config_;  // verify() uses the tolerance of the algorithm last planned
};

void init_tensor(Tensor& t, const char* name, std::int64_t offset, std::int64_t elements, bool written,
                 std::uint64_t seed, DType dtype) {
  t.name = name;
  t.offset = offset;
  t.elements = elements;
  t.written = written;
  t.before.resize(static_cast<std::size_t>(offset + elements) + kCanaryWords);
  if (!written) {
    fill_uniform(t.before, seed);
    round_to_storage(t.before, dtype);  // the reference reads exactly what the buffer holds
    return;
  }
  // Written elements start as NaN, so a kernel that reads its output before writing it fails.
  std::fill(t.before.begin(), t.before.end(), canary_value());
  t.written_mask.assign(t.before.size(), 0);
  for (std::int64_t i = 0; i < elements; ++i) {
    t.before[static_cast<std::size_t>(offset + i)] = std::nanf("");
    t.written_mask[static_cast<std::size_t>(offset + i)] = 1;
  }
}

std::span<const float> data(const Tensor& t) {
  if (t.before.empty()) return {};
  return std::span<const float>(t.before).subspan(static_cast<std::size_t>(t.offset),
                                                  static_cast<std::size_t>(t.elements));
}

Conv2dEvaluation::Conv2dEvaluation(Session& session, const Conv2dShape& shape, const Conv2dLayout& layout,
                                   double reference_macs)
    : session_(session), shape_(shape), workspace_(session.context()) {
  shape.validate();
  const ConvDirection dir = shape.dir;
  const DType dt = shape.dtype;
  init_tensor(input_, "input", layout.input_offset, shape.input_elements(), dir == ConvDirection::kBackwardData, 1, dt);
  init_tensor(weight_, "weight", layout.weight_offset, shape.weight_elements(), dir == ConvDirection::kBackwardWeight,
              2, dt);
  init_tensor(output_, "output", layout.output_offset, shape.output_elements(), dir == ConvDirection::kForward, 3, dt);
  if (shape.bias) init_tensor(bias_, "bias", layout.bias_offset, shape.k, dir == ConvDirection::kBackwardWeight, 4, dt);
  build_reference(reference_macs);
  try {
    const cl::Context& ctx = session.context();
    for (Tensor* t : {&input_, &weight_, &output_, &bias_}) {
      if (t->before.empty()) continue;
      t->buffer = t->written ? cl::Buffer(ctx, CL_MEM_READ_WRITE, t->before.size() * dtype_bytes(dt))
                             : make_buffer(ctx, t->before, dt, CL_MEM_READ_ONLY);
    }
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  operands_ = {input_.buffer,       weight_.buffer,       output_.buffer,       bias_.buffer,
               layout.input_offset, layout.weight_offset, layout.output_offset, layout.bias_offset};
  reset();
}

void Conv2dEvaluation::build_reference(double reference_macs) {
  const Conv2dShape& s = shape_;
  const Conv2dReference ref(s, data(input_), data(weight_), data(output_), data(bias_));
  const std::int64_t terms = accumulation_length(s);
  // 16-bit results within the floor of the storage type (fp16 subnormals) pass whatever their
  // magnitude: the floor joins the scale as floor / tolerance (as in the GEMM's verification).
  const double floor_scale = s.dtype == DType::kFp32 ? 0.0 : dtype_abs_floor(s.dtype) / tolerance();
  const auto add = [&](Tensor& t, std::int64_t index, ReferenceValue v) {
    t.expected.push_back(
        {static_cast<std::size_t>(t.offset + index), saturate_to_storage(v.value, s.dtype), v.scale + floor_scale});
  };
  if (s.dir == ConvDirection::kForward) {
    const std::int64_t p = s.p(), q = s.q();
    for (const auto& e : reference_sample({s.n, s.k, p, q}, terms, reference_macs)) {
      add(output_, ((e[0] * s.k + e[1]) * p + e[2]) * q + e[3], ref.forward(e[0], e[1], e[2], e[3]));
    }
  } else if (s.dir == ConvDirection::kBackwardData) {
    for (const auto& e : reference_sample({s.n, s.c, s.h, s.w}, terms, reference_macs)) {
      add(input_, ((e[0] * s.c + e[1]) * s.h + e[2]) * s.w + e[3], ref.backward_data(e[0], e[1], e[2], e[3]));
    }
  } else {
    const std::int64_t cg = s.c_per_group();
    for (const auto& e : reference_sample({s.k, cg, s.r, s.s}, terms, reference_macs)) {
      add(weight_, ((e[0] * cg + e[1]) * s.r + e[2]) * s.s + e[3], ref.backward_weight(e[0], e[1], e[2], e[3]));
    }
    if (s.bias) {
      for (std::int64_t k = 0; k < s.k; ++k) add(bias_, k, ref.bias_gradient(k));
    }
  }
}

LaunchPlan Conv2dEvaluation::plan(const Config& config) {
  last_config_ = config;
  return conv2d_plan(shape_, operands_, config, workspace_);
}

void Conv2dEvaluation::reset() {
  try {
    for (Tensor* t : {&input_, &weight_, &output_, &bias_}) {
      if (t->written) {
        write_buffer(session_.queue(), t->buffer, t->before, shape_.dtype);
      }
    }
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

double Conv2dEvaluation::tolerance() const {
  // fp32 accumulation of L terms: rounding grows like sqrt(L) for random data (as for GEMM).
  // Winograd's transforms form intermediates larger than the products by a fixed factor.
  const double terms = static_cast<double>(accumulation_length(shape_));
  double tol = (8.0 * std::sqrt(terms) + 4.0) * 0x1.0p-24;
  if (value_or(last_config_, "ALGO", kAlgoDirect) == kAlgoWinograd) {
    tol *= winograd_magnitude_factor(static_cast<int>(value_or(last_config_, "WINO_M", 2)));
  }
  // TF32 operands carry up to 2^-10 relative error per product (as in the GEMM's verification).
  if (shape_.math == MathMode::kTf32 && shape_.dtype == DType::kFp32) tol += 8.0 * 0x1.0p-10 / std::sqrt(terms);
  // 16-bit storage rounds each result once more, by at most u(dtype) of its value (<= its scale);
  // the GEMM-based algorithms twice where the GEMM's 16-bit C goes on into an epilogue, col2im or a
  // sum of partials (ops/conv2d/conv2d_gemm1x1.cpp, conv2d_im2col.cpp).
  if (shape_.dtype != DType::kFp32) {
    const std::int64_t algo = value_or(last_config_, "ALGO", kAlgoDirect);
    const bool gemm_rounded = algo == kAlgoGemm1x1 || algo == kAlgoIm2col;
    tol += (gemm_rounded ? 2.0 : 1.0) * dtype_roundoff(shape_.dtype);
  }
  return tol;
}

VerifyResult Conv2dEvaluation::verify() {
  VerifyResult total;
  for (Tensor* t : {&input_, &weight_, &output_, &bias_}) {
    if (!t->written) continue;
    std::vector<float> after;
    try {
      after = read_buffer(session_.queue(), t->buffer, t->before.size(), shape_.dtype);
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
    const VerifyResult r = verify_output(after, t->before, t->expected, tolerance(), t->written_mask);
    total.max_error = std::max(total.max_error, r.max_error);
    total.mismatches += r.mismatches;
    if (!r.ok && total.ok) total.message = fmt::format("{}: {}", t->name, r.message);
    total.ok = total.ok && r.ok;
  }
  return total;
}

}  // namespace

bool Conv2dProblem::uses_matrix_units(const Config& config) const {
  const auto algo = config.find("ALGO");
  if (algo != config.end() && (algo->second == kAlgoImplicitGemmTf32 || algo->second == kAlgoIm2colTf32 ||
                               algo->second == kAlgoImplicitGemmMma16)) {
    return true;
  }
  return is_mma_config(config) || is_wgmma_config(config) || is_mma_packed_config(config) ||
         is_wgmma_packed_config(config);
}

std::vector<std::unique_ptr<Problem>> Conv2dProblem::equivalent_problems() const {
  // Backward directions take the gradient of the convolution's own output: no activation there.
  const std::vector<Activation> activations =
      shape_.dir == ConvDirection::kForward
          ? std::vector<Activation>{Activation::kNone, Activation::kRelu, Activation::kRelu6, Activation::kGelu,
                                    Activation::kSigmoid}
          : std::vector<Activation>{Activation::kNone};
  // A 16-bit shape: then the other 16-bit type (the same kernels but the mma's and the packing's types:
  // rows tuned in bf16 serve fp16 calls), then fp32 (decision 0063).
  std::vector<DType> dtypes = {shape_.dtype};
  if (shape_.dtype == DType::kFp16) dtypes.push_back(DType::kBf16);
  if (shape_.dtype == DType::kBf16) dtypes.push_back(DType::kFp16);
  if (shape_.dtype != DType::kFp32) dtypes.push_back(DType::kFp32);
  std::vector<std::unique_ptr<Problem>> out;
  for (const DType dtype : dtypes) {
    // The same bias first (its rows timed the same output pass), the plain activation first.
    for (const bool bias : {shape_.bias, !shape_.bias}) {
      for (const Activation act : activations) {
        Conv2dShape s = shape_;
        s.dtype = dtype;
        s.bias = bias;
        s.act = act;
        if (s.key() == shape_.key() && dtype == shape_.dtype) continue;
        out.push_back(std::make_unique<Conv2dProblem>(s));
      }
    }
  }
  return out;
}

std::vector<Config> Conv2dProblem::default_configs(const DeviceInfo& device) const {
  const SearchSpace space = conv2d_space(shape_, device);
  std::vector<Config> configs;
  // On a CPU the GEMM-based algorithms on the CPU GEMM kernel come first (decision 0042), on a GPU
  // the GEMM-based algorithm that fits the shape (decision 0044).
  if (satisfies(device, cpu_device())) {
    if (const std::optional<Config> cpu = conv2d_cpu_default_config(shape_); cpu && space.contains(*cpu)) {
      configs.push_back(*cpu);
    }
  } else if (device.type == DeviceType::kGpu) {
    if (const Config gpu = conv2d_gpu_default_config(shape_, device); space.contains(gpu)) configs.push_back(gpu);
  }
  for (const Config& c : conv2d_default_configs(shape_)) {
    // The tensor-core algorithms apply to tf32 (and 16-bit) shapes on every device but exist only
    // where the device has the capability.
    const std::int64_t algo = c.at("ALGO");
    const bool exists = (algo != kAlgoImplicitGemmTf32 && algo != kAlgoIm2colTf32 && algo != kAlgoImplicitGemmMma16) ||
                        space.contains(c);
    if (exists && std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  }
  return configs;
}

std::vector<Config> Conv2dProblem::seed_configs(const DeviceInfo& device) const {
  if (device.type != DeviceType::kGpu) return {};
  const Config base = conv2d_gpu_default_config(shape_, device);
  const std::int64_t algo = base.at("ALGO");
  const SearchSpace space = conv2d_space(shape_, device);
  std::vector<Config> seeds;
  if (algo == kAlgoImplicitGemmMma16) {
    // The register-staged tiles among the tensor-core GEMM's seeds (ops/gemm/gemm_seeds.cpp):
    // 128x128 of four 64x64 warp tiles first, with the 16-byte fragment loads, then smaller tiles
    // for the GEMMs with few rows (the first layers' filters) or few columns (7x7 images).
    struct Tile {
      std::int64_t bm, bn, bk, wm, wn, ldsm, bvec;
    };
    for (const Tile& t : {Tile{128, 128, 16, 2, 2, 0, 0}, Tile{128, 128, 16, 2, 2, 1, 1}, Tile{128, 128, 8, 2, 2, 1, 1},
                          Tile{128, 64, 16, 2, 2, 1, 0}, Tile{64, 128, 16, 2, 2, 1, 1}, Tile{64, 64, 16, 2, 2, 1, 0},
                          Tile{64, 64, 8, 2, 2, 0, 0}, Tile{128, 128, 16, 4, 2, 1, 0}, Tile{32, 64, 16, 1, 2, 1, 0},
                          Tile{64, 32, 16, 2, 1, 1, 0}, Tile{32, 32, 8, 1, 1, 0, 0}}) {
      Config c = base;
      c["BM"] = t.bm, c["BN"] = t.bn, c["BK"] = t.bk, c["WM"] = t.wm, c["WN"] = t.wn, c["LDSM"] = t.ldsm,
      c["BVEC"] = t.bvec;
      if (c != base && space.contains(c) && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) seeds.push_back(c);
    }
    // Then, where the operands are copied channels-last (KMAJOR), the same kind of tiles staged by
    // cp.async (the GEMM's staged seeds: three stages of unpadded 128x128 tiles fill 48 KiB).
    struct Staged {
      std::int64_t bm, bn, wm, wn, stages, swizzle;
    };
    for (const Staged& t : {Staged{128, 128, 2, 2, 3, 1}, Staged{128, 128, 2, 2, 2, 0}, Staged{128, 64, 2, 2, 3, 0},
                            Staged{64, 128, 2, 2, 3, 0}, Staged{64, 64, 2, 2, 3, 0}, Staged{64, 64, 2, 2, 2, 0}}) {
      Config c = base;
      c["BM"] = t.bm, c["BN"] = t.bn, c["BK"] = 16, c["WM"] = t.wm, c["WN"] = t.wn, c["LDSM"] = 1, c["BVEC"] = 0,
      c["DBUF"] = 0, c["STAGES"] = t.stages, c["SWIZZLE"] = t.swizzle;
      if (space.contains(c) && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) seeds.push_back(c);
    }
    return seeds;
  }
  if (algo != kAlgoIm2col && algo != kAlgoGemm1x1 && algo != kAlgoWinograd) return {};
  for (const Config& tile : GemmProblem(GemmShape{}).seed_configs(device)) {
    Config c = base;
    for (const auto& [name, value] : tile) {
      if (c.count(name)) c[name] = value;  // the GEMM's tile, on the algorithm's own parameters
    }
    if (c != base && space.contains(c) && std::find(seeds.begin(), seeds.end(), c) == seeds.end()) seeds.push_back(c);
  }
  return seeds;
}

std::vector<std::string> Conv2dProblem::kernel_files() const {
  std::vector<std::string> files = {"storage.cl",
                                    "activation.cl",
                                    "conv2d_common.cl",
                                    "conv2d_direct.cl",
                                    "conv2d_direct_bwd_data.cl",
                                    "conv2d_direct_bwd_weight.cl",
                                    "conv2d_igemm_gather.cl",
                                    "conv2d_igemm.cl",
                                    "conv2d_winograd.cl",
                                    "conv2d_depthwise.cl",
                                    "gemm_layout.cl",
                                    "gemm_epilogue.cl",
                                    "gemm.cl",
                                    "gemm_ksplit_sum.cl",
                                    "conv2d_sum_images.cl",
                                    "conv2d_im2col.cl",
                                    "gemm_cpu.cl"};
  if (shape_.math == MathMode::kTf32 && shape_.dtype == DType::kFp32)
    files.insert(files.end(), {"tile_order.cl", "mma_tf32.cl", "conv2d_igemm_mma.cl", "conv2d_transpose.cl",
                               "gemm_mma.cl", "wgmma.cl", "gemm_wgmma.cl", "gemm_pack_tf32.cl", "packed_pipeline.cl",
                               "gemm_wgmma_packed.cl", "conv2d_im2col_tf32.cl"});
  // 16-bit storage: the tensor-core implicit GEMM (implicit_gemm_mma16), and the GEMM-based
  // algorithms run the GEMM family's 16-bit plans (conversions, packing, tensor-core kernels).
  if (shape_.dtype != DType::kFp32) {
    files.insert(files.end(), {"mma_tf32.cl", "conv2d_igemm_mma.cl", "conv2d_transpose.cl"});
    GemmShape gemm;
    gemm.dtype = shape_.dtype;
    gemm.math = shape_.math;
    for (const std::string& f : GemmProblem(gemm).kernel_files()) {
      if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
    }
  }
  return files;
}

std::unique_ptr<Evaluation> Conv2dProblem::instantiate(Session& session) const {
  return std::make_unique<Conv2dEvaluation>(session, shape_, layout_);
}

std::unique_ptr<Evaluation> Conv2dProblem::instantiate_for_check(Session& session) const {
  return std::make_unique<Conv2dEvaluation>(session, shape_, layout_, kConv2dCheckMacs);
}

}  // namespace ocltune
