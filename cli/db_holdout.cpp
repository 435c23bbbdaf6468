// `ocltune db holdout` (cli/db_holdout.h): leave one model's rows out, predict them from the rest.
#include "cli/db_holdout.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/db_check.h"
#include "core/usage_error.h"
#include "db/transfer.h"
#include "harness/capability.h"
#include "harness/session.h"
#include "ops/device_fit.h"
#include "runtime/db_verify.h"
#include "runtime/lookup.h"
#include "runtime/tuned_rows.h"
#include "tuner/evaluator.h"
#include "tuner/tuner.h"

namespace ocltune {
namespace {

using RowKey = std::tuple<std::string, std::string, std::string, std::string>;  // op, dtype, math, shape key

RowKey key_of(const BestRow& r) { return {r.op, r.dtype, r.math, r.shape_key}; }

// The groups file, its groups in file order (an ordered_json keeps it).
std::vector<std::pair<std::string, std::set<RowKey>>> read_groups(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("--groups '{}': not a readable file", printable(path)));
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.empty()) {
    throw UsageError(fmt::format("--groups {}: not a JSON object of groups", printable(path)));
  }
  std::vector<std::pair<std::string, std::set<RowKey>>> groups;
  for (const auto& [name, rows] : j.items()) {
    if (!rows.is_array())
      throw UsageError(fmt::format("--groups {}: group '{}' is not a list", printable(path), printable(name)));
    std::set<RowKey> keys;
    for (const auto& r : rows) {
      const auto text = [&](const char* field, const char* fallback) -> std::string {
        if (!r.is_object() || (!r.contains(field) && !fallback) || (r.contains(field) && !r[field].is_string())) {
          throw UsageError(
              fmt::format("--groups {}: group '{}': each row needs string fields op, shape_key "
                          "(dtype and math default to fp32 and exact)",
                          printable(path), printable(name)));
        }
        return r.contains(field) ? r[field].get<std::string>() : fallback;
      };
      keys.emplace(text("op", nullptr), text("dtype", "fp32"), text("math", "exact"), text("shape_key", nullptr));
    }
    groups.emplace_back(name, std::move(keys));
  }
  return groups;
}

struct Timed {
  std::optional<double> ns;
  std::string error;
};

// The tuner's evaluation: built, verified against the float64 reference, timed with its policy.
Timed time_config(Evaluator& evaluator, const Config& config) {
  const EvalOutcome outcome = evaluator.evaluate(config, TuneOptions{}.timing);
  if (outcome.status != Status::kOk || !outcome.stats) {
    return {std::nullopt, fmt::format("{}: {}", status_name(outcome.status), outcome.error.substr(0, 300))};
  }
  return {outcome.stats->median_ns, ""};
}

struct HeldOutRow {
  std::string group;
  const BestRow* row = nullptr;
  std::string verdict;  // timed | failed | skipped
  std::string detail;
  std::string level, source;
  double distance = 0;
  int candidates_refused = 0;  // picks that failed verification before the one that served
  bool same_config = false;    // the chain picked the held-out row's own configuration
  std::optional<double> tuned_ns, predicted_ns;
  std::optional<double> ratio() const {
    return tuned_ns && predicted_ns ? std::optional<double>(*tuned_ns / *predicted_ns) : std::nullopt;
  }
};

HeldOutRow predict_one(Session& session, const TunedTable& table, const BestRow& row, const DeviceRow* device_row,
                       bool tf32_units) {
  HeldOutRow r;
  r.row = &row;
  std::string problem = basic_problem(row);
  if (problem.empty()) problem = row_check_by_device()(row, device_row);
  CheckedRow checked;
  if (problem.empty()) {
    try {
      checked = check_row(row, session.device());
    } catch (const Error& e) {
      problem = fmt::format("not valid on this device: {}", e.what());
    }
  }
  if (problem.empty()) problem = device_fit_problem(*checked.problem, session.device());
  if (!problem.empty()) {
    r.verdict = "skipped";
    r.detail = problem;
    return r;
  }
  const Problem& p = *checked.problem;
  const LookupContext lookup{
      .table = table, .device = session.device(), .tf32_units = tf32_units, .library = {}, .blocked = nullptr};
  const std::vector<Candidate> candidates = lookup_candidates(p, lookup);
  const std::unique_ptr<Evaluation> evaluation = p.instantiate(session);
  Evaluator evaluator(session, *evaluation);
  const Timed tuned = time_config(evaluator, checked.config);
  if (!tuned.ns) {
    r.verdict = "failed";
    r.detail = "the held-out row's own configuration: " + tuned.error;
    return r;
  }
  r.tuned_ns = tuned.ns;
  // As the runtime's first-dispatch check: a pick that fails verification gives way to the next.
  for (const Candidate& c : candidates) {
    if (c.level == Level::kLibrary) continue;  // GEMM's CLBlast fallback: not what this measures
    const bool same = c.config == checked.config;
    const Timed predicted = same ? tuned : time_config(evaluator, c.config);
    if (!predicted.ns) {
      ++r.candidates_refused;
      r.detail +=
          fmt::format("{}{} level refused: {}", r.detail.empty() ? "" : "; ", level_name(c.level), predicted.error);
      continue;
    }
    r.verdict = "timed";
    r.level = level_name(c.level);
    r.source = c.source;
    r.distance = c.distance;
    r.same_config = same;
    r.predicted_ns = predicted.ns;
    return r;
  }
  r.verdict = "failed";
  r.detail = "no candidate passed verification; " + r.detail;
  return r;
}

// Three averages of tuned/predicted: the mean (the target), the geometric mean (a 10x win
// and a 0.1x loss cancel) and the time-weighted one (what a step of the model would take).
struct Summary {
  int timed = 0;
  double ratio_sum = 0, log_ratio_sum = 0, tuned_sum = 0, predicted_sum = 0;
  std::map<std::string, int> levels;
  void add(const HeldOutRow& r) {
    if (!r.ratio()) return;
    ++timed;
    ratio_sum += *r.ratio();
    log_ratio_sum += std::log(*r.ratio());
    tuned_sum += *r.tuned_ns;
    predicted_sum += *r.predicted_ns;
    ++levels[r.level];
  }
  nlohmann::json to_json() const {
    return {{"rows_timed", timed},
            {"mean_ratio", timed ? nlohmann::json(ratio_sum / timed) : nlohmann::json(nullptr)},
            {"geometric_mean_ratio", timed ? nlohmann::json(std::exp(log_ratio_sum / timed)) : nlohmann::json(nullptr)},
            {"time_weighted_ratio", timed ? nlohmann::json(tuned_sum / predicted_sum) : nlohmann::json(nullptr)},
            {"levels", levels}};
  }
  std::string text() const {
    if (!timed) return "no row timed";
    std::string levels_text;
    for (const auto& [level, n] : levels)
      levels_text += fmt::format("{}{} {}", levels_text.empty() ? "" : ", ", n, level);
    return fmt::format("{} row(s): mean {:.3f} of the tuned speed, geometric mean {:.3f}, time-weighted {:.3f} ({})",
                       timed, ratio_sum / timed, std::exp(log_ratio_sum / timed), tuned_sum / predicted_sum,
                       levels_text);
  }
};

nlohmann::json to_json(const HeldOutRow& r) {
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"group", r.group},
          {"op", r.row->op},
          {"dtype", r.row->dtype},
          {"math", r.row->math},
          {"shape_key", r.row->shape_key},
          {"verdict", r.verdict},
          {"detail", r.detail},
          {"level", r.level},
          {"source", r.source},
          {"distance", r.distance},
          {"same_config", r.same_config},
          {"candidates_refused", r.candidates_refused},
          {"tuned_ns", optional(r.tuned_ns)},
          {"predicted_ns", optional(r.predicted_ns)},
          {"ratio", optional(r.ratio())}};
}

void print_row(const HeldOutRow& r) {
  if (r.verdict != "timed") {
    fmt::print("{:<16} {:<60} {}: {}\n", printable(r.group, 16), printable(r.row->shape_key, 256), r.verdict, r.detail);
    return;
  }
  fmt::print("{:<16} {:<60} {:>10.1f} {:>10.1f} {:>6.3f} {:<8} {:>5.2f} {}\n", printable(r.group, 16),
             printable(r.row->shape_key, 256), *r.tuned_ns / 1e3, *r.predicted_ns / 1e3, *r.ratio(), r.level,
             r.distance, r.same_config ? "(its own configuration)" : "");
}

// `count` evenly spaced elements of `all` (all of them when count is 0 or not smaller).
std::vector<const BestRow*> evenly_spaced(const std::vector<const BestRow*>& all, int count) {
  if (count <= 0 || static_cast<std::size_t>(count) >= all.size()) return all;
  std::vector<const BestRow*> picked;
  for (int i = 0; i < count; ++i) picked.push_back(all[static_cast<std::size_t>(i) * all.size() / count]);
  return picked;
}

}  // namespace

int run_db_holdout(const CliOptions& options, const DbHoldoutOptions& o) {
  if (o.rows_per_group < 0) throw UsageError("--rows-per-group must be at least 0");
  const std::optional<double> budget_s = wall_budget_seconds(o.time_budget);
  // Both files are refused whole before a device is opened.
  const TunedRows rows = load_tuned_rows(o.file);
  const auto groups = read_groups(o.groups);
  const DeviceInfo device = command_device(options.device);
  std::map<std::string, const DeviceRow*> devices;
  for (const DeviceRow& d : rows.devices) devices[d.device_key] = &d;
  Session session(device);
  const bool tf32_units = satisfies(device, nvidia_mma_tf32());
  if (!options.json) {
    fmt::print("[{}] {} (device key {}): {} row(s) of {}, {} group(s) held out in turn\n", device.index, device.name,
               device.key(), rows.best.size(), printable(o.file), groups.size());
    fmt::print("{:<16} {:<60} {:>10} {:>10} {:>6} {:<8} {:>5}\n", "group", "held-out shape", "tuned us", "picked us",
               "ratio", "level", "dist");
  }
  std::vector<HeldOutRow> results;
  std::map<std::string, Summary> by_group;
  Summary overall;
  nlohmann::json unreached = nlohmann::json::object();
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [name, keys] : groups) {
    // Every row of the group's problems leaves, whichever device recorded it.
    TunedRows rest{rows.devices, {}};
    std::vector<const BestRow*> held;
    for (const BestRow& r : rows.best) {
      if (keys.count(key_of(r))) {
        held.push_back(&r);
      } else {
        rest.best.push_back(r);
      }
    }
    TunedTable table(device);
    table.add_rows(rest, "held-out", o.file, nullptr);
    int not_reached = 0;
    for (const BestRow* row : evenly_spaced(held, o.rows_per_group)) {
      const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
      if (budget_s && spent.count() >= *budget_s) {
        ++not_reached;
        continue;
      }
      auto it = devices.find(row->device_key);
      HeldOutRow r = predict_one(session, table, *row, it == devices.end() ? nullptr : it->second, tf32_units);
      r.group = name;
      by_group[name].add(r);
      overall.add(r);
      if (!options.json) print_row(r);
      results.push_back(std::move(r));
    }
    if (not_reached) unreached[name] = not_reached;
    if (!options.json) {
      fmt::print("{}: {} of {} held-out row(s) in {}; {}{}\n", printable(name), held.size(), keys.size(),
                 printable(o.file), by_group[name].text(),
                 not_reached ? fmt::format("; {} not reached (--time-budget)", not_reached) : "");
    }
  }
  if (options.json) {
    nlohmann::json out = {{"file", o.file},
                          {"device", to_json(device)},
                          {"rows", nlohmann::json::array()},
                          {"groups", nlohmann::json::object()},
                          {"overall", overall.to_json()},
                          {"not_reached", unreached}};
    for (const HeldOutRow& r : results) out["rows"].push_back(to_json(r));
    for (const auto& [name, s] : by_group) out["groups"][name] = s.to_json();
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("overall: {}\n", overall.text());
  }
  return kExitOk;
}

}  // namespace ocltune
