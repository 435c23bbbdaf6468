// `ocltune db check`: re-times the rows of a tuned-rows file on a device and says which went stale.
#include "cli/db_check.h"

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/status.h"
#include "core/usage_error.h"
#include "db/provenance.h"
#include "db/transfer.h"
#include "harness/device_errors.h"
#include "harness/program.h"
#include "harness/session.h"
#include "ops/device_fit.h"
#include "ops/family.h"
#include "runtime/db_verify.h"
#include "runtime/tuned_rows.h"
#include "tuner/budget.h"
#include "tuner/evaluator.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

// What became of one row. `fails`: it counts against the exit status.
struct RowResult {
  const BestRow* row = nullptr;
  bool same_device = false;
  std::string verdict;  // ok | slower | failed | invalid | skipped
  std::string detail;   // why, for anything but ok
  bool fails = false;
  std::string unit;  // GFLOP/s or GB/s; empty when the row was not re-timed
  std::optional<double> recorded_rate, now_rate, now_ns, ratio, now_spread;
  std::string current_hash;  // of the kernel files the current tree builds for the row's problem
  bool source_changed = false;
  bool retimed = false;  // below the threshold at first, timed a second time
  std::optional<std::int64_t> evaluations;
};

std::string files_hash(const Problem& problem) {
  ProgramSource source;
  source.files = problem.kernel_files();
  return source.files_hash();
}

RowResult check_one(Session& session, const BestRow& row, const DeviceRow* device_row, const DbCheckOptions& o) {
  RowResult r;
  r.row = &row;
  r.same_device = row.device_key == session.device().key();
  r.evaluations = provenance_evaluations(row.provenance);
  // As db verify does: the row must hold up on the device it was recorded on before it is run here.
  std::string problem = basic_problem(row);
  if (problem.empty()) problem = row_check_by_device()(row, device_row);
  if (!problem.empty()) {
    r.verdict = "invalid";
    r.detail = problem;
    r.fails = true;
    return r;
  }
  CheckedRow checked;
  try {
    checked = check_row(row, session.device());
  } catch (const Error& e) {
    // Another device's configuration may lie outside this device's space (another vendor's variant).
    r.verdict = r.same_device ? "invalid" : "skipped";
    r.detail = fmt::format("not valid on this device: {}", e.what());
    r.fails = r.same_device;
    return r;
  }
  const Problem& p = *checked.problem;
  r.current_hash = files_hash(p);
  r.source_changed = r.current_hash != row.source_hash;
  r.unit = p.memory_bound() ? "GB/s" : "GFLOP/s";
  const std::optional<double> stored = p.memory_bound() ? row.gbs : row.gflops;
  r.recorded_rate = stored ? *stored : throughput(p, row.median_ns);
  if (const std::string why = device_fit_problem(p, session.device()); !why.empty()) {
    r.verdict = r.same_device ? "invalid" : "skipped";
    r.detail = why;
    r.fails = r.same_device;
    return r;
  }
  // The tuner's evaluation: build, verify against the float64 reference, then time with its policy.
  const std::unique_ptr<Evaluation> evaluation = p.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  EvalOutcome outcome = evaluator.evaluate(checked.config, TuneOptions{}.timing);
  if (outcome.status != Status::kOk || !outcome.stats) {
    r.verdict = "failed";
    r.detail = fmt::format("{}: {}", status_name(outcome.status), outcome.error.substr(0, 400));
    r.fails = true;
    return r;
  }
  // A row below the threshold is timed once more, now that the device is warm, and keeps the faster
  // median: the first timing of a row can catch a cold device (PoCL's worker threads asleep made
  // 256^3 GEMMs time 0.5x of the figure the tuner had recorded minutes before, on an idle machine).
  if (row.median_ns / outcome.stats->median_ns < 1 - o.max_loss) {
    const EvalOutcome again = evaluator.evaluate(checked.config, TuneOptions{}.timing);
    if (again.status == Status::kOk && again.stats && again.stats->median_ns < outcome.stats->median_ns) {
      outcome = again;
    }
    r.retimed = true;
  }
  r.now_ns = outcome.stats->median_ns;
  r.now_spread = outcome.stats->spread;
  r.now_rate = throughput(p, *r.now_ns);
  r.ratio = row.median_ns / *r.now_ns;
  const bool applies = (r.same_device || o.any_device) && !o.speed_informational;
  if (*r.ratio < 1 - o.max_loss) {
    r.verdict = "slower";
    const char* why_not_counted = o.speed_informational ? " (--speed-informational: not counted)"
                                  : applies             ? ""
                                            : " (recorded on another device: not counted without --any-device)";
    r.detail = fmt::format("{:.2f}x of the recorded figure (the faster of two timings), below {:.2f}x{}", *r.ratio,
                           1 - o.max_loss, why_not_counted);
    r.fails = applies;
  } else {
    r.verdict = "ok";
  }
  if (r.source_changed && o.fail_on_source_change) {
    r.fails = true;
    if (!r.detail.empty()) r.detail += "; ";
    r.detail += "the kernel source changed since the row was recorded (--fail-on-source-change)";
  }
  return r;
}

nlohmann::json to_json(const RowResult& r) {
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"device_key", r.row->device_key},
          {"same_device", r.same_device},
          {"op", r.row->op},
          {"dtype", r.row->dtype},
          {"math", r.row->math},
          {"shape_key", r.row->shape_key},
          {"params", nlohmann::json::parse(r.row->params_json, nullptr, false).is_object()
                         ? nlohmann::json::parse(r.row->params_json)
                         : nlohmann::json(r.row->params_json)},
          {"evaluations", optional(r.evaluations)},
          {"unit", r.unit},
          {"recorded_median_ns", r.row->median_ns},
          {"recorded", optional(r.recorded_rate)},
          {"now_median_ns", optional(r.now_ns)},
          {"now_spread", optional(r.now_spread)},
          {"retimed", r.retimed},
          {"now", optional(r.now_rate)},
          {"ratio", optional(r.ratio)},
          {"recorded_source_hash", r.row->source_hash},
          {"current_source_hash", r.current_hash},
          {"source_changed", r.current_hash.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.source_changed)},
          {"verdict", r.verdict},
          {"detail", r.detail},
          {"fails", r.fails}};
}

std::string rate_text(const std::optional<double>& rate, const std::string& unit) {
  return rate ? fmt::format("{:.1f} {}", *rate, unit) : "-";
}

void print_row(const RowResult& r) {
  const std::string source = r.current_hash.empty() ? "source ?" : r.source_changed ? "source changed" : "source same";
  const std::string evals = r.evaluations ? fmt::format("{}", *r.evaluations) : "?";
  fmt::print("{:<12} {:<52} {:>16} {:>16} {:>6} {:<14} evals {:<4} {}{}\n", printable(r.row->op, 12),
             printable(r.row->shape_key, 256), rate_text(r.recorded_rate, r.unit), rate_text(r.now_rate, r.unit),
             r.ratio ? fmt::format("{:.2f}x", *r.ratio) : "-", source, evals, r.verdict,
             r.same_device ? "" : " (other device)");
  if (!r.detail.empty()) fmt::print("    {}\n", r.detail);
}

// (op, dtype, math, shape key) of every problem of a --shapes file.
using ProblemKey = std::tuple<std::string, std::string, std::string, std::string>;
std::set<ProblemKey> problem_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--shapes '{}': not a readable file", path));
  const nlohmann::json list = nlohmann::json::parse(in, nullptr, false);
  if (list.is_discarded()) throw UsageError(fmt::format("--shapes {}: not valid JSON", path));
  std::set<ProblemKey> keys;
  try {
    for (const auto& p : problems_from_json(list, family_names())) {
      keys.emplace(p->op(), dtype_name(p->dtype()), math_name(p->math()), p->shape_key());
    }
  } catch (const Error& e) {
    throw UsageError(fmt::format("--shapes {}: {}", path, e.what()));
  }
  return keys;
}

}  // namespace

DeviceInfo command_device(int index) {
  try {
    return find_device(index);
  } catch (const DeviceIndexError& e) {
    throw UsageError(e.what());
  }
}

std::optional<double> wall_budget_seconds(const std::string& text) {
  // 0 (which the tuner's budgets refuse) lists the rows without timing any.
  if (text == "0" || text == "0s") return 0.0;
  if (text.empty()) return std::nullopt;
  try {
    return parse_duration(text);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--time-budget: {}", e.what()));
  }
}

int run_db_check(const CliOptions& options, const DbCheckOptions& o) {
  if (!(o.max_loss >= 0 && o.max_loss < 1)) throw UsageError("--max-loss must be at least 0 and below 1");
  // The file is refused whole (not ours, malformed, oversized, newer) before a device is opened.
  TunedRows rows = load_tuned_rows(o.file);
  const std::optional<double> budget_s = wall_budget_seconds(o.time_budget);
  if (!o.shapes.empty()) {
    const std::set<ProblemKey> wanted = problem_keys(o.shapes);
    std::erase_if(rows.best, [&](const BestRow& r) { return !wanted.count({r.op, r.dtype, r.math, r.shape_key}); });
  }
  const DeviceInfo device = command_device(options.device);
  std::map<std::string, const DeviceRow*> devices;
  for (const DeviceRow& d : rows.devices) devices[d.device_key] = &d;
  std::map<std::string, int> other_devices;  // device key -> rows
  for (const BestRow& row : rows.best) {
    if (row.device_key != device.key()) ++other_devices[row.device_key];
  }
  if (!options.json) {
    fmt::print("[{}] {} (device key {}): {} row(s) of {}, loss threshold {:.2f}{}\n", device.index, device.name,
               device.key(), rows.best.size(), o.file, o.max_loss,
               o.speed_informational ? " (informational: --speed-informational)" : "");
    for (const auto& [key, count] : other_devices) {
      auto it = devices.find(key);
      fmt::print(
          "note: {} row(s) were recorded on device key {} ({}), not this device: re-timed for information, "
          "the loss threshold {}\n",
          count, printable(key, 40), it == devices.end() ? "no device row" : printable(it->second->device_name),
          o.any_device ? "applied (--any-device)" : "not applied (--any-device applies it)");
    }
    fmt::print("{:<12} {:<52} {:>16} {:>16} {:>6} {:<14} {:<10} {}\n", "op", "shape key", "recorded", "now", "ratio",
               "kernel", "evidence", "verdict");
  }
  Session session(device);
  std::vector<RowResult> results;
  int failing = 0, changed = 0;
  std::vector<const BestRow*> unchecked;
  const auto start = std::chrono::steady_clock::now();
  for (const BestRow& row : rows.best) {
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    if (budget_s && spent.count() >= *budget_s) {
      unchecked.push_back(&row);
      continue;
    }
    auto it = devices.find(row.device_key);
    results.push_back(check_one(session, row, it == devices.end() ? nullptr : it->second, o));
    const RowResult& r = results.back();
    failing += r.fails ? 1 : 0;
    changed += r.source_changed ? 1 : 0;
    if (!options.json) print_row(r);
  }
  if (options.json) {
    nlohmann::json out = {{"file", o.file},
                          {"device", to_json(device)},
                          {"max_loss", o.max_loss},
                          {"any_device", o.any_device},
                          {"speed_informational", o.speed_informational},
                          {"fail_on_source_change", o.fail_on_source_change},
                          {"rows", nlohmann::json::array()},
                          {"failing", failing},
                          {"source_changed", changed},
                          {"unchecked", nlohmann::json::array()}};
    for (const RowResult& r : results) out["rows"].push_back(to_json(r));
    for (const BestRow* r : unchecked) out["unchecked"].push_back({{"op", r->op}, {"shape_key", r->shape_key}});
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("{}: {} row(s) checked, {} failing, {} with a changed kernel source\n", o.file, results.size(), failing,
               changed);
    if (!unchecked.empty()) {
      fmt::print("{} row(s) not checked: --time-budget {} ran out\n", unchecked.size(), o.time_budget);
    }
  }
  return failing == 0 ? kExitOk : kExitFailure;
}

}  // namespace ocltune
