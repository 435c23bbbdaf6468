// `ocltune show`: the best table of a database, readable or as JSON.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "db/database.h"
#include "db/transfer.h"

namespace ocltune {
namespace {

// A JSON column of an untrusted row: the parsed value, or the text (escaped) when it is not JSON,
// so `show --json` always prints valid JSON.
nlohmann::json json_column(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return {{"invalid_json", printable(text, 200)}};
  return j;
}

}  // namespace

int run_show(const CliOptions& options) {
  const std::string path = options.db.empty() ? default_database_path() : options.db;
  Database db = Database::open_read_only(path);
  const std::vector<BestRow> rows = db.all_best();
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const BestRow& r : rows) {
      nlohmann::json j = {{"device_key", r.device_key},
                          {"op", r.op},
                          {"dtype", r.dtype},
                          {"math", r.math},
                          {"shape_key", r.shape_key},
                          {"shape", json_column(r.shape_json)},
                          {"params", json_column(r.params_json)},
                          {"median_ns", r.median_ns},
                          {"min_ns", r.min_ns},
                          {"max_ns", r.max_ns},
                          {"spread", r.spread},
                          {"updated_at", r.updated_at}};
      if (r.gflops) j["gflops"] = *r.gflops;
      if (r.gbs) j["gbs"] = *r.gbs;
      if (r.default_median_ns) j["default_median_ns"] = *r.default_median_ns;
      if (r.confidence) j["confidence"] = *r.confidence;
      list.push_back(std::move(j));
    }
    // Invalid UTF-8 in a hostile row becomes U+FFFD rather than an exception.
    fmt::print("{}\n", list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    return 0;
  }
  if (rows.empty()) {
    fmt::print("{}: no tuned configurations yet\n", path);
    return 0;
  }
  fmt::print("{:<16} {:<10} {:<44} {:>12} {:>14} {:>9}  {}\n", "device", "op", "shape", "median", "throughput",
             "vs dflt", "configuration");
  for (const BestRow& r : rows) {
    const std::string rate = r.gflops ? fmt::format("{:.1f} GFLOP/s", *r.gflops)
                             : r.gbs  ? fmt::format("{:.1f} GB/s", *r.gbs)
                                      : "-";
    const std::string speedup = r.default_median_ns ? fmt::format("{:.2f}x", *r.default_median_ns / r.median_ns) : "-";
    fmt::print("{:<16} {:<10} {:<44} {:>9.1f} us {:>14} {:>9}  {}\n", printable(r.device_key, 16),
               printable(r.op + "/" + r.dtype, 24), printable(r.shape_key, 200), r.median_ns * 1e-3, rate, speedup,
               printable(r.params_json, 400));
  }
  return 0;
}

}  // namespace ocltune
