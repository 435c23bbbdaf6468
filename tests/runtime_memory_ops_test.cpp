// The runtime's memory-bound families: ops::reduce, ops::softmax, ops::norm and ops::elementwise on
// odd shapes at the built-in and exact levels, with buffer offsets, checked against float64 references.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/stored_tensor.h"
#include "harness/workspace.h"
#include "ops/elementwise/elementwise_problem.h"
#include "ops/elementwise/elementwise_reference.h"
#include "ops/norm/norm_problem.h"
#include "ops/norm/norm_reference.h"
#include "ops/reduce/reduce_problem.h"
#include "ops/softmax/softmax_problem.h"
#include "runtime/elementwise.h"
#include "runtime/norm.h"
#include "runtime/reduce.h"
#include "runtime/softmax.h"
#include "tests/support/runtime_support.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

using testing::LogSink;

Session& session() { return testing::test_session(); }
cl_command_queue queue() { return session().queue()(); }

std::unique_ptr<Runtime> make_runtime(const std::string& user_db = "") {
  return std::make_unique<Runtime>(session().context(), session().device().device,
                                   testing::isolated(user_db, "", std::make_shared<LogSink>()));
}

// A configuration of `problem`'s space other than its built-in one.
Config other_config(const Problem& problem) {
  const Config builtin = problem.default_config(session().device());
  const std::vector<Config> all = problem.space(session().device()).enumerate(512);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (*it != builtin) return *it;
  }
  ADD_FAILURE() << "no configuration besides the built-in one for " << problem.shape_key();
  return builtin;
}

// A user database whose only row is `config` for `problem` on `device` (default: this one).
std::string database_for(const std::string& name, const Problem& problem, const Config& config,
                         const DeviceInfo& device = session().device()) {
  BestRow r;
  r.device_key = device.key();
  r.op = problem.op();
  r.dtype = dtype_name(problem.dtype());
  r.shape_key = problem.shape_key();
  r.shape_json = problem.shape_json().dump();
  r.params_json = to_json(config).dump();
  r.median_ns = r.min_ns = r.max_ns = 1000;
  r.source_hash = "test";
  return testing::write_database(testing::temp_path(name), {device}, {r});
}

StoredTensor input_tensor(std::int64_t count, std::int64_t offset, std::uint64_t seed, float lo = -1, float hi = 1) {
  StoredTensor t(DType::kFp32, count, offset);
  t.fill_uniform(seed, lo, hi);
  t.buffer(session().context());
  t.upload(session().queue());
  return t;
}

StoredTensor output_tensor(bool indices, std::int64_t count, std::int64_t offset) {
  StoredTensor t = indices ? StoredTensor::indices(count, offset) : StoredTensor(DType::kFp32, count, offset);
  t.fill(indices ? -1.0f : kUnwrittenSentinel);
  t.buffer(session().context());
  t.upload(session().queue());
  return t;
}

// ---- reduce ----

// Runs `shape` (fp32) through ops::reduce at the given offsets and checks it; returns the level.
Level run_reduce(Runtime& rt, const ReduceShape& shape, std::int64_t in_off, std::int64_t out_off,
                 Decision* decision = nullptr) {
  const ReduceLayout layout = shape.layout();
  StoredTensor in = input_tensor(layout.elements, in_off, 21);
  StoredTensor out = output_tensor(is_arg_kind(shape.kind), layout.outputs, out_off);
  ReduceCall call{.shape = shape,
                  .input = in.buffer(session().context())(),
                  .input_offset = in_off,
                  .output = out.buffer(session().context())(),
                  .output_offset = out_off};
  const Dispatch d = ops::reduce(rt, queue(), call);
  if (decision) *decision = ops::reduce_decision(rt, call);
  EXPECT_GE(d.count, 1u);

  // float64 reference over the row-major odometer; the output index runs over the kept dims.
  std::vector<double> sum(static_cast<std::size_t>(layout.outputs)), mag(sum.size());
  std::vector<double> best(sum.size(), -std::numeric_limits<double>::infinity());
  std::vector<std::int64_t> best_at(sum.size(), -1);
  const std::size_t nd = shape.dims.size();
  std::vector<std::int64_t> coord(nd, 0);
  for (std::int64_t e = 0; e < layout.elements; ++e) {
    std::int64_t o = 0, r = 0;
    for (std::size_t k = 0; k < nd; ++k) {
      const bool reduced = std::find(shape.axes.begin(), shape.axes.end(), static_cast<int>(k)) != shape.axes.end();
      if (reduced) {
        r = r * shape.dims[k] + coord[k];
      } else {
        o = o * shape.dims[k] + coord[k];
      }
    }
    const double x = in.at(e);
    const auto oi = static_cast<std::size_t>(o);
    sum[oi] += x;
    mag[oi] += std::abs(x);
    if (x > best[oi]) best[oi] = x, best_at[oi] = r;
    for (std::size_t k = nd; k-- > 0;) {
      if (++coord[k] < shape.dims[k]) break;
      coord[k] = 0;
    }
  }
  if (is_arg_kind(shape.kind)) {
    std::vector<std::pair<std::size_t, std::int64_t>> expected;
    for (std::int64_t o = 0; o < layout.outputs; ++o) {
      expected.emplace_back(static_cast<std::size_t>(out_off + o), best_at[static_cast<std::size_t>(o)]);
    }
    const VerifyResult v = verify_indices(out.read_indices(session().queue()), out.indices(), expected);
    EXPECT_TRUE(v.ok) << shape.key() << ": " << v.message;
  } else {
    const double r = static_cast<double>(layout.reduced);
    const double tolerance = (8.0 * std::sqrt(r) + 8.0) * 0x1.0p-24;
    std::vector<Expected> expected;
    for (std::int64_t o = 0; o < layout.outputs; ++o) {
      const auto oi = static_cast<std::size_t>(o);
      const bool mean = shape.kind == ReduceKind::kMean;
      expected.push_back(expect_stored(static_cast<std::size_t>(out_off + o), mean ? sum[oi] / r : sum[oi],
                                       mean ? mag[oi] / r : mag[oi], tolerance, DType::kFp32));
    }
    const VerifyResult v = verify_output(out.read_values(session().queue()), out.values(), expected, tolerance);
    EXPECT_TRUE(v.ok) << shape.key() << ": " << v.message;
  }
  return d.level;
}

TEST(RuntimeReduce, OddShapesAtTheBuiltinLevelWithOffsets) {
  auto rt = make_runtime();
  const std::vector<std::int64_t> dims{3, 37, 5};
  EXPECT_EQ(run_reduce(*rt, {.dims = dims, .axes = {1}, .kind = ReduceKind::kSum}, 3, 5), Level::kBuiltin);
  EXPECT_EQ(run_reduce(*rt, {.dims = dims, .axes = {0, 1, 2}, .kind = ReduceKind::kMean}, 0, 7), Level::kBuiltin);
  EXPECT_EQ(run_reduce(*rt, {.dims = dims, .axes = {0, 2}, .kind = ReduceKind::kSum}, 1, 0), Level::kBuiltin);
  EXPECT_EQ(run_reduce(*rt, {.dims = dims, .axes = {1}, .kind = ReduceKind::kArgmax}, 2, 3), Level::kBuiltin);
  EXPECT_EQ(run_reduce(*rt, {.dims = {11, 1001}, .axes = {1}, .kind = ReduceKind::kArgmax}, 0, 1), Level::kBuiltin);
  // The same shape again hits the cache; keepdim is another problem.
  const std::uint64_t before = rt->stats().resolutions;
  run_reduce(*rt, {.dims = dims, .axes = {1}, .kind = ReduceKind::kSum}, 0, 0);
  EXPECT_EQ(rt->stats().resolutions, before);
  run_reduce(*rt, {.dims = dims, .axes = {1}, .keepdim = true, .kind = ReduceKind::kSum}, 0, 0);
  EXPECT_EQ(rt->stats().resolutions, before + 1);
}

TEST(RuntimeReduce, ExactRowIsUsed) {
  const ReduceShape shape{.dims = {3, 37, 5}, .axes = {1}, .kind = ReduceKind::kSum};
  const Config config = other_config(ReduceProblem(shape));
  auto rt = make_runtime(database_for("reduce-exact.db", ReduceProblem(shape), config));
  Decision d;
  EXPECT_EQ(run_reduce(*rt, shape, 4, 2, &d), Level::kExact);
  EXPECT_EQ(d.config, config);
  EXPECT_NE(d.source.find("user database"), std::string::npos) << d.source;
}

TEST(RuntimeReduce, ClassLevelRowPassesTheFirstDispatchCheck) {
  // The nearest and class levels borrow a configuration; it is checked on this shape through the
  // adapter's Problem before first use.
  const ReduceShape shape{.dims = {6, 29}, .axes = {0, 1}, .kind = ReduceKind::kSum};
  const Config config = other_config(ReduceProblem(shape));
  const DeviceInfo sibling = testing::sibling_device(session().device());
  auto rt = make_runtime(database_for("reduce-class.db", ReduceProblem(shape), config, sibling));
  Decision d;
  EXPECT_EQ(run_reduce(*rt, shape, 0, 1, &d), Level::kClass);
  EXPECT_EQ(d.config, config);
  EXPECT_TRUE(d.verified);
}

TEST(RuntimeReduce, NearestLevelBorrowsFromOtherSizesOfTheSameRankAndAxes) {
  // Each entry of `dims` is a dimension of the distance; `axes` must be equal.
  const ReduceShape tuned{.dims = {3, 40, 5}, .axes = {1}, .kind = ReduceKind::kSum};
  const ReduceShape call{.dims = {3, 37, 5}, .axes = {1}, .kind = ReduceKind::kSum};
  const Config config = other_config(ReduceProblem(call));
  ASSERT_EQ(ReduceProblem(tuned).space(session().device()).check(config), "");
  auto rt = make_runtime(database_for("reduce-nearest.db", ReduceProblem(tuned), config));
  Decision d;
  EXPECT_EQ(run_reduce(*rt, call, 3, 0, &d), Level::kNearest);
  EXPECT_EQ(d.config, config);
  EXPECT_TRUE(d.verified);

  const ReduceShape other_axes{.dims = {3, 37, 5}, .axes = {2}, .kind = ReduceKind::kSum};
  EXPECT_EQ(run_reduce(*rt, other_axes, 0, 0), Level::kBuiltin) << "a row over other axes is not near";
  const ReduceShape other_rank{.dims = {111, 5}, .axes = {1}, .kind = ReduceKind::kSum};
  EXPECT_EQ(run_reduce(*rt, other_rank, 0, 0), Level::kBuiltin) << "a row of another rank is not near";
}

TEST(RuntimeReduce, BadCallsAreRefusedAndEmptyOutputsEnqueueAMarker) {
  auto rt = make_runtime();
  ReduceCall bad{.shape = {.dims = {4, 5}, .axes = {1}}};
  EXPECT_THROW(ops::reduce(*rt, queue(), bad), Error) << "null buffers";
  bad.shape.axes = {2};
  EXPECT_THROW(ops::reduce(*rt, queue(), bad), Error) << "axis out of range";
  ReduceCall empty{.shape = {.dims = {0, 5}, .axes = {1}}};
  const Dispatch d = ops::reduce(*rt, queue(), empty);
  ASSERT_EQ(d.count, 1u);
  d.last()->wait();
}

// Issue 41: a split reduction's combine pass reads the partial sums its first pass left in the
// runtime's workspace. ocltune_torch enqueues every op of a device on one in-order queue from any
// Python thread, so the kernels of two threads' reductions interleave there; sharing one workspace
// per queue, a combine pass read the other thread's partials ((x @ w).relu().sum(0) off by hundreds
// in 1-2 calls of 100), and a plan whose workspace another thread grew meanwhile enqueued a released
// buffer (PoCL aborted). Each thread's own shape and values, all on the session's one queue.
TEST(RuntimeReduce, SplitReductionsOfThreadsOnOneQueueKeepTheirPartials) {
  auto rt = make_runtime();
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  struct Work {
    ReduceShape shape;
    StoredTensor in, out;
    ReduceCall call;
    std::vector<double> sum, mag;
    std::string failure;
    int wrong = 0;
  };
  std::vector<Work> work(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    Work& w = work[static_cast<std::size_t>(t)];
    const std::int64_t rows = 150 + 17 * t, cols = 3 + 2 * t;
    w.shape = {.dims = {rows, cols}, .axes = {0}, .kind = ReduceKind::kSum};
    w.in = input_tensor(rows * cols, 0, 100 + static_cast<std::uint64_t>(t), -1, 4);
    w.out = output_tensor(false, cols, 0);
    w.call = {
        .shape = w.shape, .input = w.in.buffer(session().context())(), .output = w.out.buffer(session().context())()};
    w.sum.assign(static_cast<std::size_t>(cols), 0.0);
    w.mag.assign(static_cast<std::size_t>(cols), 0.0);
    for (std::int64_t e = 0; e < rows * cols; ++e) {
      w.sum[static_cast<std::size_t>(e % cols)] += w.in.at(e);
      w.mag[static_cast<std::size_t>(e % cols)] += std::abs(w.in.at(e));
    }
    // Covers what it is about: plans of a first pass and a combine pass through the workspace.
    ASSERT_GT(value_or(ops::reduce_decision(*rt, w.call).config, "SPLIT", 1), 1) << w.shape.key();
  }
  auto worker = [&](Work& w) {
    try {
      for (int round = 0; round < kRounds; ++round) {
        ops::reduce(*rt, queue(), w.call);
        const std::vector<float> got = w.out.read_values(session().queue());
        for (std::size_t c = 0; c < w.sum.size(); ++c) {
          const double err = std::abs(got[c] - w.sum[c]);
          if (!(err <= 1e-5 * w.mag[c] + 1e-6)) {
            if (w.wrong++ == 0) {
              w.failure =
                  fmt::format("{} round {} column {}: {} instead of {}", w.shape.key(), round, c, got[c], w.sum[c]);
            }
            break;
          }
        }
      }
    } catch (const std::exception& e) {
      w.failure = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (Work& w : work) threads.emplace_back(worker, std::ref(w));
  for (std::thread& t : threads) t.join();
  for (const Work& w : work) EXPECT_EQ(w.failure, "") << w.wrong << " wrong rounds of " << kRounds;
}

// ---- softmax ----

Level run_softmax(Runtime& rt, const SoftmaxShape& shape, std::int64_t in_off, std::int64_t out_off,
                  Decision* decision = nullptr) {
  const ReduceLayout layout = shape.layout();
  StoredTensor in = input_tensor(layout.elements, in_off, 22, -4, 4);
  StoredTensor out = output_tensor(false, layout.elements, out_off);
  SoftmaxCall call{.shape = shape,
                   .input = in.buffer(session().context())(),
                   .input_offset = in_off,
                   .output = out.buffer(session().context())(),
                   .output_offset = out_off};
  const Dispatch d = ops::softmax(rt, queue(), call);
  if (decision) *decision = ops::softmax_decision(rt, call);
  const ReducePass& p = layout.passes.front();
  const double tolerance = (8.0 * std::sqrt(static_cast<double>(p.length)) + 16.0) * 0x1.0p-24;
  std::vector<Expected> expected;
  for (std::int64_t seg = 0; seg < p.outer * p.inner; ++seg) {
    const std::int64_t base = (seg / p.inner) * p.length * p.inner + seg % p.inner;
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (std::int64_t k = 0; k < p.length; ++k) m = std::max<double>(m, in.at(base + k * p.inner));
    for (std::int64_t k = 0; k < p.length; ++k) s += std::exp(in.at(base + k * p.inner) - m);
    for (std::int64_t k = 0; k < p.length; ++k) {
      const double v = in.at(base + k * p.inner);
      const auto index = static_cast<std::size_t>(out_off + base + k * p.inner);
      if (shape.log) {
        expected.push_back(expect_stored(index, v - m - std::log(s), std::abs(v - m) + std::abs(std::log(s)) + 1.0,
                                         tolerance, DType::kFp32));
      } else {
        const double y = std::exp(v - m) / s;
        expected.push_back(expect_stored(index, y, y * (1.0 + std::abs(v - m)), tolerance, DType::kFp32));
      }
    }
  }
  const VerifyResult v = verify_output(out.read_values(session().queue()), out.values(), expected, tolerance);
  EXPECT_TRUE(v.ok) << shape.key() << ": " << v.message;
  return d.level;
}

TEST(RuntimeSoftmax, RowsAndAStridedAxisAtTheBuiltinLevelWithOffsets) {
  auto rt = make_runtime();
  EXPECT_EQ(run_softmax(*rt, {.dims = {7, 1000}, .axis = 1}, 3, 1), Level::kBuiltin);
  EXPECT_EQ(run_softmax(*rt, {.dims = {3, 29, 7}, .axis = 1}, 0, 5), Level::kBuiltin);
  EXPECT_EQ(run_softmax(*rt, {.dims = {5, 33}, .axis = 0, .log = true}, 2, 2), Level::kBuiltin);
}

TEST(RuntimeSoftmax, ExactRowIsUsed) {
  const SoftmaxShape shape{.dims = {7, 1000}, .axis = 1};
  const Config config = other_config(SoftmaxProblem(shape));
  auto rt = make_runtime(database_for("softmax-exact.db", SoftmaxProblem(shape), config));
  Decision d;
  EXPECT_EQ(run_softmax(*rt, shape, 1, 6, &d), Level::kExact);
  EXPECT_EQ(d.config, config);
}

// ---- norm ----

// Runs a forward `shape` with every tensor `off` elements into its buffer and checks every output.
Level run_norm(Runtime& rt, const NormShape& shape, std::int64_t off, Decision* decision = nullptr) {
  const bool batch = is_batch_norm(shape.kind);
  const std::int64_t params = batch ? shape.channels() : shape.n();
  const std::int64_t stats = batch ? shape.channels() : shape.rows();
  NormTensors t;
  t.x = input_tensor(shape.elements(), off, 31, -1, 3);
  t.gamma = input_tensor(params, off, 33, 0.5f, 1.5f);
  t.beta = input_tensor(params, off, 34);
  t.y = output_tensor(false, shape.elements(), off);
  t.mean = output_tensor(false, stats, off);
  t.rstd = output_tensor(false, stats, off);
  std::vector<std::pair<std::string, StoredTensor*>> outputs{{"y", &t.y}, {"mean", &t.mean}, {"rstd", &t.rstd}};
  if (batch) {
    t.running_mean = input_tensor(stats, off, 35, -0.5f, 0.5f);
    t.running_var = input_tensor(stats, off, 36, 0.5f, 1.5f);
    outputs.insert(outputs.end(), {{"running_mean", &t.running_mean}, {"running_var", &t.running_var}});
  }
  const NormReference reference = norm_reference(shape, t);
  const cl::Context& ctx = session().context();
  auto ref = [&](StoredTensor& s) { return NormBuffer{s.count() ? s.buffer(ctx)() : nullptr, off}; };
  NormCall call{.shape = shape};
  call.x = ref(t.x);
  call.gamma = ref(t.gamma);
  call.beta = ref(t.beta);
  call.y = ref(t.y);
  call.mean = ref(t.mean);
  call.rstd = ref(t.rstd);
  if (batch) {
    call.running_mean = ref(t.running_mean);
    call.running_var = ref(t.running_var);
  }
  const Dispatch d = ops::norm(rt, queue(), call);
  if (decision) *decision = ops::norm_decision(rt, call);
  for (const auto& [name, tensor] : outputs) {
    const OutputReference& out = reference.outputs.at(name);
    const VerifyResult v = verify_output(tensor->read_values(session().queue()), tensor->values(), out.expected,
                                         reference.tolerance, out.written);
    EXPECT_TRUE(v.ok) << shape.key() << " " << name << ": " << v.message;
  }
  return d.level;
}

TEST(RuntimeNorm, LayerAndBatchNormAtTheBuiltinLevelWithOffsets) {
  auto rt = make_runtime();
  EXPECT_EQ(run_norm(*rt, {.kind = NormKind::kLayer, .dims = {5, 77}, .axis = 1}, 3), Level::kBuiltin);
  EXPECT_EQ(run_norm(*rt, {.kind = NormKind::kLayer, .dims = {3, 4, 19}, .axis = 1, .eps = 1e-3f}, 0), Level::kBuiltin);
  EXPECT_EQ(run_norm(*rt, {.kind = NormKind::kBatch, .dims = {4, 3, 5, 7}, .axis = 1}, 2), Level::kBuiltin);
}

// Runs a backward `shape` (the saved statistics of x computed on the host, as a forward pass writes
// them) with every tensor `off` elements into its buffer and checks dx, dgamma and dbeta.
Level run_norm_backward(Runtime& rt, const NormShape& shape, std::int64_t off) {
  const bool batch = is_batch_norm(shape.kind);
  const std::int64_t params = batch ? shape.channels() : shape.n();
  const std::int64_t stats = batch ? shape.channels() : shape.rows();
  NormTensors t;
  t.x = input_tensor(shape.elements(), off, 31, -1, 3);
  t.dy = input_tensor(shape.elements(), off, 32);
  t.gamma = input_tensor(params, off, 33, 0.5f, 1.5f);
  t.mean = StoredTensor(DType::kFp32, stats, off);
  t.rstd = StoredTensor(DType::kFp32, stats, off);
  fill_saved_statistics(shape, t);
  for (StoredTensor* s : {&t.mean, &t.rstd}) {
    s->buffer(session().context());
    s->upload(session().queue());
  }
  t.dx = output_tensor(false, shape.elements(), off);
  t.dgamma = output_tensor(false, params, off);
  t.dbeta = output_tensor(false, params, off);
  const NormReference reference = norm_reference(shape, t);
  const cl::Context& ctx = session().context();
  auto ref = [&](StoredTensor& s) { return NormBuffer{s.buffer(ctx)(), off}; };
  NormCall call{.shape = shape};
  call.x = ref(t.x);
  call.dy = ref(t.dy);
  call.gamma = ref(t.gamma);
  call.mean = ref(t.mean);
  call.rstd = ref(t.rstd);
  call.dx = ref(t.dx);
  call.dgamma = ref(t.dgamma);
  call.dbeta = ref(t.dbeta);
  const Dispatch d = ops::norm(rt, queue(), call);
  for (const auto& [name, tensor] :
       {std::pair<std::string, StoredTensor*>{"dx", &t.dx}, {"dgamma", &t.dgamma}, {"dbeta", &t.dbeta}}) {
    const OutputReference& out = reference.outputs.at(name);
    const VerifyResult v = verify_output(tensor->read_values(session().queue()), tensor->values(), out.expected,
                                         reference.tolerance, out.written);
    EXPECT_TRUE(v.ok) << shape.key() << " " << name << ": " << v.message;
  }
  return d.level;
}

TEST(RuntimeNorm, BackwardKindsAtTheBuiltinLevelWithOffsets) {
  auto rt = make_runtime();
  EXPECT_EQ(run_norm_backward(*rt, {.kind = NormKind::kLayerBackward, .dims = {5, 77}, .axis = 1}, 3), Level::kBuiltin);
  EXPECT_EQ(run_norm_backward(*rt, {.kind = NormKind::kBatchBackward, .dims = {4, 3, 5, 7}, .axis = 1}, 2),
            Level::kBuiltin);
}

TEST(RuntimeNorm, ExactRowIsUsed) {
  const NormShape shape{.kind = NormKind::kLayer, .dims = {5, 77}, .axis = 1};
  const Config config = other_config(NormProblem(shape));
  auto rt = make_runtime(database_for("norm-exact.db", NormProblem(shape), config));
  Decision d;
  EXPECT_EQ(run_norm(*rt, shape, 1, &d), Level::kExact);
  EXPECT_EQ(d.config, config);
}

TEST(RuntimeNorm, AMissingTensorOfTheKindIsRefused) {
  auto rt = make_runtime();
  NormCall call{.shape = {.kind = NormKind::kLayer, .dims = {5, 77}, .axis = 1}};
  EXPECT_THROW(ops::norm(*rt, queue(), call), Error);
}

// ---- elementwise ----

// Runs `shape` (fp32) with every input `in_off` and the output `out_off` elements into its buffer.
Level run_elementwise(Runtime& rt, const ElementwiseShape& shape, std::int64_t in_off, std::int64_t out_off,
                      Decision* decision = nullptr) {
  const std::vector<const TensorOperand*> tensors = shape.tensors();
  std::vector<StoredTensor> in;
  for (std::size_t t = 0; t < tensors.size(); ++t)
    in.push_back(input_tensor(tensors[t]->extent(), in_off, 40 + t, 0.25f, 2));
  const std::vector<std::int64_t> out_dims = shape.out_dims();
  StoredTensor out = output_tensor(false, shape.elements(), out_off);
  ElementwiseCall call{.shape = shape, .output = out.buffer(session().context())(), .output_offset = out_off};
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    call.inputs[t] = in[t].buffer(session().context())();
    call.input_offsets[t] = in_off;
  }
  const Dispatch d = ops::elementwise(rt, queue(), call);
  if (decision) *decision = ops::elementwise_decision(rt, call);

  const double u = 0x1.0p-24;
  std::vector<Expected> expected;
  const std::size_t rank = out_dims.size();
  std::vector<std::int64_t> coord(rank, 0);
  for (std::int64_t i = 0; i < shape.elements(); ++i) {
    std::vector<double> operand;
    for (std::size_t t = 0; t < tensors.size(); ++t) {  // right-aligned broadcasting
      const std::vector<std::int64_t> strides = tensors[t]->effective_strides();
      const std::size_t r = tensors[t]->dims.size();
      std::int64_t at = 0;
      for (std::size_t j = 0; j < r; ++j) {
        const std::int64_t c = coord[rank - r + j];
        at += (tensors[t]->dims[j] == 1 ? 0 : c) * strides[j];
      }
      operand.push_back(in[t].at(at));
    }
    BoundedValue v{operand[0], 0};
    std::size_t t = 1;
    for (const ElementwiseStep& s : shape.steps) {
      BoundedValue b = v;
      if (s.tensor) {
        b = {operand[t++], 0};
      } else if (is_binary(s.op)) {
        b = {static_cast<double>(s.scalar), 0};
      }
      v = s.reversed ? elementwise_step(s.op, b, v) : elementwise_step(s.op, v, b);
    }
    const double bound = v.error * u + u * std::abs(v.value) + 1e-38;
    expected.push_back({static_cast<std::size_t>(out_off + i), v.value, bound / u});
    for (std::size_t j = rank; j-- > 0;) {
      if (++coord[j] < out_dims[j]) break;
      coord[j] = 0;
    }
  }
  const VerifyResult v =
      verify_output(out.read_values(session().queue()), out.values(), expected, kElementwiseMargin * u);
  EXPECT_TRUE(v.ok) << shape.key() << ": " << v.message;
  return d.level;
}

ElementwiseShape broadcast_add() {
  return {.input = {.dims = {13, 33}}, .steps = {{.op = ElementwiseOp::kAdd, .tensor = TensorOperand{.dims = {33}}}}};
}

TEST(RuntimeElementwise, BroadcastingAndChainsAtTheBuiltinLevelWithOffsets) {
  auto rt = make_runtime();
  EXPECT_EQ(run_elementwise(*rt, broadcast_add(), 3, 1), Level::kBuiltin);
  const ElementwiseShape chain{.input = {.dims = {13, 33}},
                               .steps = {{.op = ElementwiseOp::kSigmoid},
                                         {.op = ElementwiseOp::kMul, .scalar = 3.0f},
                                         {.op = ElementwiseOp::kSub, .scalar = 1.0f, .reversed = true},
                                         {.op = ElementwiseOp::kAbs}}};
  EXPECT_EQ(run_elementwise(*rt, chain, 0, 2), Level::kBuiltin);
  // A strided (transposed) input broadcast against a column.
  const ElementwiseShape strided{.input = {.dims = {7, 5}, .strides = {1, 7}},
                                 .steps = {{.op = ElementwiseOp::kMaximum, .tensor = TensorOperand{.dims = {7, 1}}}}};
  EXPECT_EQ(run_elementwise(*rt, strided, 1, 0), Level::kBuiltin);
}

TEST(RuntimeElementwise, ChainsTooLongToPackGetExactInternedCodes) {
  auto rt = make_runtime();
  const TensorOperand t{.dims = {2, 3, 4, 5}};
  ElementwiseShape long_chain{.input = t,
                              .steps = {{.op = ElementwiseOp::kAdd, .tensor = t},
                                        {.op = ElementwiseOp::kMul, .tensor = t},
                                        {.op = ElementwiseOp::kSub, .tensor = t},
                                        {.op = ElementwiseOp::kMaximum, .tensor = t}}};
  ElementwiseCall a{.shape = long_chain}, b{.shape = long_chain};
  b.shape.steps[3].op = ElementwiseOp::kMinimum;
  const ShapeCode ca = elementwise_shape_code(elementwise_adapter(), a);
  EXPECT_EQ(ca.size, 2u) << "this chain does not fit the packed form";
  EXPECT_EQ(ca.dims[0], -1);
  EXPECT_EQ(ca, elementwise_shape_code(elementwise_adapter(), a));
  EXPECT_FALSE(ca == elementwise_shape_code(elementwise_adapter(), b));
  // Packed codes: one chain differing only in a broadcast dim or a step's operand kind differs.
  ElementwiseCall c{.shape = broadcast_add()}, d{.shape = broadcast_add()}, e{.shape = broadcast_add()};
  d.shape.steps[0].tensor = TensorOperand{.dims = {1, 33}};
  e.shape.steps[0].tensor.reset();
  const ShapeCode cc = elementwise_shape_code(elementwise_adapter(), c);
  EXPECT_GE(cc.dims[0], 0);
  EXPECT_FALSE(cc == elementwise_shape_code(elementwise_adapter(), d));
  EXPECT_FALSE(cc == elementwise_shape_code(elementwise_adapter(), e));
  EXPECT_EQ(run_elementwise(*rt, long_chain, 2, 3), Level::kBuiltin);
  EXPECT_EQ(run_elementwise(*rt, b.shape, 0, 0), Level::kBuiltin);
  EXPECT_EQ(rt->stats().resolutions, 2u);
}

// The fast binder: given the arguments of the plan of one call, it reproduces the plan's arguments
// of any other call of the same shape code (other buffers, offsets and scalars), and a later call
// through the runtime computes with its own operands.
TEST(RuntimeElementwise, FastArgumentsFollowEachCallsBuffersOffsetsAndScalars) {
  const ElementwiseShape chain{.input = {.dims = {13, 33}},
                               .steps = {{.op = ElementwiseOp::kMul, .scalar = 3.0f},
                                         {.op = ElementwiseOp::kAdd, .tensor = TensorOperand{.dims = {33}}},
                                         {.op = ElementwiseOp::kSub, .scalar = 1.0f, .reversed = true}}};
  const cl::Context& context = session().context();
  std::vector<cl::Buffer> buffers;
  for (int i = 0; i < 6; ++i) buffers.emplace_back(context, CL_MEM_READ_WRITE, 4096);
  ElementwiseCall a{.shape = chain, .output = buffers[0](), .output_offset = 2};
  a.inputs[0] = buffers[1]();
  a.inputs[1] = buffers[2]();
  a.input_offsets = {5, 0};
  ElementwiseCall b{.shape = chain, .output = buffers[3](), .output_offset = 7};
  b.shape.steps[0].scalar = -2.5f;
  b.shape.steps[2].scalar = 0.5f;
  b.inputs[0] = buffers[4]();
  b.inputs[1] = buffers[5]();
  b.input_offsets = {0, 11};
  const ElementwiseAdapter& adapter = elementwise_adapter();
  ASSERT_EQ(elementwise_shape_code(adapter, a), elementwise_shape_code(adapter, b));
  Workspace workspace(context);
  const Config config = ElementwiseProblem(chain).default_config(session().device());
  const RawArgs from_a = raw_args(adapter.plan(&a, config, workspace).kernels.at(0));
  const RawArgs want_b = raw_args(adapter.plan(&b, config, workspace).kernels.at(0));
  RawArgs got_b;
  ASSERT_TRUE(adapter.fast_args(&b, std::span<const RawArgs>(&from_a, 1), std::span<RawArgs>(&got_b, 1)));
  ASSERT_EQ(got_b.count, want_b.count);
  for (std::uint32_t i = 0; i < want_b.count; ++i) EXPECT_TRUE(got_b.args[i] == want_b.args[i]) << "argument " << i;
  // Offsets past the kernel's 32-bit indexing: the binder declines (the plan refuses the call).
  ElementwiseCall far = b;
  far.output_offset = std::int64_t{1} << 31;
  RawArgs unused;
  EXPECT_FALSE(adapter.fast_args(&far, std::span<const RawArgs>(&from_a, 1), std::span<RawArgs>(&unused, 1)));

  // Through the runtime: the second and third calls of the code take the fast path and are right.
  auto rt = make_runtime();
  EXPECT_EQ(run_elementwise(*rt, chain, 3, 1), Level::kBuiltin);
  ElementwiseShape other = chain;
  other.steps[0].scalar = 0.75f;
  EXPECT_EQ(run_elementwise(*rt, other, 0, 4), Level::kBuiltin);
  EXPECT_EQ(run_elementwise(*rt, other, 9, 0), Level::kBuiltin);
  EXPECT_EQ(rt->stats().resolutions, 1u);
}

TEST(RuntimeElementwise, ExactRowIsUsed) {
  const ElementwiseShape shape = broadcast_add();
  const Config config = other_config(ElementwiseProblem(shape));
  auto rt = make_runtime(database_for("elementwise-exact.db", ElementwiseProblem(shape), config));
  Decision d;
  EXPECT_EQ(run_elementwise(*rt, shape, 2, 5, &d), Level::kExact);
  EXPECT_EQ(d.config, config);
}

}  // namespace
}  // namespace ocltune
