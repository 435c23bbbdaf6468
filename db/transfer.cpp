// Moving tuned rows between databases: export, merge and import (the `ocltune db` subcommands).
#include "db/transfer.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/provenance.h"
#include "db/sqlite.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxTextFile = std::uintmax_t{256} << 20;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_text(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw DatabaseError(fmt::format("cannot read {}: {}", path, ec.message()));
  if (size > kMaxTextFile) throw DatabaseError(fmt::format("{} is larger than {} bytes", path, kMaxTextFile));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DatabaseError(fmt::format("cannot read {}", path));
  return {std::istreambuf_iterator<char>(in), {}};
}

// The row's provenance with "source" set when it has none.
std::string with_source(const std::string& provenance, const std::string& source) {
  nlohmann::json p = nlohmann::json::parse(provenance, nullptr, false);
  if (p.is_discarded() || !p.is_object()) p = nlohmann::json::object();
  if (!source.empty() && (!p.contains("source") || p["source"] == "")) p["source"] = source;
  return p.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // a file name need not be UTF-8
}

// Distinct configurations with an outcome (neither pending nor skipped) per problem and kernel
// source: how many candidates a best row of that problem was chosen from.
std::map<std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>, std::int64_t>
evaluation_counts(Database& source) {
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>, std::int64_t>
      counts;
  sql::Statement s(
      source.connection(),
      "SELECT device_key, op, dtype, math, shape_key, source_hash, count(DISTINCT params) FROM measurements "
      "WHERE status NOT IN ('pending', 'skipped') GROUP BY 1, 2, 3, 4, 5, 6");
  while (s.step()) counts[{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5)}] = s.int64(6);
  return counts;
}

}  // namespace

std::string basic_problem(const BestRow& r) {
  if (r.device_key.empty() || r.op.empty() || r.dtype.empty() || r.math.empty() || r.shape_key.empty()) {
    return "a key field is empty";
  }
  if (const std::string why = time_problem(r.median_ns); !why.empty()) return why;
  for (double v : {r.min_ns, r.max_ns, r.spread}) {
    if (!std::isfinite(v) || v < 0) return "a time statistic is negative or not finite";
  }
  return evaluations_problem(r.provenance);
}

std::string time_problem(double median_ns, double bytes, std::optional<double> copy_bandwidth_gbs) {
  if (!std::isfinite(median_ns) || median_ns <= 0) return fmt::format("median_ns {} is not a positive time", median_ns);
  if (median_ns < kMinRowTimeNs)
    return fmt::format("median_ns {} is below 1 ns, faster than any device times a kernel", median_ns);
  const bool known = copy_bandwidth_gbs && std::isfinite(*copy_bandwidth_gbs) && *copy_bandwidth_gbs > 0;
  const double device_gbs = known ? kCacheSpeedup * *copy_bandwidth_gbs : kMaxRowGbs;
  const double rate_gbs = bytes / median_ns;  // bytes per ns = GB/s
  if (!(bytes > 0) || rate_gbs <= std::min(device_gbs, kMaxRowGbs)) return "";
  if (device_gbs < kMaxRowGbs) {
    return fmt::format(
        "median_ns {} moves the problem's {:.0f} bytes at {:.0f} GB/s, faster than the device's copy bandwidth "
        "allows ({:.1f} GB/s measured, at most {:g}x that from caches)",
        median_ns, bytes, rate_gbs, *copy_bandwidth_gbs, kCacheSpeedup);
  }
  return fmt::format("median_ns {} moves the problem's {:.0f} bytes at {:.0f} GB/s, faster than any device ({:g} GB/s)",
                     median_ns, bytes, rate_gbs, kMaxRowGbs);
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  for (unsigned char c : text.substr(0, max)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > max) out += fmt::format("...({} bytes)", text.size());
  return out;
}

std::string describe_row(const BestRow& r) {
  return fmt::format("(device_key={}, op={}, dtype={}, math={}, shape_key={})", printable(r.device_key, 40),
                     printable(r.op, 40), printable(r.dtype, 16), printable(r.math, 16), printable(r.shape_key));
}

TunedRows export_rows(Database& source, const std::string& device_key) {
  TunedRows rows;
  rows.best = source.all_best(device_key);
  // Provenance is completed here so a shipped row says where it was measured even though the runs
  // it refers to are not shipped.
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, std::string> provenance;
  sql::Statement s(source.connection(), fmt::format("SELECT device_key, op, dtype, math, shape_key, {} FROM best",
                                                    complete_provenance_sql()));
  while (s.step()) provenance[{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4)}] = s.text(5);
  const std::map<std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>, std::int64_t>
      evaluations = evaluation_counts(source);
  std::set<std::string> keys;
  for (BestRow& r : rows.best) {
    auto it = provenance.find({r.device_key, r.op, r.dtype, r.math, r.shape_key});
    if (it != provenance.end()) r.provenance = it->second;
    // The evidence behind the row: a count it already carries (it came from another file, whose
    // measurements are not here) wins; otherwise this file's measurements of it; else unknown.
    if (!provenance_evaluations(r.provenance)) {
      auto e = evaluations.find({r.device_key, r.op, r.dtype, r.math, r.shape_key, r.source_hash});
      r.provenance = with_evaluations(r.provenance, e == evaluations.end() ? std::nullopt : std::optional(e->second));
    }
    r.run_id.reset();
    r.measurement_id.reset();
    keys.insert(r.device_key);
  }
  for (DeviceRow& d : source.devices()) {
    if (keys.count(d.device_key)) rows.devices.push_back(std::move(d));
  }
  return rows;
}

TunedRows load_tuned_rows(const std::string& path) {
  if (ends_with(path, ".jsonl")) return parse_jsonl(read_text(path), path);
  Database db = Database::open_read_only(path, /*accept_older=*/true);
  return export_rows(db, "");
}

MergeStats merge_rows(Database& into, const TunedRows& rows, const RowCheck& check, const std::string& source) {
  MergeStats stats;
  std::map<std::string, const DeviceRow*> devices;
  for (const DeviceRow& d : rows.devices) devices[d.device_key] = &d;
  sql::Transaction tx(into.connection());
  for (const DeviceRow& d : rows.devices) into.merge_device(d);
  for (BestRow row : rows.best) {
    auto device = devices.find(row.device_key);
    const DeviceRow* device_row = device == devices.end() ? nullptr : device->second;
    std::string problem = basic_problem(row);
    if (problem.empty() && check) problem = check(row, device_row);
    if (!problem.empty()) {
      stats.rejected.push_back(fmt::format("best row {}: {}", describe_row(row), problem));
      continue;
    }
    const bool existed = into.best(row.device_key, row.op, row.dtype, row.math, row.shape_key).has_value();
    // Run and measurement ids name rows of the source file, not of this one.
    row.run_id.reset();
    row.measurement_id.reset();
    row.provenance = with_source(row.provenance, source);
    // A stored row that fails the same checks is replaced, whatever time it claims.
    const auto refuse_stored = [&](const BestRow& stored) { return check ? check(stored, device_row) : ""; };
    if (into.update_best_if_faster(row, refuse_stored)) {
      ++(existed ? stats.replaced : stats.added);
    } else {
      ++stats.kept;
    }
  }
  tx.commit();
  return stats;
}

void write_tuned_rows(const std::string& path, const TunedRows& rows, bool overwrite) {
  if (!overwrite && fs::exists(path)) throw Error(fmt::format("{} exists; remove it first or pass --force", path));
  const std::string temp = fmt::format("{}.tmp-{}", path, getpid());
  fs::remove(temp);
  try {
    if (ends_with(path, ".jsonl")) {
      std::ofstream out(temp, std::ios::binary);
      out << to_jsonl(rows);
      out.close();
      if (!out) throw DatabaseError(fmt::format("cannot write {}", temp));
    } else {
      Database db = Database::open(temp);
      const MergeStats stats = merge_rows(db, rows, nullptr, "");
      if (!stats.rejected.empty()) throw DatabaseError(stats.rejected.front());
      // A rollback journal rather than WAL: a shipped file is opened read-only, often in a
      // directory the reader cannot write, where WAL's -shm file cannot be created.
      db.connection().exec("PRAGMA journal_mode = DELETE");
    }
    fs::rename(temp, path);
  } catch (...) {
    std::error_code ec;
    fs::remove(temp, ec);
    fs::remove(temp + "-wal", ec);
    fs::remove(temp + "-shm", ec);
    throw;
  }
}

}  // namespace ocltune
