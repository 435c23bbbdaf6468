// softmax / log_softmax as tunable Problems: random inputs, a float64 reference, verification.
#include "ops/softmax/softmax_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stored_tensor.h"
#include "harness/session.h"

namespace ocltune {
namespace {

class SoftmaxEvaluation : public Evaluation {
 public:
  SoftmaxEvaluation(Session& session, const SoftmaxShape& shape, const SoftmaxInstance& instance);
  LaunchPlan plan(const Config& config) override { return softmax_plan(shape_, operands_, config); }
  void reset() override { output_.upload(session_.queue()); }
  VerifyResult verify() override {
    return verify_output(output_.read_values(session_.queue()), output_.values(), expected_, tolerance_, written_);
  }

 private:
  void build_reference();

  Session& session_;
  SoftmaxShape shape_;
  SoftmaxOperands operands_;
  StoredTensor input_, output_;
  std::vector<Expected> expected_;
  std::vector<std::uint8_t> written_;
  double tolerance_ = 0;
};

SoftmaxEvaluation::SoftmaxEvaluation(Session& session, const SoftmaxShape& shape, const SoftmaxInstance& instance)
    : session_(session), shape_(shape) {
  shape.validate();
  const ReduceLayout layout = shape.layout();
  input_ = StoredTensor(shape.dtype, layout.elements, instance.input_offset);
  // By default a spread of 8 so that exp() spans about 3000x within a row: small outputs must be
  // right too.
  input_.fill_uniform(21, -instance.spread, instance.spread);
  if (instance.specials)
    inject_specials(input_, 22, 3 * std::max<std::int64_t>(1, shape.dims[static_cast<std::size_t>(shape.axis)]));
  output_ = StoredTensor(shape.dtype, layout.elements, instance.output_offset);
  output_.fill(kUnwrittenSentinel);
  build_reference();
  operands_ = {input_.buffer(session.context()), instance.input_offset, output_.buffer(session.context()),
               instance.output_offset};
  input_.upload(session.queue());
  reset();
}

void SoftmaxEvaluation::build_reference() {
  const ReduceLayout layout = shape_.layout();
  if (layout.passes.empty()) return;
  const ReducePass& p = layout.passes.front();
  // fp32 sum of `length` positive terms, exp() to a few ulp, and the rounding of x - max (which
  // exp() turns into a relative error of |x - max| u: hence the |x - max| in the scale below).
  tolerance_ = (8.0 * std::sqrt(static_cast<double>(p.length)) + 16.0) * 0x1.0p-24;
  const std::int64_t segments = p.outer * p.inner;
  const std::int64_t step =
      std::max<std::int64_t>(1, (layout.elements + kSoftmaxFullCheckElements - 1) / kSoftmaxFullCheckElements);
  if (step > 1) {
    written_.assign(output_.total(), 0);
    for (std::int64_t e = 0; e < layout.elements; ++e) written_[static_cast<std::size_t>(output_.offset() + e)] = 1;
  }
  std::vector<double> x(static_cast<std::size_t>(p.length));
  for (std::int64_t seg = 0; seg < segments; ++seg) {
    if (seg % step != 0 && seg != segments - 1) continue;
    const std::int64_t base = (seg / p.inner) * p.length * p.inner + seg % p.inner;
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t k = 0; k < p.length; ++k) {
      x[static_cast<std::size_t>(k)] = input_.at(base + k * p.inner);
      const double v = x[static_cast<std::size_t>(k)];
      if (!std::isnan(m) && (std::isnan(v) || v > m)) m = v;  // NaN wins, as in PyTorch
    }
    double s = 0;
    for (double v : x) s += std::exp(v - m);
    const double log_s = std::log(s);
    for (std::int64_t k = 0; k < p.length; ++k) {
      const double v = x[static_cast<std::size_t>(k)];
      const auto index = static_cast<std::size_t>(output_.offset() + base + k * p.inner);
      if (shape_.log) {
        const double y = (v - m) - log_s;
        expected_.push_back(expect_stored(index, y, std::abs(v - m) + std::abs(log_s) + 1.0, tolerance_, shape_.dtype));
      } else {
        const double y = std::exp(v - m) / s;
        // exp(-Inf - max) is exactly 0 (and 0 * Inf would make the scale NaN).
        const double scale = y == 0.0 ? 0.0 : y * (1.0 + std::abs(v - m));
        expected_.push_back(expect_stored(index, y, scale, tolerance_, shape_.dtype));
      }
    }
  }
}

}  // namespace

SoftmaxProblem::SoftmaxProblem(SoftmaxShape shape, SoftmaxInstance instance)
    : shape_(std::move(shape)), instance_(instance) {
  shape_.validate();
}

std::unique_ptr<Evaluation> SoftmaxProblem::instantiate(Session& session) const {
  return std::make_unique<SoftmaxEvaluation>(session, shape_, instance_);
}

}  // namespace ocltune
