// The conv2d family: shape presets from ResNet-50, MobileNetV2 and VGG-16, and the odd-shape test
// table. Every layer is tuned in the three directions.
#include <fmt/format.h>

#include "harness/error.h"
#include "ops/conv2d/conv2d_problem.h"
#include "ops/family.h"

namespace ocltune {
namespace {

constexpr ConvDirection kDirections[] = {ConvDirection::kForward, ConvDirection::kBackwardData,
                                         ConvDirection::kBackwardWeight};

// A layer as deployed for inference: square input and filter, its fused activation and bias (the
// folded batch norm). Training uses the backward directions, where the activation is not fused.
struct Layer {
  std::int64_t n, c, hw, k, rs, stride, pad;
  Activation act = Activation::kRelu;
  std::int64_t groups = 1;
  bool train_bias = false;  // the layer has a bias in training too (VGG); else batch norm follows
};

Conv2dShape layer_shape(const Layer& l, ConvDirection dir) {
  Conv2dShape s{.dir = dir, .n = l.n, .c = l.c, .h = l.hw, .w = l.hw, .k = l.k, .r = l.rs, .s = l.rs};
  s.stride_h = s.stride_w = l.stride;
  s.pad_h = s.pad_w = l.pad;
  s.groups = l.groups;
  s.bias = dir == ConvDirection::kForward || l.train_bias;
  s.act = dir == ConvDirection::kForward ? l.act : Activation::kNone;
  return s;
}

// Every distinct convolution of torchvision's ResNet-50 (stride in the 3x3 of each bottleneck):
// the stem, then per stage the 1x1 reduce, 3x3 (strided in the first block), 1x1 expand, the
// strided 1x1 downsample, and the later blocks' 1x1 reduce and unstrided 3x3.
std::vector<Layer> resnet50(std::int64_t n) {
  const Activation none = Activation::kNone, relu = Activation::kRelu;
  std::vector<Layer> layers = {{n, 3, 224, 64, 7, 2, 3, relu},
                               {n, 64, 56, 64, 1, 1, 0, relu},
                               {n, 64, 56, 64, 3, 1, 1, relu},
                               {n, 64, 56, 256, 1, 1, 0, none},
                               {n, 256, 56, 64, 1, 1, 0, relu}};
  struct Stage {
    std::int64_t in_c, in_hw, mid;
  };
  for (const Stage st : {Stage{256, 56, 128}, Stage{512, 28, 256}, Stage{1024, 14, 512}}) {
    const std::int64_t out_hw = st.in_hw / 2, out_c = st.mid * 4;
    layers.push_back({n, st.in_c, st.in_hw, st.mid, 1, 1, 0, relu});
    layers.push_back({n, st.mid, st.in_hw, st.mid, 3, 2, 1, relu});
    layers.push_back({n, st.mid, out_hw, out_c, 1, 1, 0, none});
    layers.push_back({n, st.in_c, st.in_hw, out_c, 1, 2, 0, none});
    layers.push_back({n, out_c, out_hw, st.mid, 1, 1, 0, relu});
    layers.push_back({n, st.mid, out_hw, st.mid, 3, 1, 1, relu});
  }
  return layers;
}

// MobileNetV2 at batch 1: the stem, every distinct depthwise 3x3 (relu6) and pointwise 1x1
// (expansions relu6, projections linear).
std::vector<Layer> mobilenet_v2() {
  const Activation relu6 = Activation::kRelu6, none = Activation::kNone;
  std::vector<Layer> layers = {{1, 3, 224, 32, 3, 2, 1, relu6}};
  const std::int64_t depthwise[][3] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2}, {192, 28, 1},
                                       {192, 28, 2}, {384, 14, 1}, {576, 14, 1}, {576, 14, 2}, {960, 7, 1}};
  for (const auto& d : depthwise) layers.push_back({1, d[0], d[1], d[0], 3, d[2], 1, relu6, d[0]});
  const std::int64_t expand[][3] = {{16, 112, 96}, {24, 56, 144}, {32, 28, 192}, {64, 14, 384},
                                    {96, 14, 576}, {160, 7, 960}, {320, 7, 1280}};
  for (const auto& e : expand) layers.push_back({1, e[0], e[1], e[2], 1, 1, 0, relu6});
  const std::int64_t project[][3] = {{32, 112, 16}, {96, 56, 24},  {144, 56, 24}, {144, 28, 32},
                                     {192, 28, 32}, {192, 14, 64}, {384, 14, 64}, {384, 14, 96},
                                     {576, 14, 96}, {576, 7, 160}, {960, 7, 160}, {960, 7, 320}};
  for (const auto& p : project) layers.push_back({1, p[0], p[1], p[2], 1, 1, 0, none});
  return layers;
}

// A few VGG-16 layers at batch 1 (3x3, stride 1, with bias and relu), one per resolution.
std::vector<Layer> vgg16() {
  std::vector<Layer> layers;
  const std::int64_t convs[][3] = {{3, 224, 64},   {64, 224, 64},  {128, 112, 128},
                                   {256, 56, 256}, {512, 28, 512}, {512, 14, 512}};
  for (const auto& v : convs) layers.push_back({1, v[0], v[1], v[2], 3, 1, 1, Activation::kRelu, 1, true});
  return layers;
}

// The same layer types at sizes a 2-core CPU tunes in a few minutes: stem, 3x3 unstrided (Winograd)
// and strided, 1x1 (GEMM) and strided downsample, depthwise.
std::vector<Layer> quick_layers() {
  const Activation none = Activation::kNone, relu = Activation::kRelu;
  return {{2, 3, 32, 16, 7, 2, 3, relu},  {2, 32, 14, 32, 3, 1, 1, relu},
          {2, 32, 16, 64, 3, 2, 1, relu}, {2, 64, 14, 64, 1, 1, 0, relu},
          {2, 32, 14, 64, 1, 2, 0, none}, {2, 64, 14, 64, 3, 1, 1, Activation::kRelu6, 64}};
}

ProblemList problems_of(const std::vector<Layer>& layers) {
  ProblemList problems;
  for (const ConvDirection dir : kDirections) {
    for (const Layer& l : layers) problems.push_back(std::make_unique<Conv2dProblem>(layer_shape(l, dir)));
  }
  return problems;
}

class Conv2dFamily : public OpFamily {
 public:
  std::string name() const override { return "conv2d"; }
  std::string description() const override {
    return "2-D convolution, NCHW fp32/fp16/bf16, fwd/bwd_data/bwd_weight; algorithm tuned: direct, implicit GEMM, "
           "Winograd, 1x1 "
           "GEMM, depthwise, im2col + GEMM";
  }
  ProblemList preset(const std::string& preset) const override {
    if (preset == "test") {
      ProblemList problems;
      for (const Conv2dTestCase& c : conv2d_test_cases())
        problems.push_back(std::make_unique<Conv2dProblem>(c.shape, c.layout));
      return problems;
    }
    if (preset == "quick") return problems_of(quick_layers());
    if (preset != "default") throw Error(fmt::format("conv2d has no shape preset '{}'", preset));
    std::vector<Layer> layers = resnet50(1);
    for (const Layer& l : resnet50(32)) layers.push_back(l);
    for (const Layer& l : mobilenet_v2()) layers.push_back(l);
    for (const Layer& l : vgg16()) layers.push_back(l);
    return problems_of(layers);
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    return std::make_unique<Conv2dProblem>(Conv2dShape::from_json(shape));
  }
};

}  // namespace

std::vector<Conv2dTestCase> conv2d_test_cases() {
  // Forward shapes with their bias/activation; each also runs backward (activation dropped).
  struct Row {
    Conv2dShape shape;
    Conv2dLayout layout = {};
  };
  const Activation none = Activation::kNone;
  const std::vector<Row> rows = {
      // 3x3 stride 1 (Winograd applies): odd sizes, pad 0/1/2, channels off every tile size.
      {{.n = 1,
        .c = 3,
        .h = 17,
        .w = 17,
        .k = 8,
        .r = 3,
        .s = 3,
        .pad_h = 1,
        .pad_w = 1,
        .bias = true,
        .act = Activation::kRelu}},
      {{.n = 2, .c = 5, .h = 9, .w = 11, .k = 7, .r = 3, .s = 3}},
      {{.n = 1, .c = 33, .h = 8, .w = 7, .k = 17, .r = 3, .s = 3, .pad_h = 2, .pad_w = 2, .bias = true},
       {.input_offset = 3, .weight_offset = 5, .output_offset = 7, .bias_offset = 1}},
      // Stride 2, dilation 2, groups 2, non-square filter.
      {{.n = 1,
        .c = 4,
        .h = 13,
        .w = 13,
        .k = 6,
        .r = 3,
        .s = 3,
        .stride_h = 2,
        .stride_w = 2,
        .pad_h = 1,
        .pad_w = 1,
        .bias = true,
        .act = Activation::kGelu}},
      {{.n = 2,
        .c = 6,
        .h = 10,
        .w = 9,
        .k = 4,
        .r = 3,
        .s = 3,
        .pad_h = 2,
        .pad_w = 2,
        .dil_h = 2,
        .dil_w = 2,
        .act = Activation::kSigmoid}},
      {{.n = 1,
        .c = 4,
        .h = 12,
        .w = 11,
        .k = 5,
        .r = 3,
        .s = 3,
        .stride_h = 2,
        .stride_w = 2,
        .dil_h = 2,
        .dil_w = 2}},
      {{.n = 1,
        .c = 8,
        .h = 11,
        .w = 11,
        .k = 8,
        .r = 3,
        .s = 3,
        .pad_h = 1,
        .pad_w = 1,
        .groups = 2,
        .bias = true,
        .act = Activation::kRelu6}},
      {{.n = 2, .c = 7, .h = 5, .w = 6, .k = 3, .r = 3, .s = 5, .pad_h = 1, .pad_w = 2, .bias = true}},
      // Depthwise (groups = C), multiplier 1 and 2, 3x3 and 5x5.
      {{.n = 2,
        .c = 12,
        .h = 9,
        .w = 9,
        .k = 12,
        .r = 3,
        .s = 3,
        .pad_h = 1,
        .pad_w = 1,
        .groups = 12,
        .bias = true,
        .act = Activation::kRelu}},
      {{.n = 1,
        .c = 8,
        .h = 15,
        .w = 15,
        .k = 16,
        .r = 3,
        .s = 3,
        .stride_h = 2,
        .stride_w = 2,
        .pad_h = 1,
        .pad_w = 1,
        .groups = 8}},
      {{.n = 1,
        .c = 8,
        .h = 11,
        .w = 11,
        .k = 8,
        .r = 5,
        .s = 5,
        .pad_h = 2,
        .pad_w = 2,
        .groups = 8,
        .bias = true,
        .act = Activation::kRelu6},
       {.input_offset = 1, .weight_offset = 2, .output_offset = 3, .bias_offset = 4}},
      // 1x1 (the GEMM algorithm applies), strided 1x1, degenerate 1x1x1.
      {{.n = 3, .c = 16, .h = 7, .w = 7, .k = 24, .r = 1, .s = 1, .bias = true, .act = Activation::kRelu},
       {.input_offset = 2, .weight_offset = 1, .output_offset = 5, .bias_offset = 3}},
      {{.n = 1, .c = 16, .h = 9, .w = 9, .k = 8, .r = 1, .s = 1, .stride_h = 2, .stride_w = 2}},
      {{.n = 1, .c = 1, .h = 1, .w = 1, .k = 1, .r = 1, .s = 1}},
      // 5x5 and 7x7 (strided stem).
      {{.n = 2, .c = 3, .h = 19, .w = 19, .k = 5, .r = 5, .s = 5, .pad_h = 2, .pad_w = 2}},
      {{.n = 1,
        .c = 3,
        .h = 23,
        .w = 23,
        .k = 8,
        .r = 7,
        .s = 7,
        .stride_h = 2,
        .stride_w = 2,
        .pad_h = 3,
        .pad_w = 3,
        .bias = true,
        .act = Activation::kRelu}},
  };
  // 16-bit storage, fp16 and bf16: the rows that reach every algorithm (Winograd, groups, stride,
  // dilation, depthwise, the 1x1 GEMM over three images), every activation and non-zero offsets.
  const std::size_t sixteen_bit_rows[] = {0, 2, 3, 4, 6, 10, 11};
  std::vector<Conv2dTestCase> cases;
  for (const ConvDirection dir : kDirections) {
    const auto add = [&](const Row& row, DType dtype) {
      Conv2dShape s = row.shape;
      s.dir = dir;
      s.dtype = dtype;
      if (dir != ConvDirection::kForward) s.act = none;
      cases.push_back({s, row.layout});
    };
    for (const Row& row : rows) add(row, DType::kFp32);
    for (const DType dtype : {DType::kFp16, DType::kBf16}) {
      for (const std::size_t i : sixteen_bit_rows) add(rows[i], dtype);
    }
  }
  return cases;
}

const OpFamily& conv2d_family() {
  static const Conv2dFamily family;
  return family;
}

}  // namespace ocltune
