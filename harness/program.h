// Program sources (a #define prelude + kernel files) and the in-memory cache of built programs.
#pragma once

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "harness/cl.h"

namespace ocltune {

// The exact text handed to the OpenCL compiler: one `#define NAME VALUE` line per define, in order,
// then the kernels/ files in order. text() can be written out to reproduce a build by hand.
struct ProgramSource {
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> defines;
  std::string options;

  std::string text() const;
  // Identity of the build: hash of text() and options. The cache key.
  std::string key() const;
  // Hash of the kernel files alone: changes when a kernel is edited, not when a define does.
  std::string files_hash() const;
};

// Built programs of one context, keyed by ProgramSource::key(). Thread-safe; concurrent requests
// for the same program wait for one build; a failed build is remembered and rethrown.
class ProgramCache {
 public:
  ProgramCache(cl::Context context, cl::Device device);

  // The built program; throws BuildError with the build log when it does not compile.
  cl::Program get(const ProgramSource& source);
  bool contains(const ProgramSource& source) const;

  double compile_seconds() const { return compile_ns_.load() * 1e-9; }
  int builds() const { return builds_.load(); }

 private:
  cl::Program build(const ProgramSource& source);

  cl::Context context_;
  cl::Device device_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<cl::Program>> programs_;
  std::atomic<long long> compile_ns_{0};
  std::atomic<int> builds_{0};
};

}  // namespace ocltune
