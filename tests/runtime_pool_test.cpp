// ops::pool through the runtime: max (with indices) and average pooling, forward and backward, and
// adaptive average, against the float64 reference at the built-in level; an exact row; refused calls.
#include <cmath>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/storage.h"
#include "harness/verify.h"
#include "ops/pool/pool_problem.h"
#include "ops/pool/pool_reference.h"
#include "runtime/pool.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

Session& session() { return testing::test_session(); }

std::unique_ptr<Runtime> make_runtime(const std::string& user_db) {
  return std::make_unique<Runtime>(session().context(), session().device().device,
                                   testing::isolated(user_db, "", std::make_shared<testing::LogSink>()));
}

BestRow pool_row(const PoolShape& shape, const Config& config) {
  BestRow r;
  r.device_key = session().device().key();
  r.op = "pool";
  r.dtype = dtype_name(shape.dtype);
  r.shape_key = shape.key();
  r.shape_json = shape.to_json().dump();
  r.params_json = to_json(config).dump();
  r.median_ns = r.min_ns = r.max_ns = 1000;
  r.source_hash = "test";
  return r;
}

constexpr std::int64_t kIndexSentinel = -7;
constexpr std::int64_t kIndexCanary = 0x5ca1ab1e0ddba11LL;

// A pooling call on random fp32 data at odd offsets, checked against pool_reference with the
// family's margin; max backward reads the indices of a forward pass over other random data.
class HostPool {
 public:
  explicit HostPool(const PoolShape& shape) : shape_(shape) {
    const PoolShape& s = shape;
    const bool adaptive = s.kind == PoolKind::kAdaptiveAvg;
    const std::int64_t plane = s.h * s.w, out_plane = s.out_h() * s.out_w();
    const std::int64_t in_count = s.planes() * (s.backward ? (adaptive ? 1 : out_plane) : plane);
    const std::int64_t out_count = s.planes() * (s.backward ? plane : out_plane);
    in_.assign(static_cast<std::size_t>(kIn + in_count), 0.0f);
    fill_uniform(in_, 31, -4.0f, 4.0f);
    out_before_.assign(static_cast<std::size_t>(kOut + out_count) + kCanaryWords, canary_value());
    written_.assign(out_before_.size(), 0);
    for (std::int64_t i = kOut; i < kOut + out_count; ++i) {
      out_before_[static_cast<std::size_t>(i)] = std::nanf("");
      written_[static_cast<std::size_t>(i)] = 1;
    }
    const cl::Context& ctx = session().context();
    in_buf_ = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_.size() * 4, in_.data());
    out_buf_ = cl::Buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, out_before_.size() * 4, out_before_.data());
    if (s.reads_indices()) {
      PoolShape forward = s;
      forward.backward = false;
      std::vector<float> x(static_cast<std::size_t>(s.planes() * plane));
      fill_uniform(x, 32, -4.0f, 4.0f);
      indices_in_ = pool_reference(forward, x, {}).indices;
      indices_before_.assign(static_cast<std::size_t>(kIdx), kIndexCanary);
      indices_before_.insert(indices_before_.end(), indices_in_.begin(), indices_in_.end());
    } else if (s.writes_indices()) {
      indices_before_.assign(static_cast<std::size_t>(kIdx), kIndexCanary);
      indices_before_.resize(indices_before_.size() + static_cast<std::size_t>(out_count), kIndexSentinel);
      indices_before_.resize(indices_before_.size() + kCanaryWords, kIndexCanary);
    }
    if (!indices_before_.empty()) {
      idx_buf_ =
          cl::Buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, indices_before_.size() * 8, indices_before_.data());
    }
    call_.shape = s;
    call_.in = in_buf_();
    call_.in_offset = kIn;
    call_.out = out_buf_();
    call_.out_offset = kOut;
    call_.indices = indices_before_.empty() ? nullptr : idx_buf_();
    call_.indices_offset = kIdx;
  }
  const PoolCall& call() const { return call_; }

  // The first mismatch of the outputs or indices ("" if right and nothing outside them changed).
  std::string check() const {
    const PoolReference ref =
        pool_reference(shape_, std::span<const float>(in_).subspan(static_cast<std::size_t>(kIn)), indices_in_);
    const double u = dtype_roundoff(DType::kFp32);
    std::vector<Expected> expected;
    for (std::size_t i = 0; i < ref.value.size(); ++i) {
      const double v = ref.value[i];
      const double bound = ref.bound[i] + u * std::abs(v) + dtype_abs_floor(DType::kFp32);
      expected.push_back({static_cast<std::size_t>(kOut) + i, v, std::isfinite(v) ? bound / u : 1.0});
    }
    std::vector<float> after(out_before_.size());
    session().queue().enqueueReadBuffer(out_buf_, CL_TRUE, 0, after.size() * 4, after.data());
    const VerifyResult r = verify_output(after, out_before_, expected, kPoolMargin * u, written_);
    if (!r.ok) return r.message;
    if (shape_.writes_indices()) {
      std::vector<std::int64_t> got(indices_before_.size());
      session().queue().enqueueReadBuffer(idx_buf_, CL_TRUE, 0, got.size() * 8, got.data());
      for (std::size_t i = 0; i < got.size(); ++i) {
        const bool inside = i >= kIdx && i - kIdx < ref.indices.size();
        const std::int64_t want = inside ? ref.indices[i - kIdx] : indices_before_[i];
        if (got[i] != want) return fmt::format("indices[{}]: got {}, expected {}", i, got[i], want);
      }
    }
    return "";
  }

 private:
  static constexpr std::int64_t kIn = 3, kOut = 5, kIdx = 2;
  PoolShape shape_;
  std::vector<float> in_, out_before_;
  std::vector<std::uint8_t> written_;
  std::vector<std::int64_t> indices_in_, indices_before_;
  cl::Buffer in_buf_, out_buf_, idx_buf_;
  PoolCall call_;
};

// N=2, C=3, 11x13: max 3x3 stride 2 pad 1 with ceil_mode, average 3x2 stride 2x1 pad 1x0 without
// the padding counted, adaptive average; each forward and backward.
std::vector<PoolShape> odd_shapes() {
  const PoolShape max{.kind = PoolKind::kMax,
                      .n = 2,
                      .c = 3,
                      .h = 11,
                      .w = 13,
                      .kh = 3,
                      .kw = 3,
                      .sh = 2,
                      .sw = 2,
                      .ph = 1,
                      .pw = 1,
                      .ceil_mode = true};
  const PoolShape avg{.kind = PoolKind::kAvg,
                      .n = 2,
                      .c = 3,
                      .h = 11,
                      .w = 13,
                      .kh = 3,
                      .kw = 2,
                      .sh = 2,
                      .sw = 1,
                      .ph = 1,
                      .pw = 0,
                      .count_include_pad = false,
                      .indices = false};
  const PoolShape adaptive{.kind = PoolKind::kAdaptiveAvg, .n = 2, .c = 3, .h = 11, .w = 13, .indices = false};
  std::vector<PoolShape> shapes;
  for (PoolShape s : {max, avg, adaptive}) {
    shapes.push_back(s);
    s.backward = true;
    shapes.push_back(s);
  }
  return shapes;
}

TEST(RuntimePool, BuiltinLevelMatchesTheReferenceForEveryKindAndDirection) {
  auto rt = make_runtime("");
  for (const PoolShape& shape : odd_shapes()) {
    HostPool pool(shape);
    const Dispatch d = ops::pool(*rt, session().queue()(), pool.call());
    EXPECT_EQ(d.level, Level::kBuiltin) << shape.key();
    ASSERT_NE(d.last(), nullptr);
    d.last()->wait();
    EXPECT_EQ(pool.check(), "") << shape.key();
    EXPECT_EQ(ops::pool_decision(*rt, pool.call()).config, pool_default_config(shape, session().device()))
        << shape.key();
  }
  EXPECT_EQ(rt->stats().resolutions, odd_shapes().size());
}

TEST(RuntimePool, ExactRowsChooseTheirConfiguration) {
  const std::vector<PoolShape> shapes = odd_shapes();
  const PoolShape max_fwd = shapes[0], avg_bwd = shapes[3];
  const Config tiles{{"WPT", 2}, {"LX", 8}, {"LY", 2}};
  ASSERT_NE(tiles, pool_default_config(max_fwd, session().device()));
  auto rt = make_runtime(testing::write_database(testing::temp_path("pool_exact.db"), {session().device()},
                                                 {pool_row(max_fwd, tiles), pool_row(avg_bwd, tiles)}));
  EXPECT_TRUE(rt->messages().empty()) << (rt->messages().empty() ? "" : rt->messages().front());
  for (const PoolShape& shape : {max_fwd, avg_bwd}) {
    HostPool pool(shape);
    const Dispatch d = ops::pool(*rt, session().queue()(), pool.call());
    EXPECT_EQ(d.level, Level::kExact) << shape.key();
    d.last()->wait();
    EXPECT_EQ(pool.check(), "") << shape.key();
    EXPECT_EQ(ops::pool_decision(*rt, pool.call()).config, tiles) << shape.key();
  }
  // The same sizes without indices are another problem: no row, the built-in configuration.
  PoolShape no_indices = max_fwd;
  no_indices.indices = false;
  HostPool plain(no_indices);
  EXPECT_EQ(ops::pool(*rt, session().queue()(), plain.call()).level, Level::kBuiltin);
  session().queue().finish();
  EXPECT_EQ(plain.check(), "");
}

TEST(RuntimePool, CallsNoKernelCanServeThrowAndEmptyCallsOnlyMark) {
  HostPool pool(odd_shapes()[0]);
  const auto refused = [&](auto change) {
    PoolCall c = pool.call();
    change(c);
    return [c] { check_pool_call(c); };
  };
  EXPECT_NO_THROW(check_pool_call(pool.call()));
  EXPECT_THROW(refused([](PoolCall& c) { c.indices = nullptr; })(), Error);
  EXPECT_THROW(refused([](PoolCall& c) { c.out = nullptr; })(), Error);
  EXPECT_THROW(refused([](PoolCall& c) { c.shape.ph = 2; })(), Error);  // more than half the window
  EXPECT_THROW(refused([](PoolCall& c) { c.shape.kh = 0; })(), Error);
  EXPECT_THROW(refused([](PoolCall& c) { c.in_offset = -1; })(), Error);
  auto rt = make_runtime("");
  PoolCall small = pool.call();
  small.shape.h = 40;  // the buffers are too small for this input
  EXPECT_THROW(ops::pool(*rt, session().queue()(), small), Error);
  PoolCall empty = pool.call();
  empty.shape.n = 0;
  empty.in = empty.out = empty.indices = nullptr;
  const Dispatch d = ops::pool(*rt, session().queue()(), empty);
  EXPECT_EQ(d.count, 1u);
  ASSERT_NE(d.last(), nullptr);
  d.last()->wait();
}

TEST(RuntimePool, ShapeCodeHoldsExactlyWhatTheKeyHolds) {
  const auto code = [](const PoolShape& s) {
    PoolCall c;
    c.shape = s;
    return pool_shape_code(pool_adapter(), c);
  };
  // The database keys a problem by its shape key and its dtype column.
  const auto same_key_same_code = [&](const PoolShape& a, const PoolShape& b) {
    const bool same_problem = a.key() == b.key() && a.dtype == b.dtype;
    EXPECT_EQ(same_problem, code(a) == code(b)) << a.key() << " / " << b.key() << " " << dtype_name(b.dtype);
  };
  for (const PoolShape& base : odd_shapes()) {
    EXPECT_LE(code(base).size, ShapeCode::kMaxDims);
    for (int field = 0; field < 9; ++field) {
      PoolShape s = base;
      switch (field) {
        case 0: s.count_include_pad = !s.count_include_pad; break;
        case 1: s.ceil_mode = !s.ceil_mode; break;
        case 2: s.indices = !s.indices; break;
        case 3: s.backward = !s.backward; break;
        case 4: s.dtype = DType::kFp16; break;
        case 5: s.kh = 5; break;
        case 6: s.sw = 3; break;
        case 7: s.pw = 0; break;
        default: s.w = 12; break;
      }
      same_key_same_code(base, s);
    }
  }
}

}  // namespace
}  // namespace ocltune
