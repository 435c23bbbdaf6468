// Evaluations in a worker process (--isolate): a kernel that hangs is killed after the timeout and
// recorded as `timeout`; one that takes its process down is recorded as `crash`, and so is a worker
// that dies while it sets up.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "harness/error.h"
#include "tuner/executor.h"
#include "tuner/wire.h"

extern char** environ;

namespace ocltune {
namespace {

// Why a request got no answer.
struct NoAnswer {
  Status status = Status::kCrash;  // timeout | crash
  std::string error;
};

class IsolatedExecutor : public Executor {
 public:
  IsolatedExecutor(IsolationOptions options, const Problem& problem)
      : options_(std::move(options)), problem_(problem.shape_json()) {
    if (!problem_.contains("op")) problem_["op"] = problem.op();
    // Writing to a worker that just died must be an error to handle, not a signal that kills us.
    std::signal(SIGPIPE, SIG_IGN);
  }
  ~IsolatedExecutor() override { stop(); }

  void prefetch(const std::vector<Config>& configs) override {
    if (pid_ < 0) return;  // a fresh worker is started by the evaluation itself
    nlohmann::json list = nlohmann::json::array();
    for (const Config& c : configs) list.push_back(to_string(c));
    send({{"prefetch", list}});  // no answer; a failed write shows at the next request
  }

  EvalOutcome evaluate(const Config& config, const TimingPolicy& timing) override {
    const nlohmann::json request = {{"evaluate", to_string(config)}, {"timing", to_json(timing)}};
    // A crash may come from a program built ahead for another configuration: retry once on a
    // fresh worker, which builds nothing else, before blaming this one. A fresh worker that dies
    // while it sets up is such a failed attempt too: at most two workers per evaluation, so a
    // worker that always dies in its set-up still ends every evaluation (as `crash`), and the run.
    for (int attempt = 0;; ++attempt) {
      NoAnswer failure;
      std::optional<nlohmann::json> reply = ask(request, options_.timeout_s, failure);
      if (reply) {
        if (reply->contains("worker_error"))
          throw Error(fmt::format("worker: {}", (*reply)["worker_error"].get<std::string>()));
        return outcome_from_json(*reply);
      }
      if (failure.status == Status::kCrash && attempt == 0) continue;
      EvalOutcome out;
      out.config = config;
      out.status = failure.status;
      out.error = failure.error;
      return out;
    }
  }

  std::vector<std::vector<double>> interleave(const std::vector<Config>& configs, int rounds, int runs) override {
    nlohmann::json list = nlohmann::json::array();
    for (const Config& c : configs) list.push_back(to_string(c));
    NoAnswer failure;
    const double timeout = options_.timeout_s * static_cast<double>(configs.size());
    std::optional<nlohmann::json> reply =
        ask({{"interleave", list}, {"rounds", rounds}, {"runs", runs}}, timeout, failure);
    if (!reply || !reply->contains("samples")) return std::vector<std::vector<double>>(configs.size());
    return (*reply)["samples"].get<std::vector<std::vector<double>>>();
  }

 private:
  // Starts a worker and sets up the problem in it. A worker that dies (or does not answer) before it
  // is ready is reaped and described in `failure` (false); one that cannot be spawned, or answers
  // its set-up with an error (every worker would), throws.
  bool start(NoAnswer& failure) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0) {
      throw Error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    std::vector<char*> argv;
    for (const std::string& arg : options_.worker_command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (rc != 0) {
      close(to_child[1]);
      close(from_child[0]);
      pid_ = -1;
      throw Error(fmt::format("cannot start the worker {}: {}", options_.worker_command.at(0), std::strerror(rc)));
    }
    to_ = to_child[1];
    from_ = from_child[0];
    buffer_.clear();
    std::optional<nlohmann::json> ready = exchange({{"problem", problem_}}, options_.timeout_s, failure);
    if (!ready) {
      failure.error = fmt::format("the worker {} while setting up {}: {}",
                                  failure.status == Status::kTimeout ? "hung" : "died", problem_.dump(), failure.error);
      return false;
    }
    if (!ready->value("ready", false)) {
      stop();
      throw Error(
          fmt::format("the worker could not set up {}: {}", problem_.dump(), ready->value("worker_error", "?")));
    }
    return true;
  }

  void stop() {
    if (pid_ < 0) return;
    close(to_);
    close(from_);
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  // Kills the worker and says how it ended (it may have died already).
  NoAnswer reap(Status status) {
    close(to_);
    close(from_);
    if (status == Status::kTimeout) kill(pid_, SIGKILL);
    int code = 0;
    waitpid(pid_, &code, 0);
    pid_ = -1;
    if (status == Status::kTimeout)
      return {status, fmt::format("no answer within {:g} s; worker killed", options_.timeout_s)};
    if (WIFSIGNALED(code))
      return {Status::kCrash,
              fmt::format("worker killed by signal {} ({})", WTERMSIG(code), strsignal(WTERMSIG(code)))};
    return {Status::kCrash, fmt::format("worker exited with status {}", WIFEXITED(code) ? WEXITSTATUS(code) : -1)};
  }

  bool send(const nlohmann::json& message) {
    const std::string line = message.dump() + "\n";
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = write(to_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  std::optional<nlohmann::json> ask(const nlohmann::json& request, double timeout_s, NoAnswer& failure) {
    if (pid_ < 0 && !start(failure)) return std::nullopt;
    return exchange(request, timeout_s, failure);
  }

  std::optional<nlohmann::json> exchange(const nlohmann::json& request, double timeout_s, NoAnswer& failure) {
    if (!send(request)) {
      failure = reap(Status::kCrash);
      return std::nullopt;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      const std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        const std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
        if (reply.is_discarded()) throw Error(fmt::format("worker sent a malformed line: {}", line.substr(0, 200)));
        return reply;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        failure = reap(Status::kTimeout);
        return std::nullopt;
      }
      pollfd fd{from_, POLLIN, 0};
      const int ready = poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (ready < 0 && errno != EINTR) throw Error(fmt::format("poll: {}", std::strerror(errno)));
      if (ready <= 0) continue;
      char chunk[65536];
      const ssize_t n = read(from_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failure = reap(Status::kCrash);
        return std::nullopt;
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  IsolationOptions options_;
  nlohmann::json problem_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<Executor> make_isolated_executor(const IsolationOptions& options, const Problem& problem) {
  if (options.worker_command.empty()) throw Error("--isolate needs the worker command");
  return std::make_unique<IsolatedExecutor>(options, problem);
}

}  // namespace ocltune
