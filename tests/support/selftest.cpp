// The test-only `selftest` op family (tests/support/selftest.h).
#include "tests/support/selftest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "core/shape_fields.h"
#include "harness/embedded_file.h"
#include "harness/error.h"
#include "harness/kernel_files.h"
#include "harness/session.h"

namespace ocltune {
namespace {

// Test hook of worker isolation (issue 42): "FILE:FIRST:LAST" in $OCLTUNE_SELFTEST_SETUP_DEATHS
// numbers each set-up of a selftest evaluation in any process (one byte appended to FILE each), and
// set-ups FIRST..LAST SIGKILL their own process, as a worker killed while it sets up would be.
void die_if_told_to_in_setup() {
  const char* spec = std::getenv("OCLTUNE_SELFTEST_SETUP_DEATHS");
  if (!spec || !*spec) return;
  const std::string text(spec);
  const std::size_t second = text.rfind(':');
  const std::size_t first =
      second == std::string::npos || second == 0 ? std::string::npos : text.rfind(':', second - 1);
  if (first == std::string::npos) return;
  const std::string path = text.substr(0, first);
  const long from = std::strtol(text.c_str() + first + 1, nullptr, 10);
  const long to = std::strtol(text.c_str() + second + 1, nullptr, 10);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  struct stat st {};
  const bool counted = write(fd, "x", 1) == 1 && fstat(fd, &st) == 0;
  close(fd);
  if (counted && st.st_size >= from && st.st_size <= to) raise(SIGKILL);
}

class SelftestEvaluation : public Evaluation {
 public:
  SelftestEvaluation(Session& session, std::int64_t n) : session_(session), n_(n) {
    in_.resize(static_cast<std::size_t>(n));
    fill_uniform(in_, 7);
    before_.assign(in_.size() + kCanaryWords, canary_value());
    for (std::size_t i = 0; i < in_.size(); ++i)
      expected_.push_back({i, 2.0 * in_[i] + 1.0, std::abs(2.0 * in_[i]) + 1.0});
    const int zero = 0;
    try {
      in_buffer_ = cl::Buffer(session.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_.size() * sizeof(float),
                              in_.data());
      out_ = cl::Buffer(session.context(), CL_MEM_READ_WRITE, before_.size() * sizeof(float));
      spin_ =
          cl::Buffer(session.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(int), const_cast<int*>(&zero));
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
    reset();
  }

  LaunchPlan plan(const Config& config) override {
    KernelLaunch k;
    k.program.files = {"selftest.cl"};
    for (const auto& [name, value] : config) k.program.defines.emplace_back(name, std::to_string(value));
    k.kernel = "selftest";
    const std::int64_t wg = config.at("WG");
    k.global = cl::NDRange(static_cast<std::size_t>((n_ + wg - 1) / wg * wg));
    k.local = cl::NDRange(static_cast<std::size_t>(wg));
    k.args = {in_buffer_, out_, spin_, static_cast<cl_int>(n_)};
    return {{std::move(k)}};
  }

  void reset() override {
    try {
      session_.queue().enqueueWriteBuffer(out_, CL_TRUE, 0, before_.size() * sizeof(float), before_.data());
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
  }

  VerifyResult verify() override {
    std::vector<float> after(before_.size());
    try {
      session_.queue().enqueueReadBuffer(out_, CL_TRUE, 0, after.size() * sizeof(float), after.data());
    } catch (const cl::Error& e) {
      throw ClError(e);
    }
    return verify_output(after, before_, expected_, 0x1.0p-22);
  }

 private:
  Session& session_;
  std::int64_t n_;
  std::vector<float> in_, before_;
  std::vector<Expected> expected_;
  cl::Buffer in_buffer_, out_, spin_;
};

class SelftestProblem : public Problem {
 public:
  explicit SelftestProblem(std::int64_t n) : n_(n) {}
  std::string op() const override { return "selftest"; }
  std::string shape_key() const override { return fmt::format("n={}", n_); }
  nlohmann::json shape_json() const override { return {{"op", "selftest"}, {"n", n_}}; }
  SearchSpace space(const DeviceInfo&) const override {
    SearchSpace space("selftest");
    space.add("MODE", {0, 1, 2}, "0 correct, 1 never terminates, 2 crashes")
        .add("WG", {8, 16, 32, 64}, "work-group size")
        .add("REPEAT", {1, 2, 4, 8}, "sums of the result (same value, different code)");
    return space;
  }
  Config default_config(const DeviceInfo&) const override { return {{"MODE", 0}, {"WG", 32}, {"REPEAT", 1}}; }
  double flops() const override { return 2.0 * static_cast<double>(n_); }
  double bytes() const override { return 8.0 * static_cast<double>(n_); }
  bool memory_bound() const override { return true; }
  std::vector<std::string> kernel_files() const override { return {"selftest.cl"}; }
  std::unique_ptr<Evaluation> instantiate(Session& session) const override {
    die_if_told_to_in_setup();
    return std::make_unique<SelftestEvaluation>(session, n_);
  }

 private:
  std::int64_t n_;
};

class SelftestFamily : public OpFamily {
 public:
  std::string name() const override { return "selftest"; }
  std::string description() const override { return "test-only: a kernel that hangs (MODE=1) or crashes (MODE=2)"; }
  ProblemList preset(const std::string&) const override {
    ProblemList problems;
    problems.push_back(std::make_unique<SelftestProblem>(1000));
    return problems;
  }
  std::unique_ptr<Problem> from_json(const nlohmann::json& shape) const override {
    check_known_fields(shape, {"n"});
    return std::make_unique<SelftestProblem>(int_field(shape, "n", 1, 1 << 24));
  }
};

}  // namespace

const OpFamily& selftest_family() {
  static const SelftestFamily family;
  return family;
}

extern const EmbeddedFile kSelftestKernelFiles[];
extern const std::size_t kSelftestKernelFilesCount;

void register_selftest_family() {
  static const bool registered = [] {
    register_kernel_files(kSelftestKernelFiles, kSelftestKernelFilesCount);
    register_family(selftest_family());
    return true;
  }();
  (void)registered;
}

}  // namespace ocltune
