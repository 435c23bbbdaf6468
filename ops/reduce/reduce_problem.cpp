// Reductions as tunable Problems: random inputs, a float64 reference, verification with canaries.
#include "ops/reduce/reduce_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stored_tensor.h"
#include "harness/error.h"
#include "harness/session.h"

namespace ocltune {
namespace {

// Float64 result of one output: the value, the magnitude of its terms, the PyTorch index.
struct Accumulator {
  double sum = 0, magnitude = 0;
  double error =
      0;  // the prologue's fp32 error bound over the terms (units of 2^-24): summed, or the largest for max/min
  double best = std::numeric_limits<double>::quiet_NaN();
  std::int64_t best_index = -1;
};

class ReduceEvaluation : public Evaluation {
 public:
  ReduceEvaluation(Session& session, const ReduceShape& shape, const ReduceInstance& instance);
  LaunchPlan plan(const Config& config) override { return reduce_plan(shape_, operands_, config, workspace_); }
  void reset() override { output_.upload(session_.queue()); }
  VerifyResult verify() override;

 private:
  void build_reference();

  Session& session_;
  ReduceShape shape_;
  ReduceOperands operands_;
  Workspace workspace_;
  StoredTensor input_, output_;
  std::vector<StoredTensor> prologue_tensors_;  // like the input, at the input's offset
  std::vector<Expected> expected_;
  std::vector<std::pair<std::size_t, std::int64_t>> expected_indices_;
  std::vector<std::uint8_t> written_;
  double tolerance_ = 0;
};

ReduceEvaluation::ReduceEvaluation(Session& session, const ReduceShape& shape, const ReduceInstance& instance)
    : session_(session), shape_(shape), workspace_(session.context()) {
  shape.validate();
  const ReduceLayout layout = shape.layout();
  input_ = StoredTensor(shape.dtype, layout.elements, instance.input_offset);
  input_.fill_uniform(11);
  // About one output in three sees a special value; the rest check the finite path.
  if (instance.specials) inject_specials(input_, 12, 3 * layout.reduced);
  for (std::size_t t = 0; t < shape.prologue.tensors(); ++t) {
    prologue_tensors_.emplace_back(shape.dtype, layout.elements, instance.input_offset);
    prologue_tensors_.back().fill_uniform(static_cast<std::uint64_t>(21 + t));
  }
  output_ = is_arg_kind(shape.kind) ? StoredTensor::indices(layout.outputs, instance.output_offset)
                                    : StoredTensor(shape.dtype, layout.outputs, instance.output_offset);
  output_.fill(is_arg_kind(shape.kind) ? -1.0f : kUnwrittenSentinel);
  build_reference();

  const cl::Context& ctx = session.context();
  operands_.input = input_.buffer(ctx);
  operands_.input_offset = instance.input_offset;
  operands_.output = output_.buffer(ctx);
  operands_.output_offset = instance.output_offset;
  for (StoredTensor& t : prologue_tensors_) {
    operands_.prologue.tensors.push_back(t.buffer(ctx));
    operands_.prologue.offsets.push_back(instance.input_offset);
    t.upload(session.queue());
  }
  input_.upload(session.queue());
  reset();
}

void ReduceEvaluation::build_reference() {
  const ReduceShape& s = shape_;
  const std::size_t nd = s.dims.size();
  // Row-major strides of each coordinate in the output and in the flattened reduced block.
  std::vector<std::int64_t> out_stride(nd, 0), red_stride(nd, 0);
  std::int64_t out_step = 1, red_step = 1;
  for (std::size_t d = nd; d-- > 0;) {
    const bool reduced = std::find(s.axes.begin(), s.axes.end(), static_cast<int>(d)) != s.axes.end();
    if (reduced) {
      red_stride[d] = red_step;
      red_step *= s.dims[d];
    } else {
      out_stride[d] = out_step;
      out_step *= s.dims[d];
    }
  }
  const ReduceLayout layout = s.layout();
  std::vector<Accumulator> acc(static_cast<std::size_t>(layout.outputs));
  const bool is_max = s.kind == ReduceKind::kMax || s.kind == ReduceKind::kArgmax;
  const bool is_min = s.kind == ReduceKind::kMin || s.kind == ReduceKind::kArgmin;
  std::vector<std::int64_t> coord(nd, 0);
  std::vector<double> operand_values(prologue_tensors_.size());
  for (std::int64_t i = 0; i < layout.elements; ++i) {
    std::int64_t o = 0, r = 0;
    for (std::size_t d = 0; d < nd; ++d) {
      o += coord[d] * out_stride[d];
      r += coord[d] * red_stride[d];
    }
    double x = input_.at(i), x_error = 0;
    if (!s.prologue.empty()) {
      for (std::size_t t = 0; t < prologue_tensors_.size(); ++t) operand_values[t] = prologue_tensors_[t].at(i);
      const BoundedValue v = s.prologue.apply(x, operand_values);
      x = v.value;
      x_error = v.error;
    }
    Accumulator& a = acc[static_cast<std::size_t>(o)];
    if (is_max || is_min) {
      // PyTorch: the first NaN wins; otherwise the first occurrence of the extreme.
      const bool take =
          a.best_index < 0 || (!std::isnan(a.best) && (std::isnan(x) || (is_max ? x > a.best : x < a.best)));
      if (take) {
        a.best = x;
        a.best_index = r;
      }
      a.error = std::max(a.error, x_error);
    } else {
      const double t = s.kind == ReduceKind::kNorm2 ? x * x : x;
      a.sum += t;
      a.magnitude += std::abs(t);
      a.error += s.kind == ReduceKind::kNorm2 ? 2 * std::abs(x) * x_error : x_error;
    }
    for (std::size_t d = nd; d-- > 0;) {  // odometer over the input coordinates
      if (++coord[d] < s.dims[d]) break;
      coord[d] = 0;
    }
  }

  const double r = static_cast<double>(layout.reduced);
  // fp32 accumulation: rounding of random data grows like sqrt(length); one dropped term (about
  // 1/length of the magnitude) still fails for lengths up to about 16k.
  tolerance_ = (8.0 * std::sqrt(r) + 8.0) * 0x1.0p-24;
  const double tolerance = tolerance_;
  // Index outputs are always compared in full (an exact check is cheap).
  const std::int64_t step =
      is_arg_kind(s.kind)
          ? 1
          : std::max<std::int64_t>(1, (layout.outputs + kReduceFullCheckOutputs - 1) / kReduceFullCheckOutputs);
  if (step > 1) {
    written_.assign(output_.total(), 0);
    for (std::int64_t o = 0; o < layout.outputs; ++o) written_[static_cast<std::size_t>(output_.offset() + o)] = 1;
  }
  for (std::int64_t o = 0; o < layout.outputs; ++o) {
    if (o % step != 0 && o != layout.outputs - 1) continue;
    Accumulator& a = acc[static_cast<std::size_t>(o)];
    // The prologue's own error, as magnitude at `tolerance`: allowed = tolerance * magnitude + error.
    const double prologue_magnitude = a.error * 0x1.0p-24 / tolerance;
    a.magnitude += prologue_magnitude;
    const auto index = static_cast<std::size_t>(output_.offset() + o);
    switch (s.kind) {
      case ReduceKind::kArgmax:
      case ReduceKind::kArgmin: expected_indices_.emplace_back(index, a.best_index); break;
      case ReduceKind::kMax:
      case ReduceKind::kMin:
        if (s.prologue.empty()) {
          expected_.push_back({index, a.best, std::abs(a.best)});  // exact: one of the inputs
        } else {  // the chain's fp32 value, rounded to the storage type
          expected_.push_back(
              expect_stored(index, a.best, std::max(std::abs(a.best), prologue_magnitude), tolerance, s.dtype));
        }
        break;
      case ReduceKind::kSum: expected_.push_back(expect_stored(index, a.sum, a.magnitude, tolerance, s.dtype)); break;
      case ReduceKind::kMean:
        expected_.push_back(expect_stored(index, a.sum / r, a.magnitude / r, tolerance, s.dtype));
        break;
      case ReduceKind::kNorm2:
        expected_.push_back(expect_stored(index, std::sqrt(a.sum), std::sqrt(a.magnitude), tolerance, s.dtype));
        break;
    }
  }
}

VerifyResult ReduceEvaluation::verify() {
  if (is_arg_kind(shape_.kind)) {
    return verify_indices(output_.read_indices(session_.queue()), output_.indices(), expected_indices_);
  }
  return verify_output(output_.read_values(session_.queue()), output_.values(), expected_, tolerance_, written_);
}

}  // namespace

ReduceProblem::ReduceProblem(ReduceShape shape, ReduceInstance instance)
    : shape_(std::move(shape)), instance_(instance) {
  shape_.validate();
}

std::unique_ptr<Evaluation> ReduceProblem::instantiate(Session& session) const {
  return std::make_unique<ReduceEvaluation>(session, shape_, instance_);
}

}  // namespace ocltune
