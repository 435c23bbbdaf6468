// The memory-bound baseline: clEnqueueCopyBuffer moving the same number of bytes as the problem.
#include "bench/copy_baseline.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "harness/error.h"
#include "harness/session.h"
#include "harness/timing.h"
#include "harness/verify.h"

namespace ocltune::bench {
namespace {

class CopyTimed : public Timed {
 public:
  CopyTimed(Session& session, std::size_t bytes) : session_(session), words_(std::max<std::size_t>(1, bytes / 4)) {
    source_.resize(words_);
    fill_uniform(source_, 11);
    try {
      src_ = cl::Buffer(session.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, words_ * 4, source_.data());
      dst_ = cl::Buffer(session.context(), CL_MEM_READ_WRITE, words_ * 4);
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
  }
  std::string label() const override { return fmt::format("clEnqueueCopyBuffer {} B", words_ * 4); }

  std::string verify() override {
    std::vector<float> after(words_, canary_value());
    try {
      cl::CommandQueue& q = session_.queue();
      q.enqueueFillBuffer(dst_, canary_value(), 0, words_ * 4);
      q.enqueueCopyBuffer(src_, dst_, 0, 0, words_ * 4);
      q.enqueueReadBuffer(dst_, CL_TRUE, 0, words_ * 4, after.data());
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
    return std::memcmp(after.data(), source_.data(), words_ * 4) == 0 ? "" : "copy: destination differs from source";
  }

  double run_ns() override {
    cl::Event e;
    try {
      session_.queue().enqueueCopyBuffer(src_, dst_, 0, 0, words_ * 4, nullptr, &e);
      session_.queue().finish();
    } catch (const cl::Error& err) {
      throw ClError(err);
    }
    return event_span_ns({e});
  }

 private:
  Session& session_;
  std::size_t words_;
  std::vector<float> source_;
  cl::Buffer src_, dst_;
};

}  // namespace

std::unique_ptr<Timed> make_copy(Session& session, std::size_t bytes) {
  return std::make_unique<CopyTimed>(session, bytes);
}

BaselineSpec copy_baseline(const Problem& problem) {
  const auto bytes = static_cast<std::size_t>(problem.bytes() / 2);
  return {"copy", [bytes](Session& session) { return make_copy(session, bytes); }};
}

}  // namespace ocltune::bench
