// The softmax family: shape presets from BERT-base and classifiers and the odd-shape test table.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/softmax/softmax_problem.h"

namespace ocltune {
namespace {

SoftmaxShape sm(std::vector<std::int64_t> dims, int axis, DType dtype = DType::kFp32, bool log = false) {
  return {.dims = std::move(dims), .axis = axis, .log = log, .dtype = dtype};
}

// BERT-base attention scores at 8 sequences x 12 heads x 512 x 512 (rows and, as over the query
// axis, columns), the log-probabilities of its 30522-word LM head for one sequence, and ResNet-50's
// 1000-class classifier at batch 32.
std::vector<SoftmaxShape> default_shapes() {
  return {sm({96, 512, 512}, 2), sm({96, 512, 512}, 2, DType::kFp16), sm({96, 512, 512}, 1, DType::kBf16),
          sm({512, 30522}, 1, DType::kFp32, true), sm({32, 1000}, 1)};
}

// One 128-token sequence's attention and a batch of classifier log-probabilities.
std::vector<SoftmaxShape> quick_shapes() { return {sm({12, 128, 128}, 2), sm({64, 1000}, 1, DType::kFp16, true)}; }

}  // namespace

std::vector<SoftmaxTestCase> softmax_test_cases() {
  std::vector<SoftmaxTestCase> cases;
  auto add = [&](SoftmaxShape s, SoftmaxInstance i = {}, bool thorough = false) {
    cases.push_back({std::move(s), i, thorough});
  };
  // Thorough cases (every sampled configuration) cover rows and columns, softmax and log_softmax
  // in every storage type; the others meet a few configurations each.
  // Sizes of 1, primes, a normalised dimension of 1, no outer dimensions, an empty outer one.
  add(sm({1}, 0));
  add(sm({7}, 0, DType::kFp32, true));
  add(sm({13, 1, 5}, 1));
  add(sm({0, 5}, 1));
  // Rows (last dimension) and columns (an outer dimension), all storage types, offsets.
  add(sm({3, 1031}, 1), {.input_offset = 3, .output_offset = 1}, true);
  add(sm({2, 3, 17, 129}, 3, DType::kFp16), {}, true);
  add(sm({2, 20011}, 1, DType::kBf16, true), {}, true);
  add(sm({5, 37, 11}, 1, DType::kBf16), {.output_offset = 2}, true);
  add(sm({2, 53, 3, 7}, 1, DType::kFp16, true), {}, true);
  add(sm({4099, 3}, 0));
  add(sm({257, 67}, 0, DType::kFp32, true));
  // NaN and Inf propagate as in PyTorch: a row with NaN or +Inf is NaN; -Inf gives 0.
  add(sm({29, 37}, 1), {.specials = true}, true);
  add(sm({37, 29}, 0, DType::kFp16, true), {.specials = true});
  add(sm({11, 61}, 1, DType::kBf16, true), {.specials = true});
  // exp over a wide range of x - max (down to -60), rows and columns.
  add(sm({6, 523}, 1), {.spread = 30.0f}, true);
  add(sm({23, 5, 3}, 1, DType::kFp32, true), {.spread = 30.0f});
  return cases;
}

class SoftmaxFamily : public OpFamily {
 public:
  std::string name() const override { return "softmax"; }
  std::string description() const override {
    return "softmax and log_softmax along any dim of a <=4-D tensor, fp32/fp16/bf16";
  }
  ProblemList preset(const std::string& preset) const override {
    ProblemList problems;
    if (preset == "test") {
      for (const SoftmaxTestCase& c : softmax_test_cases())
        problems.push_back(std::make_unique<SoftmaxProblem>(c.shape, c.instance));
      return problems;
    }
    if (preset != "default" && preset != "quick") throw Error(fmt::format("softmax has no shape preset '{}'", preset));
    for (const SoftmaxShape& s : preset == "quick" ? quick_shapes() : default_shapes()) {
      problems.push_back(std::make_unique<SoftmaxProblem>(s));
    }
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<SoftmaxProblem>(SoftmaxShape::from_json(shape));
  }
};

const OpFamily& softmax_family() {
  static const SoftmaxFamily family;
  return family;
}

}  // namespace ocltune
