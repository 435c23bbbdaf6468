// ops::conv2d through the runtime: every direction of odd, depthwise and 1x1 shapes against the
// float64 reference at the built-in level; exact and nearest database rows; refused calls.
#include <cmath>
#include <tuple>

#include <gtest/gtest.h>

#include "core/storage.h"
#include "harness/capability.h"
#include "harness/verify.h"
#include "ops/conv2d/conv2d_problem.h"
#include "ops/conv2d/conv2d_reference.h"
#include "runtime/conv2d.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

using testing::LogSink;

Session& session() { return testing::test_session(); }

std::unique_ptr<Runtime> make_runtime(const std::string& user_db) {
  return std::make_unique<Runtime>(session().context(), session().device().device,
                                   testing::isolated(user_db, "", std::make_shared<LogSink>()));
}

BestRow conv2d_row(const Conv2dShape& shape, const Config& config) {
  BestRow r;
  r.device_key = session().device().key();
  r.op = "conv2d";
  r.dtype = dtype_name(shape.dtype);
  r.math = math_name(shape.math);
  r.shape_key = shape.key();
  r.shape_json = shape.to_json().dump();
  r.params_json = to_json(config).dump();
  r.median_ns = r.min_ns = r.max_ns = 1000;
  r.source_hash = "test";
  return r;
}

// One tensor in its own buffer at an offset, followed by canary words, in the storage type.
struct Tensor {
  std::int64_t offset = 0, elements = 0;
  bool written = false;
  DType dtype = DType::kFp32;
  std::vector<float> before;
  std::vector<std::uint8_t> mask;
  cl::Buffer buffer;

  void init(std::int64_t off, std::int64_t count, bool out, std::uint64_t seed, DType type) {
    offset = off;
    elements = count;
    written = out;
    dtype = type;
    before.assign(static_cast<std::size_t>(off + count) + kCanaryWords, canary_value());
    if (!out) {
      fill_uniform(before, seed);
      round_to_storage(before, dtype);
    } else {
      mask.assign(before.size(), 0);
      for (std::int64_t i = off; i < off + count; ++i) {
        before[static_cast<std::size_t>(i)] = std::nanf("");  // a skipped element fails
        mask[static_cast<std::size_t>(i)] = 1;
      }
    }
    buffer = make_buffer(session().context(), before, dtype);
  }
  std::span<const float> data() const {
    if (before.empty()) return {};
    return std::span<const float>(before).subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(elements));
  }
};

// A convolution with random operands at odd offsets, and its check against Conv2dReference with the
// family's tolerance.
class HostConv {
 public:
  explicit HostConv(const Conv2dShape& shape) : shape_(shape) {
    const ConvDirection dir = shape.dir;
    input_.init(3, shape.input_elements(), dir == ConvDirection::kBackwardData, 1, shape.dtype);
    weight_.init(5, shape.weight_elements(), dir == ConvDirection::kBackwardWeight, 2, shape.dtype);
    output_.init(7, shape.output_elements(), dir == ConvDirection::kForward, 3, shape.dtype);
    if (shape.bias) bias_.init(2, shape.k, dir == ConvDirection::kBackwardWeight, 4, shape.dtype);
    call_.shape = shape;
    call_.input = input_.buffer();
    call_.weight = weight_.buffer();
    call_.output = output_.buffer();
    call_.bias = shape.bias ? bias_.buffer() : nullptr;
    call_.input_offset = input_.offset;
    call_.weight_offset = weight_.offset;
    call_.output_offset = output_.offset;
    call_.bias_offset = bias_.offset;
  }
  const Conv2dCall& call() const { return call_; }

  // The first mismatch after the op ran with `config` ("" if the result is right and nothing else changed).
  std::string check(const Config& config) {
    const Conv2dShape& s = shape_;
    const Conv2dReference ref(s, input_.data(), weight_.data(), output_.data(), bias_.data());
    std::vector<Expected> out, bias;
    // 16-bit: up to two roundings of each result (Conv2dProblem's verification), the fp16 floor.
    const double rounding = s.dtype == DType::kFp32 ? 0.0 : 2.0 * dtype_roundoff(s.dtype);
    const double floor = s.dtype == DType::kFp32 ? 0.0 : dtype_abs_floor(s.dtype) / rounding;
    const auto add = [&](std::vector<Expected>& e, const Tensor& t, std::int64_t i, ReferenceValue v) {
      e.push_back({static_cast<std::size_t>(t.offset + i), saturate_to_storage(v.value, s.dtype), v.scale + floor});
    };
    Tensor* written = nullptr;
    if (s.dir == ConvDirection::kForward) {
      written = &output_;
      for (std::int64_t i = 0; i < s.output_elements(); ++i) {
        const std::int64_t q = i % s.q(), p = i / s.q() % s.p();
        const std::int64_t k = i / (s.p() * s.q()) % s.k, n = i / (s.k * s.p() * s.q());
        add(out, output_, i, ref.forward(n, k, p, q));
      }
    } else if (s.dir == ConvDirection::kBackwardData) {
      written = &input_;
      for (std::int64_t i = 0; i < s.input_elements(); ++i) {
        const std::int64_t w = i % s.w, h = i / s.w % s.h, c = i / (s.h * s.w) % s.c, n = i / (s.c * s.h * s.w);
        add(out, input_, i, ref.backward_data(n, c, h, w));
      }
    } else {
      written = &weight_;
      const std::int64_t cg = s.c_per_group();
      for (std::int64_t i = 0; i < s.weight_elements(); ++i) {
        const std::int64_t x = i % s.s, y = i / s.s % s.r, c = i / (s.r * s.s) % cg, k = i / (cg * s.r * s.s);
        add(out, weight_, i, ref.backward_weight(k, c, y, x));
      }
      for (std::int64_t k = 0; s.bias && k < s.k; ++k) add(bias, bias_, k, ref.bias_gradient(k));
    }
    const double terms = static_cast<double>(accumulation_length(s));
    double tol = (8.0 * std::sqrt(terms) + 4.0) * 0x1.0p-24;
    if (s.math == MathMode::kTf32) tol += 8.0 * 0x1.0p-10 / std::sqrt(terms);  // as Conv2dProblem's verification
    if (config.at("ALGO") == kAlgoWinograd) {
      tol *= winograd_magnitude_factor(static_cast<int>(value_or(config, "WINO_M", 2)));
    }
    tol += rounding;
    std::string failures;
    for (Tensor* t : {&input_, &weight_, &output_, &bias_}) {
      if (t->before.empty()) continue;
      const std::vector<float> after = read_buffer(session().queue(), t->buffer, t->before.size(), s.dtype);
      // Read-only tensors must come back bit-identical; written ones match the reference.
      const std::vector<Expected> none;
      const std::vector<Expected>& e = t == written ? out : (t == &bias_ && t->written ? bias : none);
      const std::vector<std::uint8_t> mask = t->written ? t->mask : std::vector<std::uint8_t>{};
      const VerifyResult r = verify_output(after, t->before, e, tol, mask);
      if (!r.ok) failures += r.message + "; ";
    }
    return failures;
  }

 private:
  Conv2dShape shape_;
  Tensor input_, weight_, output_, bias_;
  Conv2dCall call_;
};

// N=2, C=3, 11x13, K=5, 3x3 stride 2 pad 1 (bias and ReLU forward, bias gradient backward-weight);
// a depthwise 3x3 with channel multiplier 2; a 1x1.
std::vector<Conv2dShape> odd_shapes(ConvDirection dir) {
  const bool bias = dir != ConvDirection::kBackwardData;
  Conv2dShape regular{.dir = dir,
                      .n = 2,
                      .c = 3,
                      .h = 11,
                      .w = 13,
                      .k = 5,
                      .r = 3,
                      .s = 3,
                      .stride_h = 2,
                      .stride_w = 2,
                      .pad_h = 1,
                      .pad_w = 1,
                      .bias = bias};
  if (dir == ConvDirection::kForward) regular.act = Activation::kRelu;
  const Conv2dShape depthwise{.dir = dir,
                              .n = 2,
                              .c = 6,
                              .h = 11,
                              .w = 13,
                              .k = 12,
                              .r = 3,
                              .s = 3,
                              .pad_h = 1,
                              .pad_w = 1,
                              .groups = 6,
                              .bias = bias};
  const Conv2dShape pointwise{.dir = dir, .n = 2, .c = 7, .h = 11, .w = 13, .k = 5, .r = 1, .s = 1, .bias = bias};
  return {regular, depthwise, pointwise};
}

constexpr ConvDirection kDirections[] = {ConvDirection::kForward, ConvDirection::kBackwardData,
                                         ConvDirection::kBackwardWeight};

Conv2dShape with_dtype(Conv2dShape s, DType dtype) {
  s.dtype = dtype;
  return s;
}

// 16-bit calls: the built-in configuration of their own problem (no fp32 copies), every direction.
TEST(RuntimeConv2d, SixteenBitCallsMatchTheReferenceInEveryDirection) {
  auto rt = make_runtime("");
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    for (const ConvDirection dir : kDirections) {
      for (const Conv2dShape& fp32 : odd_shapes(dir)) {
        const Conv2dShape shape = with_dtype(fp32, dtype);
        HostConv conv(shape);
        const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
        EXPECT_EQ(d.level, Level::kBuiltin) << shape.key();
        ASSERT_NE(d.last(), nullptr);
        d.last()->wait();
        const Decision decision = ops::conv2d_decision(*rt, conv.call());
        EXPECT_EQ(decision.config, Conv2dProblem(shape).default_config(session().device())) << shape.key();
        EXPECT_EQ(conv.check(decision.config), "") << dtype_name(dtype) << " " << shape.key();
      }
    }
  }
  EXPECT_EQ(rt->stats().resolutions, 18u) << "a problem per dtype: the shape code tells them apart";
}

// A row is a row of its dtype, as the GEMM's: a 16-bit call takes its dtype's row before the fp32
// row of the same shape, and an fp32 call never takes a 16-bit row. A 16-bit call whose dtype has
// no row takes the other 16-bit type's row, then the fp32 row (the same kernels in 16 bits), checked
// at first dispatch, before its built-in configuration.
TEST(RuntimeConv2d, SixteenBitCallsUseTheRowsOfTheirDtype) {
  const Conv2dShape fp32 = odd_shapes(ConvDirection::kBackwardData)[0];
  const Conv2dShape fp16 = with_dtype(fp32, DType::kFp16), bf16 = with_dtype(fp32, DType::kBf16);
  const Config fp16_row = conv2d_default_config(fp16, kAlgoImplicitGemm);
  const Config fp32_row = conv2d_default_config(fp32, kAlgoDirect);
  ASSERT_NE(fp16_row, Conv2dProblem(fp16).default_config(session().device()));
  ASSERT_NE(fp32_row, Conv2dProblem(fp32).default_config(session().device()));
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_16bit_rows.db"), {session().device()},
                                                 {conv2d_row(fp16, fp16_row), conv2d_row(fp32, fp32_row)}));
  EXPECT_TRUE(rt->messages().empty()) << (rt->messages().empty() ? "" : rt->messages().front());
  for (const auto& [shape, config, level] : std::vector<std::tuple<Conv2dShape, Config, Level>>{
           {fp16, fp16_row, Level::kExact}, {fp32, fp32_row, Level::kExact}, {bf16, fp16_row, Level::kNearest}}) {
    HostConv conv(shape);
    const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
    EXPECT_EQ(d.level, level) << dtype_name(shape.dtype);
    d.last()->wait();
    const Decision decision = ops::conv2d_decision(*rt, conv.call());
    EXPECT_EQ(decision.config, config) << dtype_name(shape.dtype);
    EXPECT_EQ(decision.verified, level == Level::kNearest) << dtype_name(shape.dtype);
    EXPECT_EQ(conv.check(config), "") << dtype_name(shape.dtype);
  }
  // Without the fp16 row the bf16 call takes the fp32 row; with neither, its built-in configuration.
  HostConv conv(bf16);
  auto fp32_only = make_runtime(testing::write_database(testing::temp_path("conv2d_16bit_rows_fp32.db"),
                                                        {session().device()}, {conv2d_row(fp32, fp32_row)}));
  EXPECT_EQ(ops::conv2d(*fp32_only, session().queue()(), conv.call()).level, Level::kNearest);
  EXPECT_EQ(ops::conv2d_decision(*fp32_only, conv.call()).config, fp32_row);
  auto none =
      make_runtime(testing::write_database(testing::temp_path("conv2d_16bit_rows_none.db"), {session().device()}, {}));
  EXPECT_EQ(ops::conv2d(*none, session().queue()(), conv.call()).level, Level::kBuiltin);
  EXPECT_EQ(ops::conv2d_decision(*none, conv.call()).config, Conv2dProblem(bf16).default_config(session().device()));
}

// torch.compile's fused convolutions (bias, activation) have shape keys of their own: the rows of the
// same convolution with another epilogue serve them (eager's plain convolution, the family's fused
// inference shapes), checked at first dispatch, before any nearer shape and before the built-in; a
// 16-bit fused call takes its dtype's equivalent row, then the other 16-bit type's, before the fp32
// ones.
TEST(RuntimeConv2d, CallsTakeTheRowsOfTheSameConvolutionWithAnotherEpilogue) {
  Conv2dShape plain = odd_shapes(ConvDirection::kForward)[0];
  plain.bias = false;
  plain.act = Activation::kNone;
  Conv2dShape fused = plain;
  fused.bias = true;
  fused.act = Activation::kGelu;
  const Config plain_row = conv2d_default_config(plain, kAlgoDirect);
  const Config bf16_row = conv2d_default_config(plain, kAlgoImplicitGemm);
  ASSERT_NE(plain_row, Conv2dProblem(fused).default_config(session().device()));
  ASSERT_NE(bf16_row, plain_row);
  // A nearer shape's row with the call's own epilogue comes after the equivalent shape's exact row.
  Conv2dShape other = fused;
  other.h += 1;
  const Config other_row = conv2d_default_config(other, kAlgoIm2col);
  ASSERT_NE(other_row, plain_row);
  auto rt = make_runtime(
      testing::write_database(testing::temp_path("conv2d_epilogue_rows.db"), {session().device()},
                              {conv2d_row(plain, plain_row), conv2d_row(with_dtype(plain, DType::kBf16), bf16_row),
                               conv2d_row(other, other_row)}));
  EXPECT_TRUE(rt->messages().empty()) << (rt->messages().empty() ? "" : rt->messages().front());
  Conv2dShape relu = fused;
  relu.act = Activation::kRelu;
  for (const auto& [shape, config] :
       std::vector<std::pair<Conv2dShape, Config>>{{fused, plain_row},
                                                   {relu, plain_row},
                                                   {with_dtype(fused, DType::kBf16), bf16_row},
                                                   {with_dtype(fused, DType::kFp16), bf16_row}}) {
    HostConv conv(shape);
    const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
    EXPECT_EQ(d.level, Level::kNearest) << shape.key() << " " << dtype_name(shape.dtype);
    d.last()->wait();
    const Decision decision = ops::conv2d_decision(*rt, conv.call());
    EXPECT_EQ(decision.config, config) << shape.key() << " " << dtype_name(shape.dtype);
    EXPECT_TRUE(decision.verified) << shape.key();
    // The fp16 call has no row of its dtype: the bf16 plain convolution's.
    const std::string source = shape.dtype == DType::kFp16 ? "bf16 " : "equivalent shape's ";
    EXPECT_EQ(decision.source.rfind(source, 0), 0u) << decision.source;
    EXPECT_EQ(conv.check(config), "") << shape.key() << " " << dtype_name(shape.dtype);
  }
  // The backward directions vary the bias only: a weight gradient with a bias gradient takes the row
  // of the one without.
  Conv2dShape weight_grad = odd_shapes(ConvDirection::kBackwardWeight)[0];
  weight_grad.bias = false;
  const Config weight_row = conv2d_default_config(weight_grad, kAlgoDirect);
  auto wrt = make_runtime(testing::write_database(testing::temp_path("conv2d_epilogue_rows_bwd.db"),
                                                  {session().device()}, {conv2d_row(weight_grad, weight_row)}));
  weight_grad.bias = true;
  HostConv conv(weight_grad);
  EXPECT_EQ(ops::conv2d(*wrt, session().queue()(), conv.call()).level, Level::kNearest);
  session().queue().finish();
  EXPECT_EQ(ops::conv2d_decision(*wrt, conv.call()).config, weight_row);
  EXPECT_EQ(conv.check(weight_row), "");
}

TEST(RuntimeConv2d, BuiltinLevelMatchesTheReferenceInEveryDirection) {
  auto rt = make_runtime("");
  for (const ConvDirection dir : kDirections) {
    for (const Conv2dShape& shape : odd_shapes(dir)) {
      ASSERT_TRUE(shape.depthwise() == (shape.groups > 1));
      HostConv conv(shape);
      const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
      EXPECT_EQ(d.level, Level::kBuiltin) << shape.key();
      ASSERT_NE(d.last(), nullptr);
      d.last()->wait();
      const Decision decision = ops::conv2d_decision(*rt, conv.call());
      EXPECT_EQ(decision.config, Conv2dProblem(shape).default_config(session().device())) << shape.key();
      EXPECT_EQ(conv.check(decision.config), "") << shape.key();
    }
  }
  EXPECT_EQ(rt->stats().resolutions, 9u) << "one decision per shape, found again by the shape code";
}

TEST(RuntimeConv2d, ExactRowsChooseTheirAlgorithm) {
  // Winograd (transforms and a batched GEMM, workspace) for a 3x3 stride-1 forward; implicit GEMM for
  // the strided backward-data; the 1x1 GEMM for a backward-weight with bias gradient.
  Conv2dShape wino{.n = 2, .c = 3, .h = 11, .w = 13, .k = 5, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .bias = true};
  const Conv2dShape strided = odd_shapes(ConvDirection::kBackwardData)[0];
  const Conv2dShape pointwise = odd_shapes(ConvDirection::kBackwardWeight)[2];
  const std::vector<std::pair<Conv2dShape, Config>> cases = {
      {wino, conv2d_default_config(wino, kAlgoWinograd)},
      {strided, conv2d_default_config(strided, kAlgoImplicitGemm)},
      {pointwise, conv2d_default_config(pointwise, kAlgoGemm1x1)}};
  std::vector<BestRow> rows;
  for (const auto& [shape, config] : cases) {
    ASSERT_NE(config, Conv2dProblem(shape).default_config(session().device()))
        << "the row must differ from the built-in";
    rows.push_back(conv2d_row(shape, config));
  }
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_exact.db"), {session().device()}, rows));
  EXPECT_TRUE(rt->messages().empty()) << (rt->messages().empty() ? "" : rt->messages().front());
  for (const auto& [shape, config] : cases) {
    HostConv conv(shape);
    const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
    EXPECT_EQ(d.level, Level::kExact) << shape.key();
    ASSERT_NE(d.last(), nullptr);
    d.last()->wait();
    if (config.at("ALGO") == kAlgoWinograd) {
      EXPECT_GT(d.count, 1u) << "Winograd runs its transforms";
    }
    const Decision decision = ops::conv2d_decision(*rt, conv.call());
    EXPECT_EQ(decision.config, config) << shape.key();
    EXPECT_EQ(conv.check(config), "") << shape.key();
    // A second call on other buffers hits the cached decision and plans on the new buffers.
    HostConv again(shape);
    ops::conv2d(*rt, session().queue()(), again.call()).last()->wait();
    EXPECT_EQ(again.check(config), "") << shape.key();
  }
  EXPECT_EQ(rt->stats().resolutions, cases.size());
}

// The kernels of a multi-kernel plan (Winograd: transforms around a batched GEMM) are chained by
// events on an out-of-order queue, where nothing else orders them, and the caller's wait list holds
// the first back; on an in-order queue they go without events (the queue orders them).
TEST(RuntimeConv2d, MultiKernelPlansStayInOrderOnEitherKindOfQueue) {
  Conv2dShape wino{.n = 2, .c = 3, .h = 11, .w = 13, .k = 5, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .bias = true};
  const Config config = conv2d_default_config(wino, kAlgoWinograd);
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_queues.db"), {session().device()},
                                                 {conv2d_row(wino, config)}));
  cl::CommandQueue out_of_order(session().context(), session().device().device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
  for (int round = 0; round < 3; ++round) {  // decisions resolved, then cached
    HostConv conv(wino);
    cl::UserEvent gate(session().context());
    const cl_event wait[] = {gate()};
    const Dispatch d = ops::conv2d(*rt, out_of_order(), conv.call(), {.wait = wait, .events = true});
    ASSERT_GT(d.count, 1u);
    ASSERT_NE(d.last(), nullptr);
    EXPECT_NE(d.last()->getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>(), CL_COMPLETE) << "ran before its wait list";
    gate.setStatus(CL_COMPLETE);
    d.last()->wait();
    EXPECT_EQ(conv.check(config), "") << "out-of-order queue, round " << round;

    HostConv in_order(wino);
    const Dispatch e = ops::conv2d(*rt, session().queue()(), in_order.call(), {.wait = {}, .events = false});
    EXPECT_EQ(e.last(), nullptr);
    session().queue().finish();
    EXPECT_EQ(in_order.check(config), "") << "in-order queue without events, round " << round;
  }
}

// allow_tf32 calls: tuned rows are kept apart from exact mode's; without tensor cores the exact
// kernels serve them, with them a row holding the tensor-core algorithm runs it.
TEST(RuntimeConv2d, Tf32CallsUseTheirOwnRows) {
  Conv2dShape exact = odd_shapes(ConvDirection::kForward)[0];
  Conv2dShape tf32 = exact;
  tf32.math = MathMode::kTf32;
  const bool tensor_cores = satisfies(session().device(), nvidia_mma_tf32());
  const Config tf32_config = conv2d_default_config(tf32, tensor_cores ? kAlgoImplicitGemmTf32 : kAlgoImplicitGemm);
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_tf32.db"), {session().device()},
                                                 {conv2d_row(tf32, tf32_config)}));
  EXPECT_TRUE(rt->messages().empty()) << (rt->messages().empty() ? "" : rt->messages().front());
  HostConv with_tf32(tf32);
  const Dispatch d = ops::conv2d(*rt, session().queue()(), with_tf32.call());
  EXPECT_EQ(d.level, Level::kExact);
  d.last()->wait();
  EXPECT_EQ(ops::conv2d_decision(*rt, with_tf32.call()).config, tf32_config);
  EXPECT_EQ(with_tf32.check(tf32_config), "");
  // The exact-mode call of the same shape does not take the tf32 row.
  HostConv without(exact);
  const Dispatch e = ops::conv2d(*rt, session().queue()(), without.call());
  EXPECT_EQ(e.level, Level::kBuiltin);
  e.last()->wait();
  EXPECT_EQ(ops::conv2d_decision(*rt, without.call()).config, Conv2dProblem(exact).default_config(session().device()));
  EXPECT_EQ(without.check(ops::conv2d_decision(*rt, without.call()).config), "");
}

// A tf32 call may run exact configurations: rows of both math modes compete. Of two rows of its
// shape it takes the one recorded faster, whichever its math; with rows of nearby shapes only, the
// nearer, an exact-math one included (a tf32 call of a shape tuned in exact mode alone ran the
// built-in configuration before).
TEST(RuntimeConv2d, Tf32CallsTakeTheFasterRowOfEitherMath) {
  Conv2dShape exact = odd_shapes(ConvDirection::kForward)[0];
  Conv2dShape tf32 = exact;
  tf32.math = MathMode::kTf32;
  const Config direct = conv2d_default_config(exact, kAlgoDirect),
               igemm = conv2d_default_config(exact, kAlgoImplicitGemm);
  ASSERT_NE(direct, igemm);
  for (const bool exact_faster : {true, false}) {
    BestRow exact_row = conv2d_row(exact, direct), tf32_row = conv2d_row(tf32, igemm);
    (exact_faster ? tf32_row : exact_row).median_ns = 2000;  // the other stays at 1000
    auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_either_math.db"), {session().device()},
                                                   {exact_row, tf32_row}));
    HostConv conv(tf32);
    const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
    EXPECT_EQ(d.level, Level::kExact);
    d.last()->wait();
    const Config taken = ops::conv2d_decision(*rt, conv.call()).config;
    EXPECT_EQ(taken, exact_faster ? direct : igemm);
    EXPECT_EQ(conv.check(taken), "");
  }
  // Only an exact-math row of a nearby shape: the tf32 call takes it at the nearest level.
  Conv2dShape near = exact;
  near.h = 12;
  near.w = 12;
  const Config near_config = conv2d_default_config(near, kAlgoImplicitGemm);
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_either_math_near.db"), {session().device()},
                                                 {conv2d_row(near, near_config)}));
  HostConv conv(tf32);
  const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
  EXPECT_EQ(d.level, Level::kNearest);
  d.last()->wait();
  EXPECT_EQ(ops::conv2d_decision(*rt, conv.call()).config, near_config);
  EXPECT_EQ(conv.check(near_config), "");
}

TEST(RuntimeConv2d, NearestRowIsVerifiedOnFirstUse) {
  const Conv2dShape call_shape = odd_shapes(ConvDirection::kForward)[0];
  Conv2dShape tuned = call_shape;
  tuned.h = 12;
  tuned.w = 12;
  const Config config = conv2d_default_config(tuned, kAlgoImplicitGemm);
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_nearest.db"), {session().device()},
                                                 {conv2d_row(tuned, config)}));
  HostConv conv(call_shape);
  const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
  EXPECT_EQ(d.level, Level::kNearest);
  d.last()->wait();
  const Decision decision = ops::conv2d_decision(*rt, conv.call());
  EXPECT_EQ(decision.config, config);
  EXPECT_TRUE(decision.verified);
  EXPECT_NEAR(decision.distance, std::hypot(std::log2(11.0 / 12), std::log2(13.0 / 12)), 1e-9);
  EXPECT_EQ(conv.check(config), "");
}

// A 1x1 weight gradient of a batch of 9 images: one batched GEMM and one summing pass, not one
// accumulating GEMM per image (that planned 10 kernels here and 32 on the H200's batch-32 calls, more
// than the runtime took, and the call failed).
TEST(RuntimeConv2d, PointwiseWeightGradientOfALargeBatchIsOneGemmAndASum) {
  Conv2dShape shape = odd_shapes(ConvDirection::kBackwardWeight)[2];
  shape.n = 9;
  const Config config = conv2d_default_config(shape, kAlgoGemm1x1);
  auto rt = make_runtime(testing::write_database(testing::temp_path("conv2d_batch9.db"), {session().device()},
                                                 {conv2d_row(shape, config)}));
  HostConv conv(shape);
  const Dispatch d = ops::conv2d(*rt, session().queue()(), conv.call());
  EXPECT_EQ(d.level, Level::kExact);
  ASSERT_NE(d.last(), nullptr);
  d.last()->wait();
  EXPECT_LE(d.count, 4u) << "GEMM (packing included), sum, bias gradient";
  EXPECT_EQ(conv.check(config), "");
}

// The runtime runs plans longer than kMaxSteps (re-planned per call; the last event is the last
// kernel's). A test adapter repeats the built-in forward plan until it is longer: the same result.
class RepeatedConv2dAdapter : public Conv2dAdapter {
 public:
  LaunchPlan plan_of(const Conv2dCall& call, const Config& config, Workspace& workspace) const override {
    LaunchPlan plan;
    while (plan.kernels.size() <= kMaxSteps) {
      for (KernelLaunch& k : Conv2dAdapter::plan_of(call, config, workspace).kernels) {
        plan.kernels.push_back(std::move(k));
      }
    }
    return plan;
  }
};

TEST(RuntimeConv2d, PlansLongerThanTheFastPathRunInOrder) {
  const RepeatedConv2dAdapter adapter;
  auto rt = make_runtime("");
  for (int round = 0; round < 2; ++round) {  // the second call hits the cached decision
    HostConv conv(odd_shapes(ConvDirection::kForward)[0]);
    const Conv2dCall call = conv.call();
    const Dispatch d = rt->dispatch(adapter, conv2d_shape_code(adapter, call), &call, session().queue()(), {});
    EXPECT_EQ(d.count, kMaxSteps);
    ASSERT_NE(d.last(), nullptr);
    d.last()->wait();
    EXPECT_EQ(conv.check(rt->decide(adapter, conv2d_shape_code(adapter, call), &call).config), "");
  }
  EXPECT_EQ(rt->stats().resolutions, 1u);
}

TEST(RuntimeConv2d, CallsNoKernelCanServeThrowBeforeEnqueueing) {
  HostConv conv(odd_shapes(ConvDirection::kForward)[0]);
  const auto refused = [&](auto change) {
    Conv2dCall c = conv.call();
    change(c);
    return [c] { check_conv2d_call(c); };
  };
  EXPECT_NO_THROW(check_conv2d_call(conv.call()));
  EXPECT_THROW(refused([](Conv2dCall& c) { c.weight = nullptr; })(), Error);
  EXPECT_THROW(refused([](Conv2dCall& c) { c.bias = nullptr; })(), Error);
  EXPECT_THROW(refused([](Conv2dCall& c) { c.shape.groups = 2; })(), Error);
  EXPECT_THROW(refused([](Conv2dCall& c) { c.shape.dir = ConvDirection::kBackwardData; })(), Error);  // ReLU
  EXPECT_THROW(refused([](Conv2dCall& c) { c.shape.n = 0; })(), Error);
  EXPECT_THROW(refused([](Conv2dCall& c) { c.shape.pad_w = 65; })(), Error);
  EXPECT_THROW(refused([](Conv2dCall& c) { c.shape.r = 40; })(), Error);  // larger than the padded input
  EXPECT_THROW(refused([](Conv2dCall& c) { c.output_offset = -1; })(), Error);
  EXPECT_THROW(refused([](Conv2dCall& c) { c.shape.dtype = static_cast<DType>(3); })(), Error);
  // A 16-bit call's buffers hold half the bytes: the same call in fp32 would read past them.
  HostConv half(with_dtype(odd_shapes(ConvDirection::kForward)[0], DType::kFp16));
  EXPECT_NO_THROW(check_conv2d_call(half.call()));
  Conv2dCall widened = half.call();
  widened.shape.dtype = DType::kFp32;
  EXPECT_THROW(check_conv2d_call(widened), Error);
  auto rt = make_runtime("");
  Conv2dCall bad = conv.call();
  bad.input = nullptr;
  EXPECT_THROW(ops::conv2d(*rt, session().queue()(), bad), Error);
  EXPECT_EQ(rt->stats().resolutions, 0u);
}

TEST(RuntimeConv2d, ShapeCodeTellsApartEveryPackedField) {
  Conv2dCall a = HostConv(odd_shapes(ConvDirection::kForward)[0]).call();
  const ShapeCode base = conv2d_shape_code(conv2d_adapter(), a);
  EXPECT_LE(base.size, ShapeCode::kMaxDims);
  const auto differs = [&](auto change) {
    Conv2dCall c = a;
    change(c.shape);
    return !(conv2d_shape_code(conv2d_adapter(), c) == base);
  };
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.r = 1; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.s = 1; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.stride_h = 1; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.stride_w = 1; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.pad_h = 0; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.pad_w = 0; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.dil_w = 2; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.bias = false; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.act = Activation::kGelu; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.dir = ConvDirection::kBackwardWeight; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.math = MathMode::kTf32; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.dtype = DType::kFp16; }));
  EXPECT_TRUE(differs([](Conv2dShape& s) { s.dtype = DType::kBf16; }));
  // Buffers and offsets are not part of the problem.
  Conv2dCall moved = a;
  moved.input_offset = 11;
  moved.output = nullptr;
  EXPECT_TRUE(conv2d_shape_code(conv2d_adapter(), moved) == base);
}

}  // namespace
}  // namespace ocltune
