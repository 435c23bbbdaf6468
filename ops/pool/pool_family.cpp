// The pool family: shape presets from real models and the odd-shape test table.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/pool/pool_problem.h"

namespace ocltune {
namespace {

PoolShape max_pool(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k, std::int64_t s,
                   std::int64_t p, bool backward = false, DType dtype = DType::kFp32) {
  return {.kind = PoolKind::kMax,
          .backward = backward,
          .n = n,
          .c = c,
          .h = h,
          .w = w,
          .kh = k,
          .kw = k,
          .sh = s,
          .sw = s,
          .ph = p,
          .pw = p,
          .dtype = dtype};
}
PoolShape avg_pool(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k, std::int64_t s,
                   std::int64_t p, bool count_include_pad, bool backward = false, DType dtype = DType::kFp32) {
  return {.kind = PoolKind::kAvg,
          .backward = backward,
          .n = n,
          .c = c,
          .h = h,
          .w = w,
          .kh = k,
          .kw = k,
          .sh = s,
          .sw = s,
          .ph = p,
          .pw = p,
          .count_include_pad = count_include_pad,
          .dtype = dtype};
}
PoolShape adaptive(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, bool backward = false,
                   DType dtype = DType::kFp32) {
  return {.kind = PoolKind::kAdaptiveAvg, .backward = backward, .n = n, .c = c, .h = h, .w = w, .dtype = dtype};
}

// ResNet-50 at batch 32: the stem's 3x3/2 max pool (training, with indices; inference in fp16,
// without) and the global average pool before the classifier; DenseNet-121's 2x2/2 transition
// average pool and Inception's 3x3/1 branch pool (count_include_pad off).
std::vector<PoolShape> default_shapes() {
  PoolShape inference = max_pool(32, 64, 112, 112, 3, 2, 1, false, DType::kFp16);
  inference.indices = false;
  return {max_pool(32, 64, 112, 112, 3, 2, 1),           inference,
          max_pool(32, 64, 112, 112, 3, 2, 1, true),     adaptive(32, 2048, 7, 7),
          adaptive(32, 2048, 7, 7, false, DType::kFp16), adaptive(32, 2048, 7, 7, true),
          avg_pool(32, 128, 56, 56, 2, 2, 0, true),      avg_pool(32, 128, 56, 56, 2, 2, 0, true, true),
          avg_pool(32, 192, 35, 35, 3, 1, 1, false)};
}

// The same layers at sizes a 2-core CPU tunes in about a minute.
std::vector<PoolShape> quick_shapes() {
  return {max_pool(8, 64, 56, 56, 3, 2, 1), max_pool(8, 64, 56, 56, 3, 2, 1, true), adaptive(8, 512, 7, 7)};
}

}  // namespace

std::vector<PoolTestCase> pool_test_cases() {
  const DType f16 = DType::kFp16, b16 = DType::kBf16;
  // Overlapping windows (stride < window), gaps (stride > window), ceil_mode, both padding counts,
  // sizes 1 and primes, an empty batch, every dtype, buffer offsets.
  PoolShape ceil_max = max_pool(1, 2, 13, 11, 2, 2, 0, false, f16);
  ceil_max.ceil_mode = true;
  PoolShape rect = max_pool(3, 1, 5, 17, 2, 1, 1, false, b16);
  rect.kw = 3, rect.sw = 2;
  rect.indices = false;
  PoolShape ceil_avg = avg_pool(1, 2, 13, 11, 3, 2, 1, false, false, b16);
  ceil_avg.ceil_mode = true;
  PoolShape rect_avg = avg_pool(3, 1, 5, 17, 2, 1, 1, false, true, b16);
  rect_avg.kw = 3, rect_avg.sw = 2;
  auto backward = [](PoolShape s) {
    s.backward = true;
    s.indices = true;
    return s;
  };
  const PoolLayout offsets{.in_offset = 3, .out_offset = 5, .indices_offset = 2};
  return {
      {max_pool(1, 1, 1, 1, 1, 1, 0), {}},
      {max_pool(2, 3, 7, 9, 3, 2, 1), offsets},
      {ceil_max, {}},
      {rect, {}},
      {max_pool(0, 3, 8, 8, 3, 3, 0), {}},
      {max_pool(2, 2, 9, 9, 3, 4, 0), {}},
      {max_pool(2, 3, 7, 9, 3, 2, 1, true), offsets},
      {backward(ceil_max), {}},
      {backward(rect), {}},
      {max_pool(2, 2, 9, 9, 3, 4, 0, true), {}},
      {avg_pool(2, 3, 7, 9, 3, 2, 1, true), offsets},
      {avg_pool(2, 3, 7, 9, 3, 2, 1, false, false, f16), {}},
      {ceil_avg, {}},
      {avg_pool(3, 2, 5, 5, 5, 1, 2, true), {}},
      {avg_pool(2, 3, 7, 9, 3, 2, 1, true, true), offsets},
      {backward(ceil_avg), {}},
      {rect_avg, {}},
      {adaptive(2, 3, 7, 7), offsets},
      {adaptive(1, 5, 1, 1, false, f16), {}},
      {adaptive(3, 2, 13, 17, false, b16), {}},
      {adaptive(0, 4, 3, 3), {}},
      {adaptive(2, 3, 7, 7, true), offsets},
      {adaptive(3, 2, 13, 17, true, f16), {}},
  };
}

class PoolFamily : public OpFamily {
 public:
  std::string name() const override { return "pool"; }
  std::string description() const override {
    return "max/avg pool2d (indices, any window/stride/padding, ceil_mode), adaptive avg to 1x1; fwd+bwd; "
           "fp32/fp16/bf16";
  }
  ProblemList preset(const std::string& preset) const override {
    ProblemList problems;
    if (preset == "test") {
      for (const PoolTestCase& c : pool_test_cases())
        problems.push_back(std::make_unique<PoolProblem>(c.shape, c.layout));
      return problems;
    }
    if (preset != "default" && preset != "quick") throw Error(fmt::format("pool has no shape preset '{}'", preset));
    for (const PoolShape& s : preset == "quick" ? quick_shapes() : default_shapes()) {
      problems.push_back(std::make_unique<PoolProblem>(s));
    }
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<PoolProblem>(PoolShape::from_json(shape));
  }
};

const OpFamily& pool_family() {
  static const PoolFamily family;
  return family;
}

}  // namespace ocltune
