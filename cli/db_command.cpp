// `ocltune db export|merge|verify|import|check`: shipping tuned databases between machines.
#include <filesystem>
#include <fstream>
#include <iterator>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/db_check.h"
#include "cli/db_holdout.h"
#include "core/usage_error.h"
#include "db/provenance.h"
#include "db/sqlite.h"
#include "db/transfer.h"
#include "harness/hash.h"
#include "runtime/db_verify.h"
#include "runtime/runtime.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;

// What the db subcommands were given; filled in by CLI11 while parsing.
struct DbOptions {
  CLI::App* exporter = nullptr;
  CLI::App* merger = nullptr;
  CLI::App* verifier = nullptr;
  CLI::App* importer = nullptr;
  CLI::App* checker = nullptr;
  CLI::App* holder = nullptr;
  std::string device_key;
  bool best_only = false;
  bool force = false;
  bool skip_invalid = false;
  std::string output;
  std::vector<std::string> inputs;
  std::string file;
  std::string system_db;
  std::int64_t min_evaluations = kMinEvaluations;
  DbCheckOptions check;
  DbHoldoutOptions holdout;
};

DbOptions& db_options() {
  static DbOptions options;
  return options;
}

void print_rejected(const std::vector<std::string>& rejected) {
  for (const std::string& r : rejected) fmt::print(stderr, "ocltune: rejected {}\n", r);
}

// All rows of the database at `source` (opened only for reading) for one device key, copied raw.
void export_everything(const std::string& source, const std::string& device_key, const std::string& output) {
  { Database::open_read_only(source, /*accept_older=*/true); }  // refuses what is not a healthy database
  const std::string temp = output + ".tmp-export";
  fs::remove(temp);
  fs::remove(output);  // --force
  {
    Database out = Database::open(temp);
    sql::Connection& c = out.connection();
    sql::Statement(c, "ATTACH DATABASE ? AS src").bind(1, source).run();  // only read from
    sql::Transaction tx(c);
    // Named columns: every schema version has these (a run's process, new in version 3, means
    // nothing in another file). Pending measurements are never exported: they are no result.
    constexpr const char* kRunColumns =
        "run_id, device_key, started_at, finished_at, status, tool_version, host, command, strategy, seed, "
        "compile_seconds, verify_seconds, timing_seconds";
    const std::pair<const char*, std::string> tables[] = {
        {"devices", "*"}, {"runs", kRunColumns}, {"measurements", "*"}, {"best", "*"}};
    for (const auto& [table, columns] : tables) {
      const std::string into = columns == "*" ? "" : fmt::format("({})", columns);
      const std::string only_results = std::string(table) == "measurements" ? " AND status <> 'pending'" : "";
      sql::Statement(
          c, fmt::format("INSERT INTO main.{0}{1} SELECT {2} FROM src.{0} WHERE (?1 = '' OR device_key = ?1){3}", table,
                         into, columns, only_results))
          .bind(1, device_key)
          .run();
    }
    tx.commit();
    c.exec("DETACH DATABASE src; PRAGMA journal_mode = DELETE");
  }
  fs::rename(temp, output);
}

int run_export(const CliOptions& options) {
  const DbOptions& o = db_options();
  const std::string source = options.db.empty() ? default_database_path() : options.db;
  if (fs::exists(o.output) && !o.force)
    throw UsageError(fmt::format("{} exists; pass --force to replace it", o.output));
  if (!o.best_only) {
    if (o.output.ends_with(".jsonl"))
      throw UsageError("a .jsonl export holds best configurations only: add --best-only");
    export_everything(source, o.device_key, o.output);
    fmt::print("{}: every row of {} copied to {}\n", source, o.device_key.empty() ? "every device" : o.device_key,
               o.output);
    return kExitOk;
  }
  Database db = Database::open_read_only(source, /*accept_older=*/true);
  TunedRows rows = export_rows(db, o.device_key);
  if (rows.best.empty())
    throw Error(
        fmt::format("{} has no best rows{}", source, o.device_key.empty() ? "" : " for device key " + o.device_key));
  // A shipped file holds only rows that validate: a stale or damaged row stays behind, reported.
  const RowCheck check = row_check_by_device();
  std::map<std::string, const DeviceRow*> devices;
  for (const DeviceRow& d : rows.devices) devices[d.device_key] = &d;
  std::vector<BestRow> valid;
  std::vector<std::string> rejected;
  for (BestRow& r : rows.best) {
    auto it = devices.find(r.device_key);
    const std::string problem = check(r, it == devices.end() ? nullptr : it->second);
    if (problem.empty()) {
      valid.push_back(std::move(r));
    } else {
      rejected.push_back(fmt::format("best row {}: {}", describe_row(r), problem));
    }
  }
  rows.best = std::move(valid);
  print_rejected(rejected);
  // Evidence: a row chosen from fewer configurations than --min-evaluations is not shipped; one
  // whose count is unknown (from a file without measurements of it) is shipped with a null count.
  std::size_t shallow = 0, unknown = 0;
  std::erase_if(rows.best, [&](const BestRow& r) {
    const std::optional<std::int64_t> n = provenance_evaluations(r.provenance);
    if (!n) ++unknown;
    if (!n || *n >= o.min_evaluations) return false;
    fmt::print(stderr, "ocltune: left out best row {}: {} evaluation(s), fewer than --min-evaluations {}\n",
               describe_row(r), *n, o.min_evaluations);
    ++shallow;
    return true;
  });
  write_tuned_rows(o.output, rows, o.force);
  fmt::print("{}: {} best configuration(s) of {} device(s) written to {}{}\n", source, rows.best.size(),
             rows.devices.size(), o.output, rejected.empty() ? "" : fmt::format(" ({} rejected)", rejected.size()));
  if (shallow > 0)
    fmt::print("{} row(s) left out: fewer than {} evaluations (--min-evaluations)\n", shallow, o.min_evaluations);
  if (unknown > 0)
    fmt::print("{} row(s) with unknown evaluations kept, marked \"evaluations\": null in their provenance\n", unknown);
  return rejected.empty() ? kExitOk : kExitFailure;
}

int run_merge() {
  const DbOptions& o = db_options();
  if (fs::exists(o.output) && !o.force)
    throw UsageError(fmt::format("{} exists; pass --force to replace it", o.output));
  Database merged = Database::open(":memory:");
  std::size_t rejected = 0;
  for (const std::string& input : o.inputs) {
    const MergeStats s =
        merge_rows(merged, load_tuned_rows(input), row_check_by_device(), fs::path(input).filename().string());
    print_rejected(s.rejected);
    rejected += s.rejected.size();
    fmt::print("{}: {} added, {} faster than before, {} slower than a row already merged, {} rejected\n", input,
               s.added, s.replaced, s.kept, s.rejected.size());
  }
  if (rejected > 0 && !o.skip_invalid) {
    fmt::print(stderr, "ocltune: {} row(s) rejected; nothing written (--skip-invalid writes the rest)\n", rejected);
    return kExitFailure;
  }
  const TunedRows rows = export_rows(merged, "");
  write_tuned_rows(o.output, rows, o.force);
  fmt::print("{}: {} best configuration(s) of {} device(s)\n", o.output, rows.best.size(), rows.devices.size());
  return kExitOk;
}

int run_verify() {
  const std::string& file = db_options().file;
  const DatabaseReport r = verify_database(file);
  for (const std::string& p : r.problems) fmt::print(stderr, "ocltune: {}: {}\n", file, p);
  fmt::print("{}: schema version {}, {} device(s), {} run(s), {} measurement(s), {} best row(s): {}\n", file,
             r.schema_version, r.devices, r.runs, r.measurements, r.best,
             r.problems.empty() ? "valid" : fmt::format("{} problem(s)", r.problems.size()));
  return r.problems.empty() ? kExitOk : kExitFailure;
}

int run_import() {
  const DbOptions& o = db_options();
  std::string target = o.system_db;
  if (target.empty()) {
    const char* env = std::getenv("OCLTUNE_SYSTEM_DB");
    target = env && *env ? env : default_system_database_path();
  }
  std::ifstream in(o.file, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}", o.file));
  const std::string hash = hash_hex(std::string(std::istreambuf_iterator<char>(in), {}));
  const TunedRows rows = load_tuned_rows(o.file);
  Database system = Database::open(target);
  // The system layer is read by every process, often without write access: no WAL side files.
  system.connection().exec("PRAGMA journal_mode = DELETE");
  for (const ImportRow& done : system.imports()) {
    if (done.content_hash == hash) {
      fmt::print("{}: already imported into {} on {}; nothing to do\n", o.file, target, done.imported_at);
      return kExitOk;
    }
  }
  // Checked first, so that a file with a bad row is imported whole or not at all.
  Database scratch = Database::open(":memory:");
  const MergeStats dry = merge_rows(scratch, rows, row_check_by_device(), "");
  print_rejected(dry.rejected);
  if (!dry.rejected.empty() && !o.skip_invalid) {
    fmt::print(stderr, "ocltune: {} row(s) of {} rejected; nothing imported (--skip-invalid imports the rest)\n",
               dry.rejected.size(), o.file);
    return kExitFailure;
  }
  sql::Transaction tx(system.connection());
  const MergeStats s = merge_rows(system, rows, row_check_by_device(), fs::path(o.file).filename().string());
  ImportRow record;
  record.source = o.file;
  record.content_hash = hash;
  record.tool_version = OCLTUNE_VERSION;
  record.rows_added = s.added;
  record.rows_replaced = s.replaced;
  record.rows_rejected = static_cast<std::int64_t>(s.rejected.size());
  system.record_import(record);
  tx.commit();
  fmt::print("{} imported into {}: {} added, {} faster than before, {} kept, {} rejected\n", o.file, target, s.added,
             s.replaced, s.kept, s.rejected.size());
  return kExitOk;
}

}  // namespace

CLI::App* add_db_command(CLI::App& app) {
  DbOptions& o = db_options();
  CLI::App* db = app.add_subcommand("db", "export, merge, verify, import and check tuned databases")->fallthrough();
  db->require_subcommand(1);
  o.exporter = db->add_subcommand("export", "write the best configurations of a device (source: --db) to a file");
  o.exporter->add_option("--device-key", o.device_key, "device key to export (default: every device)");
  o.exporter->add_flag("--best-only", o.best_only, "only the best configuration per problem (what is shipped)");
  o.exporter->add_option("-o,--output", o.output, "output file: .db, or .jsonl for reviewable text")->required();
  o.exporter->add_flag("--force", o.force, "replace the output file");
  o.exporter->fallthrough();
  o.merger = db->add_subcommand("merge", "merge databases, keeping the faster verified row per problem");
  o.merger->add_option("inputs", o.inputs, "input files (.db or .jsonl)")->required()->check(CLI::ExistingFile);
  o.merger->add_option("-o,--output", o.output, "output file: .db or .jsonl")->required();
  o.merger->add_flag("--force", o.force, "replace the output file");
  o.merger->add_flag("--skip-invalid", o.skip_invalid, "write the valid rows even when some are rejected");
  o.verifier = db->add_subcommand("verify", "check a database's integrity and validate every row");
  o.verifier->add_option("file", o.file, "database file (.db or .jsonl)")->required()->check(CLI::ExistingFile);
  o.importer = db->add_subcommand("import", "add a shipped database to the system layer");
  o.importer->add_option("file", o.file, "shipped database (.db or .jsonl)")->required()->check(CLI::ExistingFile);
  o.importer->add_option("--system-db", o.system_db, "system database (default: $OCLTUNE_SYSTEM_DB, else installed)");
  o.importer->add_flag("--skip-invalid", o.skip_invalid, "import the valid rows even when some are rejected");
  o.exporter
      ->add_option("--min-evaluations", o.min_evaluations,
                   "with --best-only, leave out rows chosen from fewer evaluated configurations (0: keep all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  o.checker = db->add_subcommand("check", "re-time every row of a tuned-rows file on --device; report stale rows");
  o.checker->add_option("file", o.check.file, "tuned-rows file (.jsonl or .db)")->required()->check(CLI::ExistingFile);
  o.checker
      ->add_option("--max-loss", o.check.max_loss,
                   "fail a row of this device whose figure now is below (1 - this) x recorded")
      ->capture_default_str();
  o.checker->add_flag("--any-device", o.check.any_device, "apply --max-loss to rows of other device keys too");
  o.checker->add_flag("--speed-informational", o.check.speed_informational,
                      "print the figures but never fail a slower row (a shared machine); verification still fails");
  o.checker->add_flag("--fail-on-source-change", o.check.fail_on_source_change,
                      "fail a row whose kernel source changed since it was recorded");
  o.checker
      ->add_option("--shapes", o.check.shapes, "only the rows of the problems of this JSON file (as tune's --shapes)")
      ->check(CLI::ExistingFile);
  o.checker->add_option("--time-budget", o.check.time_budget,
                        "start no row after this wall time, e.g. 120s (the rest are listed as not checked)");
  o.checker->fallthrough();
  o.holder = db->add_subcommand(
      "holdout",
      "hold out each group's rows (one model's), predict them from the rest as the runtime would, time both");
  o.holder->add_option("file", o.holdout.file, "tuned-rows file (.jsonl or .db)")->required()->check(CLI::ExistingFile);
  o.holder
      ->add_option("--groups", o.holdout.groups,
                   "JSON object: group name -> list of {op, dtype, math, shape_key} (bench/gpu/holdout_groups.py)")
      ->required()
      ->check(CLI::ExistingFile);
  o.holder->add_option("--rows-per-group", o.holdout.rows_per_group, "evenly spaced rows to time per group (0: all)")
      ->capture_default_str();
  o.holder->add_option("--time-budget", o.holdout.time_budget,
                       "start no row after this wall time, e.g. 5m (the rest are counted as not reached)");
  o.holder->fallthrough();
  return db;
}

int run_db(const CliOptions& options) {
  const DbOptions& o = db_options();
  if (o.exporter->parsed()) return run_export(options);
  if (o.merger->parsed()) return run_merge();
  if (o.verifier->parsed()) return run_verify();
  if (o.checker->parsed()) return run_db_check(options, o.check);
  if (o.holder->parsed()) return run_db_holdout(options, o.holdout);
  return run_import();
}

}  // namespace ocltune
