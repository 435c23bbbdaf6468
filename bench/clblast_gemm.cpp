// CLBlast as the GEMM baseline: clblast::Gemm, or GemmStridedBatched for batched shapes.
#include "bench/clblast_gemm.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/operation_timer.h"
#include "core/storage.h"
#include "harness/error.h"
#include "harness/session.h"
#include "harness/verify.h"
#include "ops/gemm/gemm_clblast.h"

namespace ocltune::bench {
namespace {

class ClblastGemm : public Timed {
 public:
  ClblastGemm(Session& session, const GemmShape& shape, std::string note);
  std::string label() const override {
    return fmt::format("clblast::{}<{}>{}{}", shape_.batch > 1 ? "GemmStridedBatched" : "Gemm",
                       shape_.dtype == DType::kFp16 ? "half" : "float", note_,
                       host_clock_ ? " (host clock: markers carry no timestamps)" : "");
  }
  std::string verify() override;
  double run_ns() override {
    const OperationTime t = time_operation(session_.queue(), [&](cl::Event& e) { call(e); });
    host_clock_ = t.host_clock;
    return t.span_ns;
  }

 private:
  void call(cl::Event& event);
  std::vector<Expected> reference() const;

  Session& session_;
  GemmShape shape_;
  std::string note_;
  GemmOperands o_;
  std::vector<float> a_, b_, c_;
  bool host_clock_ = false;
};

ClblastGemm::ClblastGemm(Session& session, const GemmShape& shape, std::string note)
    : session_(session), shape_(shape), note_(std::move(note)) {
  const std::int64_t batch = shape.batch;
  a_.resize(static_cast<std::size_t>(batch * shape.rows_a() * shape.packed_lda()));
  b_.resize(static_cast<std::size_t>(batch * shape.rows_b() * shape.packed_ldb()));
  c_.resize(static_cast<std::size_t>(batch * shape.m * shape.packed_ldc()));
  fill_uniform(a_, 21);
  fill_uniform(b_, 22);
  fill_uniform(c_, 23);  // finite: beta = 0 must not read C, but 0 * NaN is not ours to test here
  for (std::vector<float>* v : {&a_, &b_, &c_}) round_to_storage(*v, shape.dtype);  // what the buffers hold
  try {
    const cl::Context& ctx = session.context();
    o_ = packed_operands(shape, make_buffer(ctx, a_, shape.dtype, CL_MEM_READ_ONLY),
                         make_buffer(ctx, b_, shape.dtype, CL_MEM_READ_ONLY),
                         cl::Buffer(ctx, CL_MEM_READ_WRITE, c_.size() * dtype_bytes(shape.dtype)));
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

void ClblastGemm::call(cl::Event& event) { clblast_gemm(session_.queue(), shape_, o_, &event); }

// Four shifted diagonals of every batch (every row and column of C), as GEMM's own verification.
std::vector<Expected> ClblastGemm::reference() const {
  const GemmShape& s = shape_;
  std::vector<Expected> expected;
  const auto at = [](const std::vector<float>& v, std::int64_t i) {
    return static_cast<double>(v[static_cast<std::size_t>(i)]);
  };
  for (std::int64_t bt = 0; bt < s.batch; ++bt) {
    for (std::int64_t d = 0; d < 4; ++d) {
      for (std::int64_t r = 0; r < std::max(s.m, s.n); ++r) {
        const std::int64_t m = r % s.m, n = (r + d * (s.n / 4 + 1)) % s.n;
        double dot = 0, magnitude = 0;
        for (std::int64_t k = 0; k < s.k; ++k) {
          const double a = at(a_, bt * o_.stride_a + (s.trans_a ? k * o_.lda + m : m * o_.lda + k));
          const double b = at(b_, bt * o_.stride_b + (s.trans_b ? n * o_.ldb + k : k * o_.ldb + n));
          dot += a * b;
          magnitude += std::abs(a * b);
        }
        const std::int64_t i = bt * o_.stride_c + m * o_.ldc + n;
        const double c = at(c_, i);
        expected.push_back({static_cast<std::size_t>(i), s.alpha * dot + s.beta * c,
                            std::abs(s.alpha) * magnitude + std::abs(s.beta * c)});
      }
    }
  }
  return expected;
}

std::string ClblastGemm::verify() {
  std::vector<float> after;
  try {
    write_buffer(session_.queue(), o_.c, c_, shape_.dtype);
    cl::Event e;
    call(e);
    after = read_buffer(session_.queue(), o_.c, c_.size(), shape_.dtype);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  double tolerance = (8.0 * std::sqrt(static_cast<double>(shape_.k)) + 4.0) * 0x1.0p-24;
  // HGEMM may accumulate in fp16 (CLBlast does): up to K roundings of the running sum.
  if (shape_.dtype == DType::kFp16) tolerance += static_cast<double>(shape_.k + 1) * dtype_roundoff(DType::kFp16);
  std::vector<std::uint8_t> written(c_.size(), 1);  // packed C: every element is written
  const VerifyResult r = verify_output(after, c_, reference(), tolerance, written);
  return r.ok ? "" : "wrong result: " + r.message;
}

}  // namespace

std::unique_ptr<Timed> make_clblast_gemm(Session& session, const GemmShape& shape) {
  // CLBlast has HGEMM where the device has cl_khr_fp16 and no bf16 GEMM: elsewhere the baseline of
  // a 16-bit shape is its fp32 SGEMM, what an OpenCL user there has, and its label says so.
  if (clblast_supports(shape.dtype, session.device())) {
    return std::make_unique<ClblastGemm>(session, shape, "");
  }
  GemmShape fp32 = shape;
  fp32.dtype = DType::kFp32;
  return std::make_unique<ClblastGemm>(
      session, fp32, fmt::format(" (fp32: CLBlast has no {} GEMM on this device)", dtype_name(shape.dtype)));
}

std::vector<BaselineSpec> clblast_gemm_baselines(const Problem& problem) {
  const GemmShape shape = GemmShape::from_json(problem.shape_json());
  return {{"clblast", [shape](Session& session) { return make_clblast_gemm(session, shape); }}};
}

}  // namespace ocltune::bench
