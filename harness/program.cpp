// Program sources (a #define prelude + kernel files), the in-memory cache of built programs and the
// on-disk cache of program binaries.
#include "harness/program.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/append_line.h"
#include "harness/error.h"
#include "harness/hash.h"
#include "harness/kernel_files.h"

namespace ocltune {

std::string ProgramSource::text() const {
  std::string out;
  for (const auto& [name, value] : defines) out += fmt::format("#define {} {}\n", name, value);
  for (const std::string& file : files) {
    out += fmt::format("// ---- kernels/{} ----\n", file);
    out += kernel_file(file);
    out += '\n';
  }
  out += inline_source;
  return out;
}

std::string ProgramSource::key() const {
  std::string identity = text() + '\x1f' + options;
  if (!ptx_target.empty()) identity += '\x1f' + ptx_target;  // keys of other programs stay as they were
  return hash_hex(identity);
}

std::string ProgramSource::files_hash() const {
  std::string all;
  for (const std::string& file : files) {
    all += file;
    all += '\x1f';
    all += kernel_file(file);
  }
  return hash_hex(all);
}

std::string default_binary_cache_dir() {
  if (const char* env = std::getenv("OCLTUNE_BINARY_CACHE")) {
    const std::string dir = env;
    return dir == "off" ? "" : dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/ocltune/binaries";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ocltune/binaries";
  return "";
}

ProgramCache::ProgramCache(cl::Context context, cl::Device device, DiskCache disk)
    : context_(std::move(context)), device_(std::move(device)), disk_(std::move(disk)) {}

namespace {

// The caches with prefetch threads. At exit they are stopped and joined before the driver's own exit
// handlers run (registered earlier, so they run later): a process that ends while a binary is
// loading must not tear the driver down under a build (runtimes of ocltune_torch are never
// destroyed, so their destructors cannot do it).
std::mutex& prefetching_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<ProgramCache*>& prefetching() {
  static auto* caches = new std::set<ProgramCache*>;
  return *caches;
}

void stop_every_prefetch() {
  std::lock_guard lock(prefetching_mutex());
  for (ProgramCache* cache : prefetching()) cache->stop_prefetch();
}

}  // namespace

ProgramCache::~ProgramCache() {
  {
    std::lock_guard lock(prefetching_mutex());
    prefetching().erase(this);
  }
  stop_prefetch();
}

void ProgramCache::stop_prefetch() {
  stop_prefetch_ = true;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(prefetchers_);
  }
  for (std::thread& t : threads) t.join();
}

bool ProgramCache::contains(const ProgramSource& source) const {
  std::lock_guard lock(mutex_);
  return programs_.count(source.key()) != 0;
}

bool ProgramCache::available(const ProgramSource& source) const {
  if (contains(source)) return true;
  std::error_code error;
  return !disk_.dir.empty() && std::filesystem::is_regular_file(binary_path(source), error);
}

double ProgramCache::build_ms(const ProgramSource& source) const {
  std::lock_guard lock(mutex_);
  auto it = build_ms_.find(source.key());
  return it == build_ms_.end() ? 0.0 : it->second;
}

namespace {

// A prefetched binary that did not load: its entry is gone, and whoever waited for it builds.
struct PrefetchMiss {};

}  // namespace

cl::Program ProgramCache::get(const ProgramSource& source) {
  const std::string key = source.key();
  for (;;) {
    std::promise<cl::Program> promise;
    std::shared_future<cl::Program> future;
    bool owner = false;
    {
      std::lock_guard lock(mutex_);
      auto it = programs_.find(key);
      if (it == programs_.end()) {
        future = promise.get_future().share();
        programs_.emplace(key, future);
        owner = true;
      } else {
        future = it->second;
      }
    }
    // The first requester builds outside the lock, so different programs build concurrently.
    if (owner) {
      const auto start = std::chrono::steady_clock::now();
      try {
        promise.set_value(build(source));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::lock_guard lock(mutex_);
      build_ms_[key] = ms;
    }
    try {
      cl::Program program = future.get();
      note_use(source, key);
      return program;
    } catch (const PrefetchMiss&) {
      continue;  // the prefetcher removed its entry: build it here
    }
  }
}

cl::Program ProgramCache::build(const ProgramSource& source) {
  const std::string text = source.text();
  // OCLTUNE_DUMP_SOURCES=DIR writes the exact text of every build, to reproduce it by hand.
  if (const char* dir = std::getenv("OCLTUNE_DUMP_SOURCES"); dir && *dir) {
    std::ofstream(fmt::format("{}/{}.cl", dir, source.key())) << "// options: " << source.options << "\n" << text;
  }
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  };
  const auto load_start = std::chrono::steady_clock::now();
  std::optional<cl::Program> loaded = load_binary(source);
  load_ns_ += since(load_start);
  if (loaded) {
    ++binary_loads_;
    return *loaded;
  }
  cl::Program program = compile(source, text);
  if (!source.ptx_target.empty()) program = retarget_ptx(source, program);
  const auto store_start = std::chrono::steady_clock::now();
  if (store_binary(source, program)) ++binary_stores_;
  store_ns_ += since(store_start);
  return program;
}

namespace {

// The options of a build from source or PTX: `base` plus OCLTUNE_BUILD_OPTIONS, driver options for
// every build (e.g. -cl-nv-verbose, whose register report OCLTUNE_BUILD_LOG=1 prints); they are
// not part of the cache key.
std::string build_options(const std::string& base) {
  const char* extra = std::getenv("OCLTUNE_BUILD_OPTIONS");
  return base + " " + (extra ? extra : "");
}

// With OCLTUNE_BUILD_LOG=1, the driver's log of a successful build.
void print_build_log(const cl::Program& program, const std::string& label) {
  if (const char* show = std::getenv("OCLTUNE_BUILD_LOG"); !show || *show != '1') return;
  for (const auto& [dev, log] : program.getBuildInfo<CL_PROGRAM_BUILD_LOG>()) {
    if (!log.empty()) fmt::print(stderr, "build log {}:\n{}\n", label, log);
  }
}

std::string failed_build_log(const cl::BuildError& e) {
  std::string log;
  for (const auto& [dev, device_log] : e.getBuildLog()) log += device_log;
  return log;
}

}  // namespace

cl::Program ProgramCache::compile(const ProgramSource& source, const std::string& text) {
  const auto start = std::chrono::steady_clock::now();
  const auto count_time = [&] {
    compile_ns_ +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  };
  cl::Program program(context_, text);
  try {
    // -w: driver-side warnings (e.g. "loop not unrolled") would interleave with our output; errors
    // still reach the build log, and OCLTUNE_DUMP_SOURCES reproduces a build with warnings.
    program.build({device_}, build_options("-w " + source.options).c_str());
    // With OCLTUNE_DUMP_SOURCES the driver's binary goes next to the source (PTX on NVIDIA: read
    // it, or assemble it with ptxas/nvdisasm, to see what the compiler made of a kernel).
    if (const char* dir = std::getenv("OCLTUNE_DUMP_SOURCES"); dir && *dir) {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (!binaries.empty()) {
        std::ofstream(fmt::format("{}/{}.bin", dir, source.key()), std::ios::binary)
            .write(reinterpret_cast<const char*>(binaries[0].data()), static_cast<std::streamsize>(binaries[0].size()));
      }
    }
    print_build_log(program, source.key());
  } catch (const cl::BuildError& e) {
    count_time();
    throw BuildError(e.err(), failed_build_log(e));
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  count_time();
  ++builds_;
  return program;
}

std::optional<std::string> retargeted_ptx(std::string ptx, const std::string& target) {
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  const std::string marker = "//" + target + " ";
  const std::string directive = "\n.target ";
  const std::size_t at_target = ptx.find(directive);
  if (at_target == std::string::npos || ptx.find(marker) == std::string::npos) return std::nullopt;
  for (std::size_t at = ptx.find(marker); at != std::string::npos; at = ptx.find(marker, at))
    ptx.erase(at, marker.size());
  const std::size_t name = at_target + directive.size();
  const std::size_t end = ptx.find_first_of(", \n", name);
  ptx.replace(name, end == std::string::npos ? std::string::npos : end - name, target);
  return ptx;
}

// NVIDIA's OpenCL compiler emits PTX for the device's base architecture (".target sm_90" on an
// H200), so instructions of an architecture-specific target such as wgmma (sm_90a) fail in its
// ptxas. The kernel therefore writes them behind "//<target> " comments; this takes the PTX of the
// build that succeeded without them, uncomments them, retargets the module and builds that.
cl::Program ProgramCache::retarget_ptx(const ProgramSource& source, const cl::Program& built) {
  std::string binary;
  try {
    const auto binaries = built.getInfo<CL_PROGRAM_BINARIES>();
    if (binaries.size() == 1) binary.assign(binaries[0].begin(), binaries[0].end());
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  const std::optional<std::string> ptx = retargeted_ptx(std::move(binary), source.ptx_target);
  if (!ptx) {
    throw BuildError(CL_BUILD_PROGRAM_FAILURE,
                     fmt::format("ptx_target {}: the driver's binary is not PTX with '//{} ' lines (an NVIDIA device?)",
                                 source.ptx_target, source.ptx_target));
  }
  const std::string label = fmt::format("{} ({})", source.key(), source.ptx_target);
  const auto start = std::chrono::steady_clock::now();
  cl::Program program;
  try {
    program =
        cl::Program(context_, {device_}, cl::Program::Binaries{std::vector<unsigned char>(ptx->begin(), ptx->end())});
    // Without -w: ptxas's advice (e.g. that it had to serialize wgmma) is worth reading here.
    program.build({device_}, build_options(source.options).c_str());
    print_build_log(program, label);
  } catch (const cl::BuildError& e) {
    throw BuildError(e.err(), fmt::format("retargeted to {}: {}", source.ptx_target, failed_build_log(e)));
  } catch (const cl::Error& e) {
    throw BuildError(e.err(),
                     fmt::format("retargeted to {}: the driver refused the PTX ({})", source.ptx_target, e.what()));
  }
  compile_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  if (const char* dir = std::getenv("OCLTUNE_DUMP_SOURCES"); dir && *dir) {
    std::ofstream(fmt::format("{}/{}.{}.ptx", dir, source.key(), source.ptx_target)) << *ptx;
  }
  return program;
}

// ---- On-disk binaries ----
// File: "OCLTBIN1\n", one JSON header line (device key, driver, program key, options, payload
// size and hash), then the payload as clGetProgramInfo(CL_PROGRAM_BINARIES) returned it.

namespace {

constexpr std::string_view kMagic = "OCLTBIN1\n";

}  // namespace

std::string ProgramCache::binary_path(const ProgramSource& source) const {
  const std::string name = hash_hex(disk_.driver_version + '\x1f' + source.key() + '\x1f' + source.options);
  return fmt::format("{}/{}/{}.bin", disk_.dir, disk_.device_key.empty() ? "unknown" : disk_.device_key, name);
}

std::optional<ProgramCache::BinaryFile> ProgramCache::read_binary(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string magic(kMagic.size(), '\0');
  std::string header_line;
  if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) || magic != kMagic ||
      !std::getline(in, header_line)) {
    return std::nullopt;
  }
  const nlohmann::json header = nlohmann::json::parse(header_line, nullptr, false);
  if (!header.is_object() || header.value("device_key", "") != disk_.device_key ||
      header.value("driver", "") != disk_.driver_version || !header.contains("key") || !header["key"].is_string() ||
      !header.contains("options") || !header["options"].is_string() || !header.contains("size") ||
      !header["size"].is_number_unsigned()) {
    return std::nullopt;  // another device or driver, or not a header of ours: rebuild
  }
  const auto size = header["size"].get<std::size_t>();
  if (size == 0 || size > (std::size_t{1} << 30)) return std::nullopt;
  BinaryFile file{header["key"].get<std::string>(), header["options"].get<std::string>(),
                  std::vector<unsigned char>(size)};
  if (!in.read(reinterpret_cast<char*>(file.payload.data()), static_cast<std::streamsize>(size)) || in.peek() != EOF) {
    return std::nullopt;  // truncated or trailing bytes
  }
  const std::string_view bytes(reinterpret_cast<const char*>(file.payload.data()), file.payload.size());
  if (header.value("hash", "") != hash_hex(bytes)) return std::nullopt;
  return file;
}

cl::Program ProgramCache::build_binary(const std::vector<unsigned char>& payload, const std::string& options) {
  cl::Program program(context_, {device_}, cl::Program::Binaries{payload});
  program.build({device_}, ("-w " + options).c_str());
  return program;
}

std::optional<cl::Program> ProgramCache::load_binary(const ProgramSource& source) {
  if (disk_.dir.empty()) return std::nullopt;
  const std::optional<BinaryFile> file = read_binary(binary_path(source));
  // Another program under a colliding name: rebuild.
  if (!file || file->key != source.key() || file->options != source.options) return std::nullopt;
  try {
    return build_binary(file->payload, file->options);
  } catch (const cl::Error&) {
    return std::nullopt;  // a binary the driver no longer accepts: compile from source
  }
}

// ---- Prefetch of the programs earlier processes used ----
// DIR/<device key>/used.txt: one binary file name per line, appended by each process for each
// program it used, after a marker line (kUsedMarker) that begins the process's block. Other lines
// are ignored.

namespace {

constexpr std::size_t kMaxPrefetch = 512;           // the most recently used programs
constexpr std::uintmax_t kUsedFileLimit = 1 << 20;  // then rewritten with its most recent names only

bool is_binary_name(const std::string& name) {
  if (name.size() != 16 + 4 || name.compare(16, 4, ".bin") != 0) return false;
  return std::all_of(name.begin(), name.begin() + 16,
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

std::vector<std::string> prefetch_order(const std::vector<std::string>& lines, std::size_t max) {
  // Blocks of names, one per process (each begins with a marker line: kUsedMarker).
  std::vector<std::vector<std::string>> blocks(1);
  for (const std::string& line : lines) {
    if (line == kUsedMarker) {
      if (!blocks.back().empty()) blocks.emplace_back();
    } else if (is_binary_name(line)) {
      blocks.back().push_back(line);
    }
  }
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (auto block = blocks.rbegin(); block != blocks.rend() && names.size() < max; ++block) {
    // The block's most recently used names that are new, up to the cap, in the order it used them.
    std::vector<std::string> picked;
    for (auto it = block->rbegin(); it != block->rend() && names.size() + picked.size() < max; ++it) {
      if (seen.insert(*it).second) picked.push_back(*it);
    }
    names.insert(names.end(), picked.rbegin(), picked.rend());
  }
  return names;
}

std::string ProgramCache::used_path() const {
  return fmt::format("{}/{}/used.txt", disk_.dir, disk_.device_key.empty() ? "unknown" : disk_.device_key);
}

void ProgramCache::note_use(const ProgramSource& source, const std::string& key) {
  {
    std::lock_guard lock(mutex_);
    if (!note_uses_ || !noted_.insert(key).second) return;
  }
  append_line(used_path(), std::filesystem::path(binary_path(source)).filename().string());
}

void ProgramCache::prefetch_one(const std::string& file_name) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<BinaryFile> file = read_binary(
      fmt::format("{}/{}/{}", disk_.dir, disk_.device_key.empty() ? "unknown" : disk_.device_key, file_name));
  if (!file) return;
  std::promise<cl::Program> promise;
  {
    std::lock_guard lock(mutex_);
    if (programs_.count(file->key)) return;  // requested, built or prefetched already
    programs_.emplace(file->key, promise.get_future().share());
  }
  try {
    promise.set_value(build_binary(file->payload, file->options));
    ++binary_loads_;
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      programs_.erase(file->key);
    }
    promise.set_exception(std::make_exception_ptr(PrefetchMiss{}));
  }
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  load_ns_ += ns;
  std::lock_guard lock(mutex_);
  build_ms_[file->key] = static_cast<double>(ns) * 1e-6;
}

void ProgramCache::prefetch_used_programs(unsigned threads) {
  {
    std::lock_guard lock(mutex_);
    if (disk_.dir.empty() || note_uses_) return;
    note_uses_ = true;
  }
  // The last process's programs first, in the order it used them (NVIDIA serialises the loads: the
  // first ones a step needs should not wait behind the last), then the process's before, each once.
  const std::string path = used_path();
  std::vector<std::string> lines;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  }
  const std::vector<std::string> names = prefetch_order(lines, kMaxPrefetch);
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) > kUsedFileLimit && !ec) {
    // Keep the recent names only, as one block in the order above (written beside, then renamed
    // over: a reader sees one or the other).
    const std::string temp = fmt::format("{}.tmp.{}", path, getpid());
    {
      std::ofstream out(temp);
      out << kUsedMarker << '\n';
      for (const std::string& name : names) out << name << '\n';
    }
    std::filesystem::rename(temp, path, ec);
    if (ec) std::filesystem::remove(temp, ec);
  }
  append_line(path, kUsedMarker);  // this process's block
  if (names.empty() || threads == 0) return;
  auto queue = std::make_shared<std::vector<std::string>>(std::move(names));
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(stop_every_prefetch); });
  {
    std::lock_guard lock(prefetching_mutex());
    prefetching().insert(this);
  }
  std::lock_guard lock(mutex_);
  for (unsigned t = 0; t < threads; ++t) {
    prefetchers_.emplace_back([this, queue, next] {
      for (std::size_t i = (*next)++; i < queue->size() && !stop_prefetch_; i = (*next)++) {
        try {
          prefetch_one((*queue)[i]);
        } catch (...) {
          // A prefetch is an optimisation: whatever fails here is built on demand.
        }
      }
    });
  }
}

bool ProgramCache::store_binary(const ProgramSource& source, const cl::Program& program) {
  if (disk_.dir.empty()) return false;
  std::vector<std::vector<unsigned char>> binaries;
  try {
    binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  } catch (const cl::Error&) {
    return false;  // a driver that offers no binaries: nothing to keep
  }
  if (binaries.size() != 1 || binaries[0].empty()) return false;
  const std::string path = binary_path(source);
  const std::string_view bytes(reinterpret_cast<const char*>(binaries[0].data()), binaries[0].size());
  const nlohmann::json header = {
      {"device_key", disk_.device_key}, {"driver", disk_.driver_version}, {"key", source.key()},
      {"options", source.options},      {"size", binaries[0].size()},     {"hash", hash_hex(bytes)}};
  // A unique temporary name per process and thread; rename() is atomic, so a concurrent reader
  // sees either the old entry or the complete new one.
  static std::atomic<unsigned> counter{0};
  const std::string temp = fmt::format("{}.tmp.{}.{}", path, getpid(), counter++);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  {
    std::ofstream out(temp, std::ios::binary);
    out << kMagic << header.dump() << '\n';
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::filesystem::remove(temp, ec);
      return false;  // a full or read-only disk costs the cache, never the build
    }
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) std::filesystem::remove(temp, ec);
  return !ec;
}

}  // namespace ocltune
