// The elementwise family: shape presets from real models and the odd-shape test table.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/elementwise/elementwise_problem.h"
#include "ops/family.h"

namespace ocltune {
namespace {

using Op = ElementwiseOp;

TensorOperand dense(std::vector<std::int64_t> dims) { return {std::move(dims), {}}; }
TensorOperand strided(std::vector<std::int64_t> dims, std::vector<std::int64_t> strides) {
  return {std::move(dims), std::move(strides)};
}
ElementwiseStep unary(Op op) { return {.op = op}; }
ElementwiseStep with(Op op, TensorOperand t, bool reversed = false) {
  return {.op = op, .tensor = std::move(t), .reversed = reversed};
}
ElementwiseStep with(Op op, float scalar, bool reversed = false) {
  return {.op = op, .scalar = scalar, .reversed = reversed};
}
ElementwiseShape chain(TensorOperand x, std::vector<ElementwiseStep> steps, DType dtype = DType::kFp32) {
  return {.input = std::move(x), .steps = std::move(steps), .dtype = dtype};
}

// BERT-base at 8 sequences of 512 tokens (4096 rows of 768, FFN width 3072) and ResNet-50 at batch
// 32 (the 56x56x256 stage): activations, bias and residual adds, folded batch norm + ReLU, and the
// copies a framework makes for non-contiguous tensors (attention-head transpose, NHWC to NCHW).
std::vector<ElementwiseShape> default_shapes() {
  const TensorOperand feature = dense({32, 256, 56, 56});
  const TensorOperand channel = dense({256, 1, 1});
  return {
      chain(feature, {unary(Op::kRelu)}),
      chain(feature, {unary(Op::kRelu)}, DType::kFp16),
      chain(dense({4096, 3072}), {unary(Op::kGelu)}),
      chain(dense({4096, 3072}), {unary(Op::kGelu)}, DType::kBf16),
      chain(dense({4096, 3072}), {with(Op::kAdd, dense({3072})), unary(Op::kGelu)}, DType::kFp16),
      chain(dense({4096, 768}), {with(Op::kAdd, dense({768}))}),
      chain(dense({4096, 768}), {with(Op::kAdd, dense({4096, 768}))}),
      chain(dense({4096, 768}), {with(Op::kAdd, dense({4096, 768}))}, DType::kFp16),
      chain(feature, {with(Op::kMul, channel), with(Op::kAdd, channel), unary(Op::kRelu)}),
      chain(strided({8, 12, 512, 64}, {393216, 64, 768, 1}), {}),
      chain(strided({32, 256, 56, 56}, {802816, 1, 14336, 256}), {}),
  };
}

// The same kinds at sizes a 2-core CPU tunes in about a minute.
std::vector<ElementwiseShape> quick_shapes() {
  return {
      chain(dense({8, 64, 56, 56}), {unary(Op::kRelu)}),
      chain(dense({512, 768}), {with(Op::kAdd, dense({768}))}),
      chain(dense({256, 3072}), {with(Op::kAdd, dense({3072})), unary(Op::kGelu)}, DType::kFp16),
      chain(strided({2, 12, 128, 64}, {98304, 64, 768, 1}), {}),
  };
}

}  // namespace

std::vector<ElementwiseTestCase> elementwise_test_cases() {
  const DType f16 = DType::kFp16, b16 = DType::kBf16;
  // Every op at least once, where its result is visible; every dtype; sizes 1, primes and empty;
  // broadcasting with size-1 dims on either side; rows that are not a multiple of a vector; copies
  // of permuted and sliced views; buffer offsets.
  return {
      {chain(dense({1}), {unary(Op::kRelu)}), {}},
      {chain(dense({23}), {with(Op::kMul, 2.5f), unary(Op::kRelu6)}), {.out_offset = 3, .input_offset = 5}},
      {chain(dense({13, 17}), {unary(Op::kGelu)}, f16), {}},
      {chain(dense({13, 64}), {with(Op::kAdd, dense({64})), unary(Op::kGeluTanh)}, f16), {}},
      {chain(dense({100003}), {unary(Op::kSilu)}), {}},
      {chain(dense({129}), {with(Op::kMinimum, dense({129})), unary(Op::kSigmoid)}, f16), {}},
      {chain(dense({5, 7, 9}), {with(Op::kDiv, dense({5, 1, 1})), unary(Op::kTanh)}), {}},
      {chain(dense({19, 3}), {unary(Op::kExp)}, f16), {}},
      {chain(dense({50}), {unary(Op::kAbs), with(Op::kAdd, 1.0f), unary(Op::kLog), unary(Op::kRsqrt)}), {}},
      {chain(dense({31, 37}), {unary(Op::kSqrt)}, b16), {}},
      {chain(dense({2, 3, 5, 7}), {with(Op::kAdd, dense({3, 1, 7})), unary(Op::kNeg)}), {}},
      {chain(dense({31, 37}), {with(Op::kPow, dense({31, 37}))}, b16), {}},
      {chain(dense({97}), {with(Op::kSub, 1.0f, true), with(Op::kPow, 2.0f, true)}), {}},
      {chain(dense({3, 1, 5}), {with(Op::kMaximum, dense({1, 4, 1}))}), {}},
      {chain(dense({4, 3, 8, 8}),
             {with(Op::kMul, dense({3, 1, 1})), with(Op::kAdd, dense({3, 1, 1})), unary(Op::kRelu)}),
       {.out_offset = 1, .input_offset = 2}},
      {chain(dense({6, 7}), {with(Op::kAdd, dense({7})), with(Op::kSub, dense({6, 1}))}, b16), {}},
      {chain(dense({1, 3}), {with(Op::kMul, dense({5, 1}))}, f16), {}},
      {chain(dense({41}), {with(Op::kMul, 30000.0f)}, f16), {}},  // beyond 65504: Inf, as the store rounds
      {chain(dense({0, 5}), {unary(Op::kExp)}), {}},
      // The activations and backward ops autograd dispatches; the gradient flows in as x.
      {chain(dense({37}), {unary(Op::kHardswish)}), {}},
      {chain(dense({13, 11}), {unary(Op::kHardsigmoid)}, b16), {}},
      {chain(dense({61}), {with(Op::kLeakyRelu, 0.01f)}), {}},
      {chain(dense({7, 33}), {with(Op::kReluGrad, dense({7, 33}))}), {.out_offset = 2, .input_offset = 1}},
      {chain(dense({5, 19}), {with(Op::kRelu6Grad, dense({5, 19}))}, f16), {}},
      {chain(dense({3, 67}), {with(Op::kGeluGrad, dense({3, 67}))}), {}},
      {chain(dense({67}), {with(Op::kGeluTanhGrad, dense({67}))}, b16), {}},
      {chain(dense({2, 3, 41}), {with(Op::kSiluGrad, dense({2, 3, 41}))}), {}},
      {chain(dense({53}), {with(Op::kSigmoidGrad, dense({53}))}, f16), {}},
      {chain(dense({4, 29}), {with(Op::kTanhGrad, dense({4, 29}))}), {}},
      {chain(dense({71}), {with(Op::kHardswishGrad, dense({71}))}), {}},
      {chain(dense({3, 43}), {unary(Op::kSign)}, f16), {}},
      {chain(dense({6, 13}), {with(Op::kHardsigmoidGrad, dense({6, 13}))}), {}},
      {chain(dense({59}), {with(Op::kElu, 1.0f)}), {}},
      {chain(dense({3, 23}), {with(Op::kSoftplus, 2.0f)}, f16), {}},
      {chain(strided({5, 7}, {1, 5}), {with(Op::kReluGrad, dense({5, 7})), with(Op::kMul, 0.5f)}), {}},
      {chain(strided({4, 6, 5}, {1, 4, 24}), {}), {}},
      {chain(strided({3, 5}, {20, 2}), {}, b16), {.out_offset = 7, .input_offset = 3}},
      {chain(strided({2, 3, 4, 5}, {60, 1, 15, 3}), {}, f16), {}},
  };
}

class ElementwiseFamily : public OpFamily {
 public:
  std::string name() const override { return "elementwise"; }
  std::string description() const override {
    return "fused chains of up to 4 unary/binary ops with broadcasting, strided copies; fp32/fp16/bf16";
  }
  ProblemList preset(const std::string& preset) const override {
    ProblemList problems;
    if (preset == "test") {
      for (const ElementwiseTestCase& c : elementwise_test_cases()) {
        problems.push_back(std::make_unique<ElementwiseProblem>(c.shape, c.layout));
      }
      return problems;
    }
    if (preset != "default" && preset != "quick")
      throw Error(fmt::format("elementwise has no shape preset '{}'", preset));
    for (const ElementwiseShape& s : preset == "quick" ? quick_shapes() : default_shapes()) {
      problems.push_back(std::make_unique<ElementwiseProblem>(s));
    }
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<ElementwiseProblem>(ElementwiseShape::from_json(shape));
  }
};

const OpFamily& elementwise_family() {
  static const ElementwiseFamily family;
  return family;
}

}  // namespace ocltune
