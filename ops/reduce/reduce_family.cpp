// The reduce family: shape presets from BERT-base and ResNet-50 and the odd-shape test table.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/reduce/reduce_problem.h"

namespace ocltune {
namespace {

ReduceShape red(ReduceKind kind, std::vector<std::int64_t> dims, std::vector<int> axes, DType dtype = DType::kFp32,
                bool keepdim = false) {
  return {.dims = std::move(dims), .axes = std::move(axes), .keepdim = keepdim, .kind = kind, .dtype = dtype};
}

// BERT-base at 8 sequences of 512 tokens (hidden 768, 12 heads, vocabulary 30522) and ResNet-50
// at batch 32: row statistics of activations, attention-score maxima, logits argmax, global
// average pooling, per-channel sums (N and HW: two runs), a weight-gradient norm, bias gradients
// (columns), and one large sum (64M elements) against the copy bandwidth.
std::vector<ReduceShape> default_shapes() {
  using K = ReduceKind;
  return {red(K::kSum, {4096, 768}, {1}),
          red(K::kMean, {4096, 768}, {1}, DType::kFp16),
          red(K::kMax, {96, 512, 512}, {2}),
          red(K::kArgmax, {512, 30522}, {1}),
          red(K::kMean, {32, 2048, 7, 7}, {2, 3}),
          red(K::kSum, {32, 256, 56, 56}, {0, 2, 3}),
          red(K::kNorm2, {768, 3072}, {0, 1}),
          red(K::kSum, {4096, 768}, {0}, DType::kBf16),
          red(K::kMin, {4096, 768}, {0}, DType::kFp16),
          red(K::kSum, {std::int64_t{1} << 26}, {0})};
}

// The same kinds of reductions at sizes a 2-core CPU tunes in well under a minute.
std::vector<ReduceShape> quick_shapes() {
  using K = ReduceKind;
  return {red(K::kSum, {512, 768}, {1}), red(K::kMean, {8, 64, 28, 28}, {0, 2, 3}, DType::kFp16),
          red(K::kArgmax, {64, 1000}, {1})};
}

}  // namespace

std::vector<ReduceTestCase> reduce_test_cases() {
  using K = ReduceKind;
  std::vector<ReduceTestCase> cases;
  auto add = [&](ReduceShape s, ReduceInstance i = {}, bool thorough = false) {
    cases.push_back({std::move(s), i, thorough});
  };
  // Thorough cases (every sampled configuration) cover rows, columns, two runs, arg and value
  // reductions in every storage type; the others meet a few configurations each.
  // Sizes of 1, primes, a reduced dimension of 1, no outer dimensions, empty kept dimensions.
  add(red(K::kSum, {1}, {0}));
  add(red(K::kMax, {7}, {0}));
  add(red(K::kMean, {13, 1, 5}, {1}, DType::kFp32, true));
  add(red(K::kArgmax, {1, 1, 31}, {2}));
  add(red(K::kSum, {0, 5}, {1}));
  add(red(K::kMax, {4, 0, 3}, {0}));
  // Rows (reduced dimensions innermost), columns (an outer one), several at once, two runs.
  add(red(K::kSum, {3, 4099}, {1}), {.input_offset = 3, .output_offset = 5}, true);
  add(red(K::kMean, {1009, 31}, {1}, DType::kFp16));
  add(red(K::kNorm2, {17, 3}, {0}, DType::kBf16), {}, true);
  add(red(K::kMin, {257, 129}, {0, 1}));
  add(red(K::kArgmin, {5, 7, 11}, {1}), {.input_offset = 1, .output_offset = 2}, true);
  add(red(K::kSum, {2, 3, 5, 7}, {0, 2}), {.input_offset = 2}, true);
  add(red(K::kNorm2, {3, 5, 7, 2}, {1, 3}, DType::kFp16));
  add(red(K::kMean, {5, 3, 17, 19}, {0, 2, 3}, DType::kBf16, true), {.output_offset = 1});
  add(red(K::kMax, {6, 100003}, {1}, DType::kBf16), {}, true);
  add(red(K::kArgmax, {3, 8191}, {1}, DType::kFp16), {}, true);
  add(red(K::kSum, {2053, 67}, {0}, DType::kFp16), {}, true);
  // NaN and Inf propagate as in PyTorch (NaN wins max/min/argmax/argmin; Inf - Inf is NaN).
  add(red(K::kSum, {29, 37}, {1}), {.specials = true});
  add(red(K::kMax, {29, 37}, {0}, DType::kFp16), {.specials = true});
  add(red(K::kMin, {37, 29}, {1}, DType::kBf16), {.specials = true});
  add(red(K::kArgmax, {23, 41}, {1}), {.specials = true});
  add(red(K::kArgmin, {41, 23}, {0}, DType::kFp16), {.specials = true});
  add(red(K::kNorm2, {2, 3, 5, 7}, {0, 2}), {.specials = true});
  // Prologues (an elementwise chain applied as the input is read): rows, columns, two runs, split
  // ranges, ragged tails, offsets; tensor, scalar and reversed operands; 16-bit storage.
  using Op = ElementwiseOp;
  auto with = [](ReduceShape s, std::vector<PrologueStep> steps) {
    s.prologue.steps = std::move(steps);
    return s;
  };
  add(with(red(K::kSum, {3, 4099}, {1}), {{.op = Op::kAdd, .tensor = true}, {.op = Op::kRelu}}),
      {.input_offset = 3, .output_offset = 5}, true);
  add(with(red(K::kMean, {2053, 67}, {0}, DType::kFp16),
           {{.op = Op::kSub, .tensor = true}, {.op = Op::kMul, .scalar = 0.5f}, {.op = Op::kGelu}}),
      {}, true);
  add(with(red(K::kMax, {5, 3, 17, 19}, {0, 2, 3}, DType::kBf16),
           {{.op = Op::kSub, .scalar = 2.0f, .reversed = true}, {.op = Op::kSigmoid}}),
      {.input_offset = 1}, true);
  add(with(red(K::kNorm2, {17, 3}, {0}), {{.op = Op::kSub, .tensor = true}}), {}, true);
  add(with(red(K::kSum, {2, 3, 5, 7}, {0, 2}, DType::kBf16), {{.op = Op::kMul, .tensor = true},
                                                              {.op = Op::kAdd, .tensor = true},
                                                              {.op = Op::kTanh},
                                                              {.op = Op::kDiv, .scalar = 3.0f}}),
      {.input_offset = 2});
  add(with(red(K::kMin, {6, 100003}, {1}), {{.op = Op::kAbs}, {.op = Op::kNeg}}));
  add(with(red(K::kSum, {29, 37}, {1}), {{.op = Op::kRelu}}), {.specials = true});
  return cases;
}

class ReduceFamily : public OpFamily {
 public:
  std::string name() const override { return "reduce"; }
  std::string description() const override {
    return "sum/mean/max/min/argmax/argmin/norm2 over any dims of a <=4-D tensor, fp32/fp16/bf16";
  }
  ProblemList preset(const std::string& preset) const override {
    ProblemList problems;
    if (preset == "test") {
      for (const ReduceTestCase& c : reduce_test_cases())
        problems.push_back(std::make_unique<ReduceProblem>(c.shape, c.instance));
      return problems;
    }
    if (preset != "default" && preset != "quick") throw Error(fmt::format("reduce has no shape preset '{}'", preset));
    for (const ReduceShape& s : preset == "quick" ? quick_shapes() : default_shapes()) {
      problems.push_back(std::make_unique<ReduceProblem>(s));
    }
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<ReduceProblem>(ReduceShape::from_json(shape));
  }
};

const OpFamily& reduce_family() {
  static const ReduceFamily family;
  return family;
}

}  // namespace ocltune
