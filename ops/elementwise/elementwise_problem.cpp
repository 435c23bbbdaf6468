// Elementwise ops as tunable Problems: random operands, float64 reference, verification.
#include "ops/elementwise/elementwise_problem.h"

#include <cmath>
#include <utility>

#include "harness/error.h"
#include "harness/session.h"
#include "ops/elementwise/elementwise_reference.h"

namespace ocltune {
namespace {

// Random data for a tensor that `op` consumes (as the base of pow when `base`): inside the op's
// domain, so results are mostly finite and the check is about values, not NaN patterns.
std::pair<float, float> data_range(ElementwiseOp op, bool base) {
  switch (op) {
    case ElementwiseOp::kLog:
    case ElementwiseOp::kSqrt:
    case ElementwiseOp::kRsqrt: return {0.05f, 4.0f};
    case ElementwiseOp::kPow: return base ? std::pair{0.1f, 2.0f} : std::pair{-2.0f, 2.0f};
    case ElementwiseOp::kRelu6Grad: return base ? std::pair{-4.0f, 4.0f} : std::pair{-2.0f, 8.0f};  // both edges
    default: return {-4.0f, 4.0f};
  }
}

// A hash of the index, so a sample does not line up with vector lanes or work-group tiles.
std::int64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<std::int64_t>(x >> 1);
}

class ElementwiseEvaluation : public Evaluation {
 public:
  ElementwiseEvaluation(Session& session, const ElementwiseShape& shape, const ElementwiseLayout& layout);
  LaunchPlan plan(const Config& config) override { return elementwise_plan(shape_, operands_, config); }
  void reset() override;
  VerifyResult verify() override;

 private:
  void fill_inputs();
  void build_reference();

  Session& session_;
  ElementwiseShape shape_;
  ElementwiseLayout layout_;
  ElementwiseOperands operands_;
  std::vector<std::vector<float>> inputs_;  // per tensor operand, as stored (rounded to the dtype)
  std::vector<float> out_before_;
  std::vector<std::uint8_t> out_before_bytes_;
  std::vector<std::uint8_t> written_;
  std::vector<Expected> expected_;
};

ElementwiseEvaluation::ElementwiseEvaluation(Session& session, const ElementwiseShape& shape,
                                             const ElementwiseLayout& layout)
    : session_(session), shape_(shape), layout_(layout) {
  shape_.validate();
  fill_inputs();
  const auto n = static_cast<std::size_t>(shape_.elements());
  const auto offset = static_cast<std::size_t>(layout_.out_offset);
  out_before_.assign(offset + n + kCanaryWords, canary_value());
  written_.assign(out_before_.size(), 0);
  // The written region starts as NaN: an element the kernel skips cannot match a finite reference.
  for (std::size_t i = offset; i < offset + n; ++i) {
    out_before_[i] = std::nanf("");
    written_[i] = 1;
  }
  out_before_bytes_ = encode(out_before_, shape_.dtype);
  build_reference();

  const cl::Context& ctx = session.context();
  operands_.out = make_buffer(ctx, out_before_, shape_.dtype);
  operands_.out_offset = layout_.out_offset;
  for (const std::vector<float>& data : inputs_) {
    operands_.inputs.push_back(make_buffer(ctx, data, shape_.dtype, CL_MEM_READ_ONLY));
    operands_.input_offsets.push_back(layout_.input_offset);
  }
}

void ElementwiseEvaluation::fill_inputs() {
  const std::vector<const TensorOperand*> tensors = shape_.tensors();
  std::vector<std::pair<float, float>> ranges;
  // x feeds the first step (as its right operand when the step is reversed).
  const ElementwiseStep* first = shape_.steps.empty() ? nullptr : &shape_.steps[0];
  ranges.push_back(first ? data_range(first->op, !first->reversed) : std::pair{-4.0f, 4.0f});
  for (const ElementwiseStep& s : shape_.steps) {
    if (s.tensor) ranges.push_back(data_range(s.op, s.reversed));
  }
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const auto extent = static_cast<std::size_t>(tensors[t]->extent());
    const auto offset = static_cast<std::size_t>(layout_.input_offset);
    std::vector<float> data(offset + extent);
    fill_uniform(data, 11 + t, ranges[t].first, ranges[t].second);
    // NaN, +-Inf and +-0 at a few places: they must propagate as PyTorch propagates them.
    inject_specials(std::span(data).subspan(offset), std::min<std::size_t>(extent, 5), 101 + t);
    round_to_storage(data, shape_.dtype);
    inputs_.push_back(std::move(data));
  }
}

void ElementwiseEvaluation::build_reference() {
  const std::vector<std::int64_t> out = shape_.out_dims();
  const std::vector<const TensorOperand*> tensors = shape_.tensors();
  const std::size_t rank = out.size();
  // Strides of every tensor over the output's dims (0 where it broadcasts).
  std::vector<std::vector<std::int64_t>> strides(tensors.size(), std::vector<std::int64_t>(rank, 0));
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const TensorOperand& op = *tensors[t];
    const std::vector<std::int64_t> s = op.effective_strides();
    const std::size_t lead = rank - op.dims.size();
    for (std::size_t j = 0; j < op.dims.size(); ++j) strides[t][lead + j] = op.dims[j] == 1 ? 0 : s[j];
  }
  const std::int64_t n = shape_.elements();
  // Sampled verification of big outputs: a deterministic spread, plus both ends in full.
  const std::int64_t step = n > kElementwiseFullCheck ? (n + kElementwiseFullCheck - 1) / kElementwiseFullCheck : 1;
  const double u = dtype_roundoff(shape_.dtype);
  std::vector<std::int64_t> coord(rank, 0);
  std::vector<double> operand(tensors.size());
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::size_t t = 0; t < tensors.size(); ++t) {
      std::int64_t at = layout_.input_offset;
      for (std::size_t j = 0; j < rank; ++j) at += coord[j] * strides[t][j];
      operand[t] = inputs_[t][static_cast<std::size_t>(at)];
    }
    BoundedValue v{operand[0], 0};
    std::size_t t = 1;
    for (const ElementwiseStep& s : shape_.steps) {
      BoundedValue b = v;
      if (s.tensor) {
        b = {operand[t++], 0};
      } else if (is_binary(s.op)) {
        b = {static_cast<double>(s.scalar), 0};
      }
      v = s.reversed ? elementwise_step(s.op, b, v) : elementwise_step(s.op, v, b);
    }
    const double value = saturate_to_storage(v.value, shape_.dtype);
    const std::size_t index = static_cast<std::size_t>(layout_.out_offset + i);
    const bool sampled = step == 1 || i < 65536 || n - i <= 65536 || mix(static_cast<std::uint64_t>(i)) % step == 0;
    if (!std::isfinite(value)) {
      expected_.push_back({index, value, 1.0});
    } else if (sampled && std::isfinite(v.error)) {
      // Allowed error: fp32 arithmetic (the bound), the store's rounding, the dtype's floor.
      const double bound = v.error * 0x1.0p-24 + u * std::abs(value) + dtype_abs_floor(shape_.dtype);
      expected_.push_back({index, value, bound / u});
    }
    for (std::size_t j = rank; j-- > 0;) {
      if (++coord[j] < out[j]) break;
      coord[j] = 0;
    }
  }
}

void ElementwiseEvaluation::reset() {
  try {
    session_.queue().enqueueWriteBuffer(operands_.out, CL_TRUE, 0, out_before_bytes_.size(), out_before_bytes_.data());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
}

VerifyResult ElementwiseEvaluation::verify() {
  const std::vector<float> after = read_buffer(session_.queue(), operands_.out, out_before_.size(), shape_.dtype);
  return verify_output(after, out_before_, expected_, kElementwiseMargin * dtype_roundoff(shape_.dtype), written_);
}

}  // namespace

ElementwiseProblem::ElementwiseProblem(ElementwiseShape shape, ElementwiseLayout layout)
    : shape_(std::move(shape)), layout_(layout) {}

std::unique_ptr<Evaluation> ElementwiseProblem::instantiate(Session& session) const {
  return std::make_unique<ElementwiseEvaluation>(session, shape_, layout_);
}

}  // namespace ocltune
