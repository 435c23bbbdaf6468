// GEMM as a tunable Problem: random operands, float64 reference, verification with canaries.
#include "ops/gemm/gemm_problem.h"

#include <algorithm>
#include <cmath>

#include "core/storage.h"
#include "harness/capability.h"
#include "harness/error.h"
#include "harness/session.h"

namespace ocltune {
namespace {

class GemmEvaluation : public Evaluation {
 public:
  GemmEvaluation(Session& session, const GemmShape& shape, const GemmLayout& layout);
  LaunchPlan plan(const Config& config) override { return gemm_plan(shape_, operands_, config, workspace_); }
  void reset() override;
  VerifyResult verify() override;

 private:
  double tolerance() const;
  double a_at(std::int64_t b, std::int64_t m, std::int64_t k) const;
  double b_at(std::int64_t b, std::int64_t k, std::int64_t n) const;
  std::size_t c_index(std::int64_t b, std::int64_t m, std::int64_t n) const;
  void build_reference();

  Session& session_;
  GemmShape shape_;
  GemmOperands operands_;
  Workspace workspace_;
  std::vector<float> a_, b_, bias_, c_before_;
  std::vector<std::uint8_t> written_;
  std::vector<Expected> expected_;
};

GemmEvaluation::GemmEvaluation(Session& session, const GemmShape& shape, const GemmLayout& layout)
    : session_(session), shape_(shape), workspace_(session.context()) {
  GemmOperands& o = operands_;
  o.lda = shape.packed_lda() + layout.lda_pad;
  o.ldb = shape.packed_ldb() + layout.ldb_pad;
  o.ldc = shape.packed_ldc() + layout.ldc_pad;
  o.a_offset = layout.a_offset;
  o.b_offset = layout.b_offset;
  o.c_offset = layout.c_offset;
  o.stride_a = shape.rows_a() * o.lda + layout.stride_pad;
  o.stride_b = shape.rows_b() * o.ldb + layout.stride_pad;
  o.stride_c = shape.m * o.ldc + layout.stride_pad;
  check_operands(shape, o);

  const auto elements = [&](std::int64_t offset, std::int64_t stride, std::int64_t rows, std::int64_t ld) {
    return static_cast<std::size_t>(offset + (shape.batch - 1) * stride + rows * ld);
  };
  a_.resize(elements(o.a_offset, o.stride_a, shape.rows_a(), o.lda));
  b_.resize(elements(o.b_offset, o.stride_b, shape.rows_b(), o.ldb));
  c_before_.assign(elements(o.c_offset, o.stride_c, shape.m, o.ldc) + kCanaryWords, canary_value());
  fill_uniform(a_, 1);
  fill_uniform(b_, 2);
  // The reference multiplies exactly what the buffers hold.
  round_to_storage(a_, shape.dtype);
  round_to_storage(b_, shape.dtype);
  if (shape.bias) {
    // Behind an offset, so that a kernel that ignores bias_offset fails.
    o.bias_offset = layout.bias_offset;
    bias_.resize(static_cast<std::size_t>(o.bias_offset + shape.n));
    fill_uniform(bias_, 4);
    round_to_storage(bias_, shape.dtype);
  }
  // Written elements start random when C is read (beta != 0) and NaN otherwise, so a kernel that
  // reads C although beta == 0 produces NaN and fails.
  std::vector<float> c_random(c_before_.size());
  fill_uniform(c_random, 3);
  round_to_storage(c_random, shape.dtype);
  written_.assign(c_before_.size(), 0);
  for (std::int64_t bt = 0; bt < shape.batch; ++bt) {
    for (std::int64_t m = 0; m < shape.m; ++m) {
      for (std::int64_t n = 0; n < shape.n; ++n) {
        const std::size_t i = c_index(bt, m, n);
        written_[i] = 1;
        c_before_[i] = shape.beta != 0.0f ? c_random[i] : std::nanf("");
      }
    }
  }
  build_reference();

  try {
    const cl::Context& ctx = session.context();
    o.a = make_buffer(ctx, a_, shape.dtype, CL_MEM_READ_ONLY);
    o.b = make_buffer(ctx, b_, shape.dtype, CL_MEM_READ_ONLY);
    o.c = cl::Buffer(ctx, CL_MEM_READ_WRITE, c_before_.size() * dtype_bytes(shape.dtype));
    if (shape.bias) o.bias = make_buffer(ctx, bias_, shape.dtype, CL_MEM_READ_ONLY);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  reset();
}

double GemmEvaluation::a_at(std::int64_t bt, std::int64_t m, std::int64_t k) const {
  const GemmOperands& o = operands_;
  const std::int64_t i = o.a_offset + bt * o.stride_a + (shape_.trans_a ? k * o.lda + m : m * o.lda + k);
  return a_[static_cast<std::size_t>(i)];
}

double GemmEvaluation::b_at(std::int64_t bt, std::int64_t k, std::int64_t n) const {
  const GemmOperands& o = operands_;
  const std::int64_t i = o.b_offset + bt * o.stride_b + (shape_.trans_b ? n * o.ldb + k : k * o.ldb + n);
  return b_[static_cast<std::size_t>(i)];
}

std::size_t GemmEvaluation::c_index(std::int64_t bt, std::int64_t m, std::int64_t n) const {
  return static_cast<std::size_t>(operands_.c_offset + bt * operands_.stride_c + m * operands_.ldc + n);
}

void GemmEvaluation::build_reference() {
  const GemmShape& s = shape_;
  // Results within the floor of the storage type (fp16 subnormals, flushed fp32 subnormals) pass
  // whatever their magnitude: the floor joins the scale as floor / tolerance.
  const double floor_scale = dtype_abs_floor(s.dtype) / tolerance();
  auto add_expected = [&](std::int64_t bt, std::int64_t m, std::int64_t n) {
    double dot = 0, magnitude = 0;
    for (std::int64_t k = 0; k < s.k; ++k) {
      const double p = a_at(bt, m, k) * b_at(bt, k, n);
      dot += p;
      magnitude += std::abs(p);
    }
    const std::size_t i = c_index(bt, m, n);
    const double c = s.beta != 0.0f ? static_cast<double>(c_before_[i]) : 0.0;
    const double bias = s.bias ? static_cast<double>(bias_[static_cast<std::size_t>(operands_.bias_offset + n)]) : 0.0;
    const double value = static_cast<double>(s.alpha) * dot + static_cast<double>(s.beta) * c + bias;
    const double scale =
        std::abs(static_cast<double>(s.alpha)) * magnitude + std::abs(static_cast<double>(s.beta) * c) + std::abs(bias);
    const ActivatedValue y = activate_reference(s.act, value, scale);
    expected_.push_back({i, saturate_to_storage(y.value, s.dtype), y.scale + floor_scale});
  };
  const double macs =
      static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) * static_cast<double>(s.batch);
  for (std::int64_t bt = 0; bt < s.batch; ++bt) {
    if (macs <= kGemmFullCheckMacs) {
      for (std::int64_t m = 0; m < s.m; ++m)
        for (std::int64_t n = 0; n < s.n; ++n) add_expected(bt, m, n);
      continue;
    }
    // Four shifted diagonals: every row and every column of C is sampled.
    for (std::int64_t d = 0; d < 4; ++d) {
      const std::int64_t rows = std::max(s.m, s.n);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t m = r % s.m;
        const std::int64_t n = (r + d * (s.n / 4 + 1)) % s.n;
        add_expected(bt, m, n);
      }
    }
    add_expected(bt, s.m - 1, s.n - 1);
  }
}

void GemmEvaluation::reset() {
  try {
    write_buffer(session_.queue(), operands_.c, c_before_, shape_.dtype);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

VerifyResult GemmEvaluation::verify() {
  std::vector<float> after;
  try {
    after = read_buffer(session_.queue(), operands_.c, c_before_.size(), shape_.dtype);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  return verify_output(after, c_before_, expected_, tolerance(), written_);
}

double GemmEvaluation::tolerance() const {
  // fp32 accumulation over K terms: rounding grows like sqrt(K) for random data; a dropped or
  // doubled term (an error near 1/K of the magnitude) still fails up to K of about 16k.
  const double k = static_cast<double>(shape_.k);
  double tolerance = (8.0 * std::sqrt(k) + 4.0) * 0x1.0p-24;
  // TF32 operands carry up to 2^-10 relative error per product; summed with random signs this is
  // about 0.8 * 2^-10 / sqrt(K) of the magnitude: allow 8 times that.
  if (shape_.math == MathMode::kTf32 && shape_.dtype == DType::kFp32) tolerance += 8.0 * 0x1.0p-10 / std::sqrt(k);
  // 16-bit storage rounds each result once more, by at most u(dtype) of its value (<= its scale).
  if (shape_.dtype != DType::kFp32) tolerance += dtype_roundoff(shape_.dtype);
  return tolerance;
}

}  // namespace

Config GemmProblem::default_config(const DeviceInfo& device) const {
  // The honest built-in for a user who never tunes is the fastest untuned kernel the device has.
  // On a CPU the cpu variant's tile runs 1024^3 about 25x faster than gemm.cl's on PoCL
  // (docs/decisions/0026-cpu-gemm-variant.md). Where tensor cores are allowed (tf32 math, 16-bit
  // storage) the untuned kernels on packed operands beat gemm.cl's by 12-30x on the H200 (probe47,
  // probe48: fp16 4096^3 340 us with wgmma, 442 us with mma.sync, 10.8 ms through fp32 copies).
  // Their 128 x 128 tiles need M and N above 64; smaller shapes get 64 x 64 tiles (the shapes of
  // the tuned winners of the attention products, probe48: 96 x 512x64x512 fp16 in 73 us with
  // mma.sync, against 576 us for gemm.cl's default through fp32 copies).
  Config wgmma_small = gemm_wgmma_packed_default_config();
  wgmma_small["BM"] = wgmma_small["BN"] = 64;
  wgmma_small["STAGES"] = 4;
  Config mma_small = gemm_mma_packed_default_config();
  mma_small["BM"] = mma_small["BN"] = 64;
  mma_small["BK"] = 8;
  mma_small["WM"] = 1;
  mma_small["STAGES"] = 4;
  const SearchSpace space = gemm_space(shape_, device);
  for (const Config& c : {gemm_cpu_default_config(shape_), gemm_wgmma_packed_default_config(),
                          gemm_mma_packed_default_config(), wgmma_small, mma_small}) {
    if (space.variants().size() > 1 && space.contains(c)) return c;
  }
  // fp32 on a GPU: the largest of gemm.cl's GPU tiles that fills the device (a 4096^3 product:
  // 256x128 tiles on the H200; 1024^3: 64x64), else the small tile every device runs.
  // A problem that no tile fills (small M x N, long K) splits K as well.
  if (device.type == DeviceType::kGpu) {
    const auto accepts = [&](const Config& c) { return space.contains(c); };
    const Config tile = gemm_gpu_tile(shape_, device.compute_units, accepts).value_or(gemm_default_config(shape_));
    return gemm_gpu_split(tile, shape_, device, accepts);
  }
  return gemm_default_config(shape_);
}

std::vector<Config> GemmProblem::default_configs(const DeviceInfo& device) const {
  std::vector<Config> configs = {default_config(device)};
  const auto add = [&](const Config& c) {
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  };
  // gemm.cl's small tile, a point of every space; not where the first default is one of the GPU
  // tiles, which beat it 2-4x on the H200: on NVIDIA its build alone took seconds of a run's budget.
  const std::vector<Config>& tiles = gemm_gpu_tiles();
  if (std::find(tiles.begin(), tiles.end(), configs.front()) == tiles.end()) add(gemm_default_config(shape_));
  const SearchSpace space = gemm_space(shape_, device);
  if (space.variants().size() > 1 && space.contains(gemm_mma_default_config())) add(gemm_mma_default_config());
  if (space.variants().size() > 1 && space.contains(gemm_wgmma_default_config())) add(gemm_wgmma_default_config());
  if (space.variants().size() > 1 && space.contains(gemm_mma_packed_default_config())) {
    add(gemm_mma_packed_default_config());
  }
  if (space.variants().size() > 1 && space.contains(gemm_wgmma_packed_default_config())) {
    add(gemm_wgmma_packed_default_config());
  }
  if (space.variants().size() > 1 && space.contains(gemm_cpu_default_config(shape_)))
    add(gemm_cpu_default_config(shape_));
  return configs;
}

std::vector<std::string> GemmProblem::kernel_files() const {
  std::vector<std::string> files = {"gemm_layout.cl", "activation.cl", "gemm_epilogue.cl",
                                    "gemm.cl",        "gemm_cpu.cl",   "gemm_ksplit_sum.cl"};
  if (shape_.dtype != DType::kFp32) files.insert(files.end(), {"storage.cl", "gemm_convert.cl", "gemm_pack_16bit.cl"});
  if (shape_.tensor_cores_allowed()) {
    files.insert(files.end(), {"tile_order.cl", "mma_tf32.cl", "gemm_mma.cl", "storage.cl", "wgmma.cl", "gemm_wgmma.cl",
                               "gemm_pack_tf32.cl", "gemm_wgmma_packed.cl", "packed_pipeline.cl", "mma_packed.cl",
                               "gemm_mma_packed.cl"});
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

std::unique_ptr<Evaluation> GemmProblem::instantiate(Session& session) const {
  return std::make_unique<GemmEvaluation>(session, shape_, layout_);
}

std::vector<Problem::DeviceBuffer> GemmProblem::device_buffers() const {
  const double size = static_cast<double>(dtype_bytes(shape_.dtype)) * static_cast<double>(shape_.batch);
  std::vector<DeviceBuffer> buffers = {{"A", size * static_cast<double>(shape_.m) * static_cast<double>(shape_.k)},
                                       {"B", size * static_cast<double>(shape_.k) * static_cast<double>(shape_.n)},
                                       {"C", size * static_cast<double>(shape_.m) * static_cast<double>(shape_.n)}};
  if (shape_.bias) buffers.push_back({"bias", static_cast<double>(dtype_bytes(shape_.dtype) * shape_.n)});
  return buffers;
}

}  // namespace ocltune
