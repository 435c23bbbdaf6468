// The runtime dispatch library: construction, database layers, blocked configurations, statistics.
#include "runtime/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "db/database.h"
#include "harness/capability.h"
#include "runtime/check_record.h"
#include "runtime/entry.h"
#include "runtime/serial_worker.h"

namespace ocltune {
namespace {

namespace fs = std::filesystem;

DeviceInfo describe_device(const cl::Device& device) {
  for (DeviceInfo& d : discover_devices()) {
    if (d.device() == device()) return std::move(d);
  }
  throw Error("the runtime's device is not one of the devices the OpenCL platforms list (a sub-device?)");
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

const char* level_name(Level level) {
  switch (level) {
    case Level::kExact: return "exact";
    case Level::kNearest: return "nearest";
    case Level::kClass: return "class";
    case Level::kBuiltin: return "builtin";
    case Level::kLibrary: return "library";
  }
  return "unknown";
}

namespace {

// <prefix>/share/ocltune/system.db, where <prefix>/<dir>/ holds the binary this code is linked into
// (lib/libocltune.so, bin/ocltune): an installed tree that was moved, or one that never lived at its
// configured prefix, such as a wheel's (built under a temporary prefix, unpacked into site-packages).
std::string relocated_system_database_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&relocated_system_database_path), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const fs::path binary = fs::canonical(info.dli_fname, ec);
  if (ec) return {};
  return (binary.parent_path().parent_path() / "share" / "ocltune" / "system.db").string();
}

}  // namespace

std::string default_system_database_path() {
  const std::string relocated = relocated_system_database_path();
  const std::string installed = OCLTUNE_INSTALLED_SYSTEM_DB;
  const std::string build_tree = OCLTUNE_BUILD_SYSTEM_DB;
  std::error_code ec;
  if (!relocated.empty() && fs::exists(relocated, ec)) return relocated;
  if (fs::exists(installed, ec)) return installed;
  if (fs::exists(build_tree, ec)) return build_tree;
  return installed;
}

Runtime::Runtime(cl::Context context, cl::Device device, RuntimeOptions options)
    : options_(std::move(options)), session_(describe_device(device), std::move(context)) {
  gemm_fallback_ = options_.gemm_fallback.empty() ? env_or("OCLTUNE_GEMM_FALLBACK", "builtin") : options_.gemm_fallback;
  if (gemm_fallback_ != "builtin" && gemm_fallback_ != "clblast") {
    throw Error(fmt::format("GEMM fallback '{}' is neither builtin nor clblast", gemm_fallback_.substr(0, 40)));
  }
  tf32_units_ = satisfies(session_.device(), nvidia_mma_tf32());
  std::string record = options_.check_record;
  if (record.empty()) {
    const std::string binaries = default_binary_cache_dir();
    if (!binaries.empty()) record = fmt::format("{}/{}/checks.txt", binaries, session_.device().key());
  } else if (record == "off") {
    record.clear();
  }
  check_record_ = std::make_unique<CheckRecord>(record);
  fast_start_ = options_.fast_start < 0 ? env_or("OCLTUNE_FAST_START", "0") == "1" : options_.fast_start != 0;
  if (fast_start_) upgrade_worker_ = std::make_unique<SerialWorker>();
  // Programs earlier processes used load in the background while the caller goes on (a GPU driver
  // compiles a binary when it loads it: 17 s for resnet50's 80 programs on an H100, one at a time).
  // Not on CPU devices by default: PoCL runs one build at a time, and the threads would take the
  // cores the kernels run on. $OCLTUNE_PREFETCH_PROGRAMS: auto (default), on, off.
  const std::string prefetch = env_or("OCLTUNE_PREFETCH_PROGRAMS", "auto");
  if (prefetch == "on" || (prefetch == "auto" && !satisfies(session_.device(), cpu_device()))) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    session_.programs().prefetch_used_programs(std::clamp(cores / 2, 1u, 8u));
  }
  load_layers();
}

std::unique_ptr<Runtime> Runtime::for_device_index(int index, RuntimeOptions options) {
  DeviceInfo d = find_device(index);
  cl::Context context;
  try {
    context = cl::Context(d.device);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  return std::make_unique<Runtime>(std::move(context), d.device, std::move(options));
}

Runtime::~Runtime() { upgrade_worker_.reset(); }  // its task may be using any member

void Runtime::wait_for_upgrades() {
  if (upgrade_worker_) upgrade_worker_->drain();
}

void Runtime::log(const std::string& message) const {
  if (options_.log) {
    options_.log(message);
  } else {
    fmt::print(stderr, "ocltune: {}\n", message);
  }
}

void Runtime::load_layers() {
  auto table = std::make_shared<TunedTable>(session_.device());
  std::vector<std::string> messages, paths;
  const auto note = [&](const std::string& m) {
    log(m);
    messages.push_back(m);
  };
  const auto add = [&](const std::string& path, const std::string& layer, bool named) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      // The user has not tuned yet, or nothing is installed: not worth a word unless asked for by name.
      if (named) note(fmt::format("{} database {} does not exist", layer, path));
      return;
    }
    try {
      Database db = Database::open_read_only(path, /*accept_older=*/true);
      table->add_layer(db, layer, note);
      paths.push_back(path);
    } catch (const DatabaseError& e) {
      if (options_.strict_databases) throw;
      note(fmt::format("{} database refused, continuing without it: {}", layer, e.what()));
    }
  };
  if (options_.use_system_db) {
    const std::string env = env_or("OCLTUNE_SYSTEM_DB", "");
    const std::string path = !options_.system_db.empty() ? options_.system_db
                             : !env.empty()              ? env
                                                         : default_system_database_path();
    add(path, "system", !options_.system_db.empty() || !env.empty());
  }
  if (options_.use_user_db) {
    add(options_.user_db.empty() ? default_database_path() : options_.user_db, "user", !options_.user_db.empty());
  }
  std::lock_guard lock(tables_mutex_);
  table_ = std::move(table);
  messages_ = std::move(messages);
  layer_paths_ = std::move(paths);
}

void Runtime::reload() {
  load_layers();
  std::unique_lock lock(entries_mutex_);
  for (auto& [code, entry] : entries_) retired_.push_back(std::move(entry));
  entries_.clear();
}

std::vector<std::string> Runtime::messages() const {
  std::lock_guard lock(tables_mutex_);
  return messages_;
}

std::vector<std::string> Runtime::layer_paths() const {
  std::lock_guard lock(tables_mutex_);
  return layer_paths_;
}

std::vector<BlockedConfig> Runtime::blocked() const {
  std::lock_guard lock(tables_mutex_);
  return blocked_;
}

bool Runtime::is_blocked(const std::string& key) const {
  std::lock_guard lock(tables_mutex_);
  return blocked_keys_.count(key) != 0;
}

void Runtime::block(const std::string& key, BlockedConfig blocked) {
  log(fmt::format("op {} shape {}: configuration {} blocked for this shape: {}", blocked.op, blocked.shape_key,
                  blocked.config, blocked.reason));
  std::lock_guard lock(tables_mutex_);
  if (blocked_keys_.insert(key).second) blocked_.push_back(std::move(blocked));
}

RuntimeStats Runtime::stats() const {
  RuntimeStats s;
  s.resolutions = resolutions_.load();
  const ProgramCache& programs = session_.programs();
  s.programs_built = programs.builds() + programs.binary_loads();
  s.resolve_seconds = resolve_ns_.load() * 1e-9;
  s.checks = checks_.load();
  s.check_seconds = check_ns_.load() * 1e-9;
  s.checks_remembered = checks_remembered_.load();
  s.provisional = provisional_.load();
  s.upgrades = upgrades_.load();
  s.programs_compiled = programs.builds();
  s.compile_seconds = programs.compile_seconds();
  s.binary_loads = programs.binary_loads();
  s.load_seconds = programs.load_seconds();
  s.binary_stores = programs.binary_stores();
  s.store_seconds = programs.store_seconds();
  return s;
}

WorkspacePool& Runtime::workspaces(cl_command_queue queue) {
  std::lock_guard lock(tables_mutex_);
  auto& w = workspaces_[queue];
  if (!w) w = std::make_unique<WorkspacePool>(session_.context());
  return *w;
}

}  // namespace ocltune
