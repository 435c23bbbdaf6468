// Program sources (a #define prelude + kernel files), the in-memory cache of built programs and the
// on-disk cache of program binaries.
#pragma once

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "harness/cl.h"

namespace ocltune {

// The exact text handed to the OpenCL compiler: one `#define NAME VALUE` line per define, in order,
// then the kernels/ files in order. text() can be written out to reproduce a build by hand.
struct ProgramSource {
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> defines;
  // Source text a consumer brings itself (e.g. ocltune_torch's embedded kernels), after the files:
  // such programs are built and cached on disk like ocltune's own.
  std::string inline_source;
  std::string options;
  // NVIDIA only, empty elsewhere: the PTX architecture the program needs beyond the one NVIDIA's
  // OpenCL compiler targets, e.g. "sm_90a" for wgmma. The kernel writes such instructions behind
  // the comment marker "//sm_90a " so that the first build (.target sm_90) succeeds; the cache
  // then removes the markers, sets ".target sm_90a" and builds that PTX (see retarget_ptx()).
  std::string ptx_target;

  std::string text() const;
  // Identity of the build: hash of text() and options. The cache key.
  std::string key() const;
  // Hash of the kernel files alone: changes when a kernel is edited, not when a define does.
  std::string files_hash() const;
};

// The PTX `ptx` (a driver's program binary) with its "//<target> " markers removed and its
// .target directive set to `target`; nothing when it has no .target directive or no marked line
// (ProgramSource::ptx_target).
std::optional<std::string> retargeted_ptx(std::string ptx, const std::string& target);

// Where program binaries are kept unless told otherwise: $OCLTUNE_BINARY_CACHE ("off" or empty:
// nowhere), else $XDG_CACHE_HOME/ocltune/binaries, else ~/.cache/ocltune/binaries.
std::string default_binary_cache_dir();

// used.txt's marker line: the names after it, up to the next one, are one process's.
inline constexpr const char* kUsedMarker = "#";
// The binary names of used.txt's `lines` in the order a prefetch loads them: the newest process's
// block first, in the order that process used them, then the blocks before it; each name once, at
// most `max` (a block longer than what is left gives its most recently used names).
std::vector<std::string> prefetch_order(const std::vector<std::string>& lines, std::size_t max);

// Built programs of one context, keyed by ProgramSource::key(). Thread-safe; concurrent requests
// for the same program wait for one build; a failed build is remembered and rethrown.
//
// With a binary directory, a built program's binary is written to
// DIR/<device key>/<hash of driver version, source and options>.bin (temporary file + rename, so a
// reader never sees half a file), and a later build of the same program on the same device and
// driver loads it instead of compiling. An entry that is truncated, corrupt, or written for
// another device, driver or source is ignored and replaced.
class ProgramCache {
 public:
  struct DiskCache {
    std::string dir;  // empty: no on-disk cache
    std::string device_key;
    std::string driver_version;
  };

  ProgramCache(cl::Context context, cl::Device device, DiskCache disk = {});
  ~ProgramCache();  // stops and joins the prefetch threads
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;

  // With an on-disk cache: writes down each program a get() returns (once per process) in
  // DIR/<device key>/used.txt, and loads the binaries of the programs earlier processes used (in
  // prefetch_order) on `threads` background threads, so that a new process finds them built (a get()
  // of a program in flight waits for it; one whose binary fails to load builds as before). For the
  // runtime: on an H100, resnet50's first step with the binary cache carried over spent 17 s loading
  // 80 programs one after the other (NVIDIA compiles PTX at load). Idempotent.
  void prefetch_used_programs(unsigned threads);
  // Stops the prefetch threads after the loads in flight and joins them (also at exit).
  void stop_prefetch();

  // The built program; throws BuildError with the build log when it does not compile.
  cl::Program get(const ProgramSource& source);
  bool contains(const ProgramSource& source) const;
  // Built in memory (or building), or its binary is in the on-disk cache (loading it skips the
  // compiler): what a caller choosing between a ready program and one to compile asks.
  bool available(const ProgramSource& source) const;
  // Milliseconds the build of this program took (compiling or loading its binary); 0 when it is
  // not built yet.
  double build_ms(const ProgramSource& source) const;

  double compile_seconds() const { return compile_ns_.load() * 1e-9; }
  int builds() const { return builds_.load(); }              // compiled from source
  int binary_loads() const { return binary_loads_.load(); }  // loaded from the on-disk cache
  // Time spent reading and building binaries from the on-disk cache (misses included), and writing
  // them: asking a driver for a program's binary may compile every kernel of it (PoCL does).
  double load_seconds() const { return load_ns_.load() * 1e-9; }
  double store_seconds() const { return store_ns_.load() * 1e-9; }
  int binary_stores() const { return binary_stores_.load(); }

 private:
  cl::Program build(const ProgramSource& source);
  cl::Program compile(const ProgramSource& source, const std::string& text);
  cl::Program retarget_ptx(const ProgramSource& source, const cl::Program& built);
  std::string binary_path(const ProgramSource& source) const;
  std::optional<cl::Program> load_binary(const ProgramSource& source);
  // A binary file's program key, options and payload, when its header names this device and driver
  // and its payload is whole.
  struct BinaryFile {
    std::string key, options;
    std::vector<unsigned char> payload;
  };
  std::optional<BinaryFile> read_binary(const std::string& path) const;
  cl::Program build_binary(const std::vector<unsigned char>& payload, const std::string& options);
  void note_use(const ProgramSource& source, const std::string& key);  // key: source.key()
  void prefetch_one(const std::string& file_name);
  std::string used_path() const;
  bool store_binary(const ProgramSource& source, const cl::Program& program);  // false: nothing kept

  cl::Context context_;
  cl::Device device_;
  DiskCache disk_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<cl::Program>> programs_;
  std::map<std::string, double> build_ms_;
  std::atomic<long long> compile_ns_{0};
  std::atomic<int> builds_{0};
  std::atomic<int> binary_loads_{0};
  std::atomic<long long> load_ns_{0};
  std::atomic<long long> store_ns_{0};
  std::atomic<int> binary_stores_{0};
  // The prefetch (prefetch_used_programs): keys of the programs a get() returned and noted, and the
  // threads.
  bool note_uses_ = false;
  std::set<std::string> noted_;
  std::atomic<bool> stop_prefetch_{false};
  std::vector<std::thread> prefetchers_;
};

}  // namespace ocltune
