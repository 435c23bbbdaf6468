// The norm family: layer_norm from BERT-base, batch_norm from ResNet-50, and the odd-shape table.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/norm/norm_problem.h"

namespace ocltune {
namespace {

NormShape layer(std::vector<std::int64_t> dims, DType dtype = DType::kFp32, bool backward = false) {
  const int axis = static_cast<int>(dims.size()) - 1;
  return {.kind = backward ? NormKind::kLayerBackward : NormKind::kLayer,
          .dims = std::move(dims),
          .axis = axis,
          .dtype = dtype};
}
NormShape batch(std::vector<std::int64_t> dims, DType dtype = DType::kFp32, bool backward = false) {
  return {.kind = backward ? NormKind::kBatchBackward : NormKind::kBatch,
          .dims = std::move(dims),
          .axis = 1,
          .dtype = dtype};
}

// BERT-base layer_norm over 768 at 8 sequences of 512 tokens; ResNet-50 batch_norm at batch 32 on
// a 56x56 stage (large planes) and the 7x7 stage (small planes, many channels).
std::vector<NormShape> default_shapes() {
  return {
      layer({8, 512, 768}),     layer({8, 512, 768}, DType::kFp16),    layer({4096, 768}, DType::kFp32, true),
      batch({32, 256, 56, 56}), batch({32, 2048, 7, 7}, DType::kFp16), batch({32, 256, 56, 56}, DType::kFp32, true)};
}

// The same layers at sizes a 2-core CPU tunes in well under a minute.
std::vector<NormShape> quick_shapes() {
  return {layer({512, 768}), layer({256, 768}, DType::kFp16, true), batch({8, 64, 28, 28}),
          batch({8, 64, 14, 14}, DType::kBf16, true)};
}

}  // namespace

std::vector<NormTestCase> norm_test_cases() {
  std::vector<NormTestCase> cases;
  auto add = [&](NormShape s, NormInstance i = {}, bool thorough = false) {
    cases.push_back({std::move(s), i, thorough});
  };
  // Thorough cases (every sampled configuration) cover every kind in every storage type; the
  // others meet a few configurations each. Sizes of 1, primes, a normalised extent of 1, no or
  // empty outer dimensions (layer_norm), planes of 1 (batch_norm over [N, C]).
  add(layer({1}));
  add(layer({7, 1}));
  add(layer({0, 5}));
  add(layer({3, 1031}), {.offset = 3}, true);
  add({.kind = NormKind::kLayer, .dims = {2, 3, 5, 7}, .axis = 2, .dtype = DType::kFp16}, {}, true);
  add(layer({13, 257}, DType::kBf16), {}, true);
  add(layer({1, 3}, DType::kFp32, true));
  add(layer({0, 7}, DType::kFp32, true));
  add(layer({37, 129}, DType::kFp32, true), {.offset = 1}, true);
  add({.kind = NormKind::kLayerBackward, .dims = {5, 3, 67}, .axis = 1, .dtype = DType::kFp16}, {}, true);
  add(layer({19, 300}, DType::kBf16, true), {}, true);
  add(batch({2, 3}));
  add(batch({3, 1, 1, 2}));
  add(batch({3, 5, 7, 11}), {.offset = 2}, true);
  add(batch({5, 3, 29}, DType::kFp16), {}, true);
  add(batch({2, 7, 13, 13}, DType::kBf16), {}, true);
  add(batch({2, 3}, DType::kFp32, true));
  add(batch({3, 5, 7, 11}, DType::kFp32, true), {.offset = 1}, true);
  add(batch({5, 3, 29}, DType::kBf16, true), {}, true);
  add(batch({2, 7, 13, 13}, DType::kFp16, true), {}, true);
  // Rows whose mean is far from 0 next to their spread (issue 42): y must keep its digits.
  add(layer({9, 257}), {.shift = 1000}, true);
  add(layer({4, 3001}), {.offset = 2, .shift = 1000});
  add(layer({6, 129}, DType::kFp16), {.shift = 100});
  add(layer({5, 257}, DType::kFp32, true), {.shift = 1000});
  // NaN and Inf propagate as in PyTorch: through the statistics to the whole row or channel.
  add(layer({11, 61}), {.specials = true});
  add(layer({9, 41}, DType::kBf16, true), {.specials = true});
  add(batch({4, 6, 17}), {.specials = true});
  add(batch({4, 6, 17}, DType::kFp16, true), {.specials = true});
  // layer_norm forward through a prologue (layer_norm(x + residual) and longer chains): the
  // register and the sweeping variants, ragged rows, offsets, 16-bit storage, far-off means.
  using Op = ElementwiseOp;
  auto with = [](NormShape s, std::vector<PrologueStep> steps) {
    s.prologue.steps = std::move(steps);
    return s;
  };
  add(with(layer({3, 1031}), {{.op = Op::kAdd, .tensor = true}}), {.offset = 3}, true);
  add(with(layer({13, 257}, DType::kBf16), {{.op = Op::kAdd, .tensor = true}, {.op = Op::kMul, .scalar = 0.5f}}), {},
      true);
  add(with({.kind = NormKind::kLayer, .dims = {2, 3, 5, 7}, .axis = 2, .dtype = DType::kFp16},
           {{.op = Op::kGelu}, {.op = Op::kSub, .tensor = true, .reversed = true}}),
      {}, true);
  add(with(layer({9, 257}), {{.op = Op::kAdd, .tensor = true}}), {.shift = 1000});
  add(with(layer({11, 61}), {{.op = Op::kRelu}}), {.specials = true});
  return cases;
}

class NormFamily : public OpFamily {
 public:
  std::string name() const override { return "norm"; }
  std::string description() const override {
    return "layer_norm and batch_norm (training statistics), forward and backward, fp32/fp16/bf16";
  }
  ProblemList preset(const std::string& preset) const override {
    ProblemList problems;
    if (preset == "test") {
      for (const NormTestCase& c : norm_test_cases())
        problems.push_back(std::make_unique<NormProblem>(c.shape, c.instance));
      return problems;
    }
    if (preset != "default" && preset != "quick") throw Error(fmt::format("norm has no shape preset '{}'", preset));
    for (const NormShape& s : preset == "quick" ? quick_shapes() : default_shapes()) {
      problems.push_back(std::make_unique<NormProblem>(s));
    }
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<NormProblem>(NormShape::from_json(shape));
  }
};

const OpFamily& norm_family() {
  static const NormFamily family;
  return family;
}

}  // namespace ocltune
