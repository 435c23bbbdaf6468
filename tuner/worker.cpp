// `ocltune worker`: evaluations on behalf of a tuner run with --isolate, one request per line on
// stdin, one answer per line on the original stdout.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "harness/error.h"
#include "harness/session.h"
#include "ops/family.h"
#include "tuner/compile_pool.h"
#include "tuner/executor.h"
#include "tuner/wire.h"

namespace ocltune {
namespace {

void answer(std::FILE* out, const nlohmann::json& reply) {
  const std::string line = reply.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace

int run_worker(int device_index, int compile_threads) {
  // Dies with the tuner (even a SIGKILLed one) rather than spinning on a hung kernel forever;
  // ignores the terminal's Ctrl-C, which the tuner handles by finishing the evaluation in flight.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  // Answers go to the original stdout; anything a driver prints goes to stderr instead.
  std::FILE* out = fdopen(dup(STDOUT_FILENO), "w");
  dup2(STDERR_FILENO, STDOUT_FILENO);
  if (!out) return 1;

  Session session(find_device(device_index));
  CompilePool pool(session.programs(), compile_threads);
  std::unique_ptr<Problem> problem;
  std::unique_ptr<Executor> executor;
  std::string line;
  while (std::getline(std::cin, line)) {
    const nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    try {
      if (request.contains("problem")) {
        const nlohmann::json& shape = request["problem"];
        const OpFamily* family = find_family(shape.value("op", ""));
        if (!family) throw Error("unknown op");
        executor.reset();
        problem = family->from_json(shape);
        executor = make_local_executor(session, *problem, &pool);
        answer(out, {{"ready", true}});
      } else if (!executor) {
        answer(out, {{"worker_error", "no problem set"}});
      } else if (request.contains("prefetch")) {
        std::vector<Config> configs;
        for (const auto& params : request["prefetch"]) configs.push_back(parse_config(params.get<std::string>()));
        executor->prefetch(configs);
      } else if (request.contains("evaluate")) {
        const Config config = parse_config(request["evaluate"].get<std::string>());
        answer(out, to_json(executor->evaluate(config,
                                               timing_from_json(request.value("timing", nlohmann::json::object())))));
      } else if (request.contains("interleave")) {
        std::vector<Config> configs;
        for (const auto& params : request["interleave"]) configs.push_back(parse_config(params.get<std::string>()));
        answer(out, {{"samples", executor->interleave(configs, request.value("rounds", 5), request.value("runs", 3))}});
      } else {
        answer(out, {{"worker_error", "unknown request"}});
      }
    } catch (const std::exception& e) {
      answer(out, {{"worker_error", e.what()}});
    }
  }
  return 0;
}

}  // namespace ocltune
