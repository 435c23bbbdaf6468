// Program sources (a #define prelude + kernel files) and the in-memory cache of built programs.
#include "harness/program.h"

#include <chrono>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

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
  return out;
}

std::string ProgramSource::key() const { return hash_hex(text() + '\x1f' + options); }

std::string ProgramSource::files_hash() const {
  std::string all;
  for (const std::string& file : files) {
    all += file;
    all += '\x1f';
    all += kernel_file(file);
  }
  return hash_hex(all);
}

ProgramCache::ProgramCache(cl::Context context, cl::Device device)
    : context_(std::move(context)), device_(std::move(device)) {}

bool ProgramCache::contains(const ProgramSource& source) const {
  std::lock_guard lock(mutex_);
  return programs_.count(source.key()) != 0;
}

cl::Program ProgramCache::get(const ProgramSource& source) {
  const std::string key = source.key();
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
    try {
      promise.set_value(build(source));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return future.get();
}

cl::Program ProgramCache::build(const ProgramSource& source) {
  const auto start = std::chrono::steady_clock::now();
  const std::string text = source.text();
  // OCLTUNE_DUMP_SOURCES=DIR writes the exact text of every build, to reproduce it by hand.
  if (const char* dir = std::getenv("OCLTUNE_DUMP_SOURCES"); dir && *dir) {
    std::ofstream(fmt::format("{}/{}.cl", dir, source.key())) << "// options: " << source.options << "\n" << text;
  }
  cl::Program program(context_, text);
  try {
    // -w: driver-side warnings (e.g. "loop not unrolled") would interleave with our output; errors
    // still reach the build log, and OCLTUNE_DUMP_SOURCES reproduces a build with warnings.
    // OCLTUNE_BUILD_OPTIONS adds driver options to every build (e.g. -cl-nv-verbose, whose register
    // report OCLTUNE_BUILD_LOG=1 prints); they are not part of the cache key.
    const char* extra = std::getenv("OCLTUNE_BUILD_OPTIONS");
    program.build({device_}, ("-w " + source.options + " " + (extra ? extra : "")).c_str());
    // With OCLTUNE_DUMP_SOURCES the driver's binary goes next to the source (PTX on NVIDIA: read
    // it, or assemble it with ptxas/nvdisasm, to see what the compiler made of a kernel).
    if (const char* dir = std::getenv("OCLTUNE_DUMP_SOURCES"); dir && *dir) {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (!binaries.empty()) {
        std::ofstream(fmt::format("{}/{}.bin", dir, source.key()), std::ios::binary)
            .write(reinterpret_cast<const char*>(binaries[0].data()), static_cast<std::streamsize>(binaries[0].size()));
      }
    }
    if (const char* show = std::getenv("OCLTUNE_BUILD_LOG"); show && *show == '1') {
      for (const auto& [dev, log] : program.getBuildInfo<CL_PROGRAM_BUILD_LOG>()) {
        if (!log.empty()) fmt::print(stderr, "build log {}:\n{}\n", source.key(), log);
      }
    }
  } catch (const cl::BuildError& e) {
    std::string log;
    for (const auto& [dev, device_log] : e.getBuildLog()) log += device_log;
    compile_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    throw BuildError(e.err(), log);
  } catch (const cl::Error& e) {
    throw ClError(e);
  }
  compile_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  ++builds_;
  return program;
}

}  // namespace ocltune
