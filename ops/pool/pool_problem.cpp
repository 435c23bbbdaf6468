// Pooling as tunable Problems: random inputs, float64 reference, verification with canaries.
#include "ops/pool/pool_problem.h"

#include <cmath>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/session.h"
#include "ops/pool/pool_reference.h"

namespace ocltune {
namespace {

constexpr std::int64_t kIndexSentinel = -7;                 // written region of indices before a run
constexpr std::int64_t kIndexCanary = 0x5ca1ab1e0ddba11LL;  // after the indices

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  return x ^ (x >> 33);
}

class PoolEvaluation : public Evaluation {
 public:
  PoolEvaluation(Session& session, const PoolShape& shape, const PoolLayout& layout);
  LaunchPlan plan(const Config& config) override { return pool_plan(shape_, operands_, config); }
  void reset() override;
  VerifyResult verify() override;

 private:
  VerifyResult verify_indices();

  Session& session_;
  PoolShape shape_;
  PoolOperands operands_;
  std::vector<float> out_before_;
  std::vector<std::uint8_t> out_before_bytes_;
  std::vector<std::uint8_t> written_;
  std::vector<Expected> expected_;
  std::vector<std::int64_t> indices_before_, indices_expected_;
};

PoolEvaluation::PoolEvaluation(Session& session, const PoolShape& shape, const PoolLayout& layout)
    : session_(session), shape_(shape) {
  shape_.validate();
  const PoolShape& s = shape_;
  const std::int64_t planes = s.planes(), plane = s.h * s.w, out_plane = s.out_h() * s.out_w();
  const bool adaptive = s.kind == PoolKind::kAdaptiveAvg;
  const std::int64_t in_count = planes * (s.backward ? (adaptive ? 1 : out_plane) : plane);
  const std::int64_t out_count = planes * (s.backward ? plane : (adaptive ? 1 : out_plane));
  const cl::Context& ctx = session.context();

  // Inputs: x in [-4, 4), or gradients in [-1, 1); NaN, +-Inf and +-0 at a few places.
  std::vector<float> in(static_cast<std::size_t>(layout.in_offset + in_count));
  fill_uniform(in, 21, s.backward ? -1.0f : -4.0f, s.backward ? 1.0f : 4.0f);
  inject_specials(std::span(in).subspan(static_cast<std::size_t>(layout.in_offset)),
                  std::min<std::size_t>(static_cast<std::size_t>(in_count), 5), 22);
  round_to_storage(in, s.dtype);
  operands_.in = make_buffer(ctx, in, s.dtype, CL_MEM_READ_ONLY);
  operands_.in_offset = layout.in_offset;
  const std::span<const float> in_data = std::span<const float>(in).subspan(static_cast<std::size_t>(layout.in_offset));

  // Max backward reads the indices of a forward pass over random data, as training would.
  std::vector<std::int64_t> indices_in;
  if (s.reads_indices()) {
    PoolShape forward = s;
    forward.backward = false;
    std::vector<float> x(static_cast<std::size_t>(planes * plane));
    fill_uniform(x, 23, -4.0f, 4.0f);
    round_to_storage(x, s.dtype);
    indices_in = pool_reference(forward, x, {}).indices;
    std::vector<std::int64_t> buffer(static_cast<std::size_t>(layout.indices_offset), 0);
    buffer.insert(buffer.end(), indices_in.begin(), indices_in.end());
    buffer.resize(std::max<std::size_t>(buffer.size(), 1));
    operands_.indices = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, buffer.size() * 8, buffer.data());
    operands_.indices_offset = layout.indices_offset;
  }

  const PoolReference ref = pool_reference(s, in_data, indices_in);
  const auto offset = static_cast<std::size_t>(layout.out_offset);
  out_before_.assign(offset + static_cast<std::size_t>(out_count) + kCanaryWords, canary_value());
  written_.assign(out_before_.size(), 0);
  const double u = dtype_roundoff(s.dtype);
  const std::int64_t step = out_count > kPoolFullCheck ? (out_count + kPoolFullCheck - 1) / kPoolFullCheck : 1;
  for (std::int64_t i = 0; i < out_count; ++i) {
    const std::size_t at = offset + static_cast<std::size_t>(i);
    out_before_[at] = std::nanf("");  // a skipped element cannot match a finite reference
    written_[at] = 1;
    const double value = saturate_to_storage(ref.value[static_cast<std::size_t>(i)], s.dtype);
    const bool sampled =
        step == 1 || i < 65536 || out_count - i <= 65536 || mix(static_cast<std::uint64_t>(i)) % step == 0;
    if (!std::isfinite(value)) {
      expected_.push_back({at, value, 1.0});
    } else if (sampled) {
      const double bound = ref.bound[static_cast<std::size_t>(i)] + u * std::abs(value) + dtype_abs_floor(s.dtype);
      expected_.push_back({at, value, bound / u});
    }
  }
  out_before_bytes_ = encode(out_before_, s.dtype);
  operands_.out = make_buffer(ctx, out_before_, s.dtype);
  operands_.out_offset = layout.out_offset;

  if (s.writes_indices()) {
    indices_before_.assign(static_cast<std::size_t>(layout.indices_offset), kIndexCanary);
    indices_before_.resize(indices_before_.size() + ref.indices.size(), kIndexSentinel);
    indices_before_.resize(indices_before_.size() + kCanaryWords, kIndexCanary);
    indices_expected_ = ref.indices;
    operands_.indices = cl::Buffer(ctx, CL_MEM_READ_WRITE, indices_before_.size() * 8);
    operands_.indices_offset = layout.indices_offset;
  }
  reset();
}

void PoolEvaluation::reset() {
  try {
    session_.queue().enqueueWriteBuffer(operands_.out, CL_TRUE, 0, out_before_bytes_.size(), out_before_bytes_.data());
    if (!indices_before_.empty()) {
      session_.queue().enqueueWriteBuffer(operands_.indices, CL_TRUE, 0, indices_before_.size() * 8,
                                          indices_before_.data());
    }
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

VerifyResult PoolEvaluation::verify_indices() {
  VerifyResult result;
  std::vector<std::int64_t> after(indices_before_.size());
  try {
    session_.queue().enqueueReadBuffer(operands_.indices, CL_TRUE, 0, after.size() * 8, after.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  const auto first = static_cast<std::size_t>(operands_.indices_offset);
  for (std::size_t i = 0; i < after.size(); ++i) {
    const bool inside = i >= first && i - first < indices_expected_.size();
    const std::int64_t want = inside ? indices_expected_[i - first] : indices_before_[i];
    if (after[i] == want) continue;
    if (result.ok) {
      result.message = inside ? fmt::format("index {}: got {}, expected {}", i - first, after[i], want)
                              : fmt::format("indices: element {} outside the output was overwritten", i);
    }
    result.ok = false;
    ++result.mismatches;
  }
  return result;
}

VerifyResult PoolEvaluation::verify() {
  const std::vector<float> after = read_buffer(session_.queue(), operands_.out, out_before_.size(), shape_.dtype);
  VerifyResult result =
      verify_output(after, out_before_, expected_, kPoolMargin * dtype_roundoff(shape_.dtype), written_);
  if (result.ok && shape_.writes_indices()) {
    const VerifyResult indices = verify_indices();
    if (!indices.ok) return {false, result.max_error, indices.mismatches, indices.message};
  }
  return result;
}

}  // namespace

std::unique_ptr<Evaluation> PoolProblem::instantiate(Session& session) const {
  return std::make_unique<PoolEvaluation>(session, shape_, layout_);
}

}  // namespace ocltune
