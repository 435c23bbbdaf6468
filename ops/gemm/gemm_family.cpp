// The GEMM family: shape presets from real models and the odd-size test table.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/family.h"
#include "ops/gemm/gemm_problem.h"

namespace ocltune {
namespace {

GemmShape nn(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return {.m = m, .n = n, .k = k, .batch = batch};
}
GemmShape nt(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return {.m = m, .n = n, .k = k, .batch = batch, .trans_b = true};
}
GemmShape tn(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return {.m = m, .n = n, .k = k, .batch = batch, .trans_a = true};
}

GemmShape in(DType dtype, GemmShape shape) {
  shape.dtype = dtype;
  return shape;
}

// BERT-base at 8 sequences of 512 tokens (4096 rows), its attention heads (96 = 8 x 12), the
// ResNet-50 classifier at batch 1 and 32, and square sizes for comparison with BLAS figures; then
// the half-precision forms PyTorch's autocast runs (a square size and a BERT linear layer as
// nn.Linear calls it).
std::vector<GemmShape> default_shapes() {
  return {nn(1024, 1024, 1024),
          nn(2048, 2048, 2048),
          nn(4096, 4096, 4096),
          nn(4096, 2304, 768),
          nn(4096, 768, 768),
          nn(4096, 3072, 768),
          nn(4096, 768, 3072),
          tn(768, 3072, 4096),
          nt(512, 512, 64, 96),
          nn(512, 64, 512, 96),
          nt(1, 1000, 2048),
          nt(32, 1000, 2048),
          in(DType::kFp16, nn(4096, 4096, 4096)),
          in(DType::kBf16, nn(4096, 4096, 4096)),
          in(DType::kFp16, nt(4096, 3072, 768))};
}

// The same layer types at sizes a 2-core CPU tunes in a minute or two.
std::vector<GemmShape> quick_shapes() {
  return {nn(256, 256, 256), nn(128, 768, 768), nt(128, 128, 64, 12), nt(8, 1000, 512)};
}

}  // namespace

std::vector<GemmTestCase> gemm_test_cases() {
  std::vector<GemmTestCase> cases;
  // Sizes of 1, primes and non-multiples of every tile size, in all four layouts.
  const std::int64_t sizes[][3] = {{1, 1, 1},    {1, 17, 5},   {7, 1, 3},    {13, 11, 1},    {17, 33, 29},
                                   {31, 37, 41}, {64, 64, 64}, {65, 63, 67}, {100, 129, 97}, {257, 130, 19}};
  for (int layout = 0; layout < 4; ++layout) {
    for (const auto& s : sizes) {
      GemmShape shape{.m = s[0], .n = s[1], .k = s[2], .trans_a = (layout & 1) != 0, .trans_b = (layout & 2) != 0};
      cases.push_back({shape, {}});
    }
  }
  // Scalars, padded leading dimensions, offsets and strided batches.
  cases.push_back({{.m = 33, .n = 17, .k = 9, .alpha = -1.5f, .beta = 0.5f}, {}});
  cases.push_back({{.m = 40, .n = 24, .k = 31, .trans_a = true, .alpha = 2.0f, .beta = 1.0f},
                   {.lda_pad = 3, .ldb_pad = 1, .ldc_pad = 5, .a_offset = 7, .b_offset = 2, .c_offset = 11}});
  cases.push_back({{.m = 19, .n = 23, .k = 29, .batch = 3, .trans_b = true},
                   {.lda_pad = 4, .ldc_pad = 4, .a_offset = 4, .c_offset = 8, .stride_pad = 12}});
  cases.push_back({{.m = 64, .n = 48, .k = 40, .batch = 5, .trans_a = true, .trans_b = true, .beta = -1.0f},
                   {.c_offset = 1, .stride_pad = 3}});
  return cases;
}

class GemmFamily : public OpFamily {
 public:
  std::string name() const override { return "gemm"; }
  std::string description() const override {
    return "C = alpha*op(A)*op(B) + beta*C, fp32/fp16/bf16, NN/NT/TN/TT, strided batches";
  }
  ProblemList preset(const std::string& preset) const override {
    ProblemList problems;
    if (preset == "test") {
      for (const GemmTestCase& c : gemm_test_cases())
        problems.push_back(std::make_unique<GemmProblem>(c.shape, c.layout));
      return problems;
    }
    if (preset != "default" && preset != "quick") throw Error(fmt::format("gemm has no shape preset '{}'", preset));
    for (const GemmShape& s : preset == "quick" ? quick_shapes() : default_shapes()) {
      problems.push_back(std::make_unique<GemmProblem>(s));
    }
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<GemmProblem>(GemmShape::from_json(shape));
  }
};

const OpFamily& gemm_family() {
  static const GemmFamily family;
  return family;
}

}  // namespace ocltune
