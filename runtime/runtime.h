// The runtime dispatch library: picks the tuned configuration of each call (exact shape, nearest
// tuned shape, device class, built-in or library fallback) and launches it on the caller's buffers.
// See docs/RUNTIME.md. Thread-safe: any number of host threads may dispatch on one runtime.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/cl.h"
#include "harness/device.h"
#include "harness/session.h"
#include "runtime/adapter.h"
#include "runtime/dispatch_record.h"
#include "runtime/table.h"

namespace ocltune {

struct RuntimeOptions {
  // Read-only system database (shipped). Empty: $OCLTUNE_SYSTEM_DB, else default_system_database_path().
  std::string system_db;
  // The user's database, which wins over the system one. Empty: default_database_path() ($OCLTUNE_DB, ...).
  std::string user_db;
  bool use_system_db = true;
  bool use_user_db = true;
  // GEMM's last level: the built-in configuration, or CLBlast. Empty: $OCLTUNE_GEMM_FALLBACK, else builtin.
  std::string gemm_fallback;
  // Nearest-shape candidates farther than this (log2 units, docs/RUNTIME.md) are not considered.
  double max_nearest_distance = 8.0;
  // Verify a configuration taken from another shape or device the first time it runs on a shape.
  bool verify_first_dispatch = true;
  // Where passed first-dispatch checks are remembered for later processes (runtime/check_record.h).
  // Empty: <binary cache>/<device key>/checks.txt beside the program binaries (none where the binary
  // cache is off, $OCLTUNE_BINARY_CACHE=off); "off": nowhere, every process checks again.
  std::string check_record;
  // Fast start: a problem whose best configuration is not ready yet (its programs are not built, or a
  // borrowed one still needs its first-dispatch check) runs its built-in configuration at once, while a
  // background thread builds (and checks) the better one; a call after that switches to it. A model's
  // first step then waits for the few programs the built-in configurations share instead of every
  // tuned one's (issue 39's cold start). -1: $OCLTUNE_FAST_START (1: on; default off); 0: off; 1: on.
  int fast_start = -1;
  // A database file that is refused (corrupt, foreign, newer) fails construction instead of being skipped.
  bool strict_databases = false;
  // Warnings (refused files, rejected rows, blocked configurations). Default: stderr.
  std::function<void(const std::string&)> log;
};

// The configuration chosen for one problem, and where it came from.
struct Decision {
  Level level = Level::kBuiltin;
  Config config;          // empty for kLibrary
  std::string source;     // e.g. "user database /x.db, device 1a2b..., shape batch=1,..." or "built-in"
  double distance = 0;    // nearest-shape distance, for kNearest and kClass
  bool verified = false;  // passed the first-dispatch check
};

// A configuration refused for a shape: its first-dispatch check failed or it did not build.
struct BlockedConfig {
  std::string op, shape_key, config, reason;
};

struct RuntimeStats {
  std::uint64_t resolutions = 0;  // decision-cache misses
  int programs_built = 0;         // compiled, or loaded from the on-disk binary cache
  // Where the cold path's time went since construction (a model's first step; seconds summed over
  // threads): resolving new problems, which includes the first-dispatch checks and the program builds
  // of the runtime's families (not those of callers' programs built through program()).
  double resolve_seconds = 0;
  std::uint64_t checks = 0;  // first-dispatch checks of borrowed configurations
  double check_seconds = 0;
  // Borrowed configurations that ran without a check: an earlier process's check of the same kernels
  // on this device passed (RuntimeOptions::check_record).
  std::uint64_t checks_remembered = 0;
  // Fast start (RuntimeOptions::fast_start): problems that ran their built-in configuration while a
  // better one was prepared in the background, and how many of them switched to it since.
  std::uint64_t provisional = 0;
  std::uint64_t upgrades = 0;
  // Every program of the runtime's program cache, callers' included: compiled from source, loaded from
  // the on-disk binary cache (misses included in the time), binaries written to it.
  int programs_compiled = 0;
  double compile_seconds = 0;
  int binary_loads = 0;
  double load_seconds = 0;
  int binary_stores = 0;
  double store_seconds = 0;
};

// Default system database: <prefix>/share/ocltune/system.db beside the binary this runtime is linked into
// (a moved install, a wheel), else the configured install's <datadir>/ocltune/system.db, else the build tree's.
std::string default_system_database_path();

class CheckRecord;   // runtime/check_record.h
class SerialWorker;  // runtime/serial_worker.h
struct Candidate;    // runtime/lookup.h

// The math mode of a call: "tf32" where the caller allows TF32, the device has TF32 units and the
// tensors are fp32; "exact" otherwise. TF32 concerns fp32 inputs only: PyTorch passes cuDNN's switch
// with 16-bit convolutions too, and their problems were keyed "tf32" apart from the 16-bit rows.
inline MathMode call_math(bool allow_tf32, bool tf32_units, DType dtype) {
  return allow_tf32 && tf32_units && dtype == DType::kFp32 ? MathMode::kTf32 : MathMode::kExact;
}

class Runtime {
 public:
  // A runtime for a caller's context and device. Throws ocltune::Error (DatabaseError with
  // strict_databases) when the device is unknown.
  Runtime(cl::Context context, cl::Device device, RuntimeOptions options = {});
  // A runtime with its own context on device `index` (as `ocltune devices` counts).
  static std::unique_ptr<Runtime> for_device_index(int index, RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const DeviceInfo& device() const { return session_.device(); }
  // Whether the device has matrix units that take TF32 inputs: where it has none, a call that
  // allows TF32 is an exact call (the C API's allow_tf32: "where the device has them").
  bool has_tf32_units() const { return tf32_units_; }
  // The math mode of a call that allows TF32 or not (call_math below) on this device.
  MathMode call_math(bool allow_tf32, DType dtype) const { return ocltune::call_math(allow_tf32, tf32_units_, dtype); }
  const cl::Context& context() const { return session_.context(); }
  // An in-order queue of the runtime's own (for callers that have none).
  cl::CommandQueue& queue() { return session_.queue(); }

  // Enqueues `call` (the adapter's call struct) on `queue`. Entry points such as ops::gemm call this.
  Dispatch dispatch(const DispatchAdapter& adapter, const ShapeCode& code, const void* call, cl_command_queue queue,
                    const DispatchOptions& options = {});
  // The decision for a call, resolving it (checks included) if it is not cached yet.
  Decision decide(const DispatchAdapter& adapter, const ShapeCode& code, const void* call);
  // The OpenCL handles behind this runtime, for the C API.
  const Session& session() const { return session_; }
  // `source` built for this runtime's device through its program cache: once per runtime, and from
  // the on-disk binary cache when another process built it before. Throws BuildError with the log.
  cl::Program program(const ProgramSource& source) { return session_.programs().get(source); }

  // Reads the database layers again and forgets every cached decision (not the blocked configurations).
  void reload();
  // Fast start: waits until the background thread has prepared every better configuration queued so
  // far (the calls after this one switch to them).
  void wait_for_upgrades();

  std::vector<std::string> messages() const;  // refused layers and rejected rows of the last load
  std::vector<BlockedConfig> blocked() const;
  RuntimeStats stats() const;
  std::vector<std::string> layer_paths() const;  // the database files loaded, system first

  // What this runtime dispatched since construction or the last reset_dispatch_stats(): every distinct
  // problem with its calls per lookup level (runtime/dispatch_record.h). reload() keeps the counts, so a
  // problem tuned in between shows the calls of both levels. Calls of empty problems (a marker) are not
  // counted, nor decide().
  std::vector<DispatchedProblem> dispatched_problems() const;
  DispatchStats dispatch_stats() const;
  void reset_dispatch_stats();
  // The problems dispatched as an `ocltune --shapes` file (ocltune::write_shapes_file of this runtime).
  std::size_t write_shapes_file(const std::string& path) const;

  struct Entry;    // a resolved decision with its prepared kernels (runtime/dispatch.cpp)
  struct Upgrade;  // fast start: a provisional entry's better configurations (runtime/entry.h)

 private:
  Entry& entry(const ShapeCode& code);
  // The entry of `code`, resolved, and switched to its upgrade where one is ready.
  Entry& ready_entry(const DispatchAdapter& adapter, const ShapeCode& code, const void* call, cl_command_queue queue);
  // `allow_provisional`: fast start may resolve to the built-in configuration and queue an Upgrade.
  // `checked`: a configuration the background checked on this problem (an Upgrade's), which runs
  // without a second check, as an entry's check covers all its later calls.
  void resolve(Entry& entry, const DispatchAdapter& adapter, const void* call, cl_command_queue queue,
               bool allow_provisional = true, const Config* checked = nullptr);
  // Fast start: the better candidates before the built-in one, with the programs and checks each
  // needs, when the first of them is not ready; null when it is (or there is nothing better).
  std::shared_ptr<Upgrade> plan_upgrade(const DispatchAdapter& adapter, const void* call, cl_command_queue queue,
                                        const Problem& problem, const std::vector<Candidate>& candidates);
  void prepare_upgrade(Upgrade& upgrade);  // on the background thread
  // Replaces `provisional` in the decision cache by a new entry resolved now that its upgrade is
  // prepared; the old entry stays alive (retired_), as with reload().
  Entry& upgrade(const ShapeCode& code, Entry& provisional, const DispatchAdapter& adapter, const void* call,
                 cl_command_queue queue);
  // First-dispatch check of `config` on the problem's synthetic data; empty when it passes. `programs`
  // (the call's plan's: same configuration and shape) build meanwhile.
  std::string check(const Problem& problem, const Config& config, const std::vector<ProgramSource>& programs);
  bool is_blocked(const std::string& key) const;
  void block(const std::string& key, BlockedConfig blocked);
  void load_layers();
  // The workspaces of the ops planned on `queue`: an op leases one for its plan and enqueues.
  WorkspacePool& workspaces(cl_command_queue queue);
  void log(const std::string& message) const;

  RuntimeOptions options_;
  mutable Session session_;  // mutable for stats(): its program cache synchronises itself
  std::string gemm_fallback_;
  bool tf32_units_ = false;

  mutable std::mutex tables_mutex_;  // guards table_, messages_, layer_paths_, blocked_*, workspaces_
  std::shared_ptr<const TunedTable> table_;
  std::vector<std::string> messages_;
  std::vector<std::string> layer_paths_;
  std::vector<BlockedConfig> blocked_;
  std::set<std::string> blocked_keys_;
  std::unordered_map<cl_command_queue, std::unique_ptr<WorkspacePool>> workspaces_;

  mutable std::shared_mutex entries_mutex_;  // guards entries_ and retired_
  std::unordered_map<ShapeCode, std::unique_ptr<Entry>, ShapeCodeHash> entries_;
  // Entries dropped by reload() stay alive: another thread may still be dispatching through one.
  std::vector<std::unique_ptr<Entry>> retired_;

  std::atomic<std::uint64_t> resolutions_{0};
  std::atomic<long long> resolve_ns_{0};
  std::atomic<std::uint64_t> checks_{0};
  std::atomic<long long> check_ns_{0};
  std::atomic<std::uint64_t> checks_remembered_{0};
  std::unique_ptr<CheckRecord> check_record_;
  bool fast_start_ = false;
  std::atomic<std::uint64_t> provisional_{0};
  std::atomic<std::uint64_t> upgrades_{0};
  // Last member: destroyed (its thread stopped) before what the upgrades it runs use.
  std::unique_ptr<SerialWorker> upgrade_worker_;
};

}  // namespace ocltune
