// A call no kernel can serve is refused alike through the C ABI and the C++ API: each path checks it
// once (docs/decisions/0053), at its own entry, with the same checker, so the C ABI's
// OCLTUNE_INVALID_ARGUMENT carries exactly the message ops::<op> throws, and neither path enqueues.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ocltune/ocltune.h"
#include "runtime/conv2d.h"
#include "runtime/gemm.h"
#include "runtime/reduce.h"
#include "tests/support/test_session.h"

namespace ocltune {
namespace {

Session& session() { return testing::test_session(); }

// The C ABI's runtime (libocltune.so) and the C++ API's on the test session's context and device.
struct TwoRuntimes {
  ocltune_runtime capi = nullptr;
  std::unique_ptr<Runtime> cpp;

  TwoRuntimes() {
    ocltune_options options;
    ocltune_options_init(&options);
    options.use_system_db = options.use_user_db = 0;
    EXPECT_EQ(ocltune_runtime_create(session().context()(), session().device().device(), &options, &capi),
              OCLTUNE_SUCCESS)
        << ocltune_last_error();
    RuntimeOptions cpp_options;
    cpp_options.use_system_db = cpp_options.use_user_db = false;
    cpp = std::make_unique<Runtime>(session().context(), session().device().device, cpp_options);
  }
  ~TwoRuntimes() { ocltune_runtime_destroy(capi); }

  // Nothing was enqueued or decided on either side.
  void expect_nothing_dispatched() const {
    uint64_t calls[OCLTUNE_LEVEL_COUNT] = {};
    ASSERT_EQ(ocltune_runtime_dispatch_counts(capi, nullptr, calls), OCLTUNE_SUCCESS);
    for (uint64_t n : calls) EXPECT_EQ(n, 0u);
    EXPECT_EQ(cpp->stats().resolutions, 0u);
    EXPECT_EQ(cpp->dispatch_stats().total(), 0u);
  }
};

cl::Buffer floats(std::size_t n) { return cl::Buffer(session().context(), CL_MEM_READ_WRITE, n * sizeof(float)); }

// What the C++ entry throws for `dispatch` ("" when it does not throw ocltune::Error).
template <typename Dispatch>
std::string thrown(Dispatch&& dispatch) {
  try {
    dispatch();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CApiCheck, AShortBufferIsRefusedAlikeThroughTheCAbiAndTheCppApi) {
  TwoRuntimes rt;
  ASSERT_NE(rt.capi, nullptr);
  cl_command_queue queue = session().queue()();

  {  // GEMM 2 x [13 x 7] * [7 x 5]: C needs 2 * 13 * 5 elements and has one fewer.
    cl::Buffer a = floats(2 * 13 * 7), b = floats(2 * 7 * 5), c = floats(2 * 13 * 5 - 1);
    ocltune_gemm_args args;
    ocltune_gemm_args_init(&args, 0, 0, 13, 5, 7, 2, a(), b(), c());
    ASSERT_EQ(ocltune_gemm(rt.capi, queue, &args, 0, nullptr, nullptr, nullptr), OCLTUNE_INVALID_ARGUMENT);
    const std::string capi_message = ocltune_last_error();
    EXPECT_NE(capi_message.find("buffer holds"), std::string::npos) << capi_message;

    GemmCall call{.shape = {.m = 13, .n = 5, .k = 7, .batch = 2}};
    call.packed();
    call.a = a();
    call.b = b();
    call.c = c();
    EXPECT_EQ(thrown([&] { ops::gemm(*rt.cpp, queue, call); }), capi_message);
    EXPECT_EQ(thrown([&] { Checked<GemmCall>{call}; }), capi_message);  // the C ABI's one check
  }
  {  // conv2d 1 x 3 x 9 x 9, 4 filters 3 x 3: the output needs 4 x 7 x 7 elements and has one fewer.
    cl::Buffer in = floats(3 * 81), w = floats(4 * 3 * 9), out = floats(4 * 49 - 1);
    ocltune_conv2d_args args;
    ocltune_conv2d_args_init(&args, OCLTUNE_CONV_FORWARD, 1, 3, 9, 9, 4, 3, 3, in(), w(), out());
    ASSERT_EQ(ocltune_conv2d(rt.capi, queue, &args, 0, nullptr, nullptr, nullptr), OCLTUNE_INVALID_ARGUMENT);
    const std::string capi_message = ocltune_last_error();
    EXPECT_NE(capi_message.find("buffer holds"), std::string::npos) << capi_message;

    Conv2dCall call{.shape = {.n = 1, .c = 3, .h = 9, .w = 9, .k = 4, .r = 3, .s = 3}};
    call.input = in();
    call.weight = w();
    call.output = out();
    EXPECT_EQ(thrown([&] { ops::conv2d(*rt.cpp, queue, call); }), capi_message);
  }
  {  // Sum of [6, 10] over axis 1: the input needs 60 elements and has one fewer.
    const int64_t dims[] = {6, 10};
    const int axes[] = {1};
    cl::Buffer x = floats(6 * 10 - 1), y = floats(6);
    ocltune_reduce_args args;
    ocltune_reduce_args_init(&args, "sum", 2, dims, 1, axes, x(), y());
    ASSERT_EQ(ocltune_reduce(rt.capi, queue, &args, 0, nullptr, nullptr, nullptr), OCLTUNE_INVALID_ARGUMENT);
    const std::string capi_message = ocltune_last_error();
    EXPECT_NE(capi_message.find("buffer holds"), std::string::npos) << capi_message;

    ReduceCall call{.shape = {.dims = {6, 10}, .axes = {1}, .kind = ReduceKind::kSum}};
    call.input = x();
    call.output = y();
    EXPECT_EQ(thrown([&] { ops::reduce(*rt.cpp, queue, call); }), capi_message);
  }
  rt.expect_nothing_dispatched();
}

// A call the C ABI checked dispatches through ops::<op>'s checked entry and computes the same as the
// C++ entry: 2 x [3 x 2] * [2 x 2] of ones is 2 everywhere.
TEST(CApiCheck, ACheckedCallRunsLikeAPlainOne) {
  TwoRuntimes rt;
  ASSERT_NE(rt.capi, nullptr);
  cl::CommandQueue& queue = session().queue();
  std::vector<float> ones(12, 1.0f);
  cl::Buffer a(session().context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, ones.size() * sizeof(float), ones.data());
  cl::Buffer b(session().context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, ones.size() * sizeof(float), ones.data());
  cl::Buffer c_capi = floats(12), c_cpp = floats(12);
  ocltune_gemm_args args;
  ocltune_gemm_args_init(&args, 0, 0, 3, 2, 2, 2, a(), b(), c_capi());
  ASSERT_EQ(ocltune_gemm(rt.capi, queue(), &args, 0, nullptr, nullptr, nullptr), OCLTUNE_SUCCESS)
      << ocltune_last_error();
  GemmCall call{.shape = {.m = 3, .n = 2, .k = 2, .batch = 2}};
  call.packed();
  call.a = a();
  call.b = b();
  call.c = c_cpp();
  ops::gemm(*rt.cpp, queue(), Checked<GemmCall>(call));
  std::vector<float> from_capi(12), from_cpp(12);
  queue.enqueueReadBuffer(c_capi, CL_TRUE, 0, 12 * sizeof(float), from_capi.data());
  queue.enqueueReadBuffer(c_cpp, CL_TRUE, 0, 12 * sizeof(float), from_cpp.data());
  EXPECT_EQ(from_capi, std::vector<float>(12, 2.0f));
  EXPECT_EQ(from_cpp, from_capi);
}

}  // namespace
}  // namespace ocltune
