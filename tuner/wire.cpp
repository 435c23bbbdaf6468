// The messages between the tuner and an isolated worker process.
#include "tuner/wire.h"

#include <limits>

#include "harness/error.h"

namespace ocltune {

nlohmann::json to_json(const TimingPolicy& p) {
  nlohmann::json j = {{"warmup", p.warmup},
                      {"min_runs", p.min_runs},
                      {"max_runs", p.max_runs},
                      {"target_spread", p.target_spread},
                      {"max_seconds", p.max_seconds}};
  if (std::isfinite(p.abandon_above_ns)) j["abandon_above_ns"] = p.abandon_above_ns;
  return j;
}

TimingPolicy timing_from_json(const nlohmann::json& j) {
  TimingPolicy p;
  p.warmup = j.value("warmup", p.warmup);
  p.min_runs = j.value("min_runs", p.min_runs);
  p.max_runs = j.value("max_runs", p.max_runs);
  p.target_spread = j.value("target_spread", p.target_spread);
  p.max_seconds = j.value("max_seconds", p.max_seconds);
  p.abandon_above_ns = j.value("abandon_above_ns", std::numeric_limits<double>::infinity());
  return p;
}

nlohmann::json to_json(const EvalOutcome& o) {
  nlohmann::json j = {
      {"params", to_string(o.config)}, {"status", status_name(o.status)},      {"error", o.error},
      {"compile_ms", o.compile_ms},    {"compile_wait_ms", o.compile_wait_ms}, {"verify_ms", o.verify_ms},
      {"timing_ms", o.timing_ms}};
  if (o.max_error) j["max_error"] = *o.max_error;
  if (o.stats) {
    j["stats"] = {{"median_ns", o.stats->median_ns}, {"min_ns", o.stats->min_ns}, {"max_ns", o.stats->max_ns},
                  {"mean_ns", o.stats->mean_ns},     {"spread", o.stats->spread}, {"samples", o.stats->samples},
                  {"cut_short", o.stats->cut_short}};
  }
  return j;
}

EvalOutcome outcome_from_json(const nlohmann::json& j) {
  try {
    EvalOutcome o;
    o.config = parse_config(j.at("params").get<std::string>());
    const std::string status = j.at("status").get<std::string>();
    o.status = parse_status(status).value_or(Status::kCrash);  // a garbled answer: the worker is not sane
    o.error = j.value("error", "");
    o.compile_ms = j.value("compile_ms", 0.0);
    o.compile_wait_ms = j.value("compile_wait_ms", 0.0);
    o.verify_ms = j.value("verify_ms", 0.0);
    o.timing_ms = j.value("timing_ms", 0.0);
    if (j.contains("max_error")) o.max_error = j["max_error"].get<double>();
    if (j.contains("stats")) {
      const nlohmann::json& s = j["stats"];
      o.stats = TimingStats{.median_ns = s.at("median_ns").get<double>(),
                            .min_ns = s.at("min_ns").get<double>(),
                            .max_ns = s.at("max_ns").get<double>(),
                            .mean_ns = s.at("mean_ns").get<double>(),
                            .spread = s.at("spread").get<double>(),
                            .samples = s.at("samples").get<int>(),
                            .cut_short = s.value("cut_short", false)};
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("malformed message from the worker: ") + e.what());
  }
}

}  // namespace ocltune
