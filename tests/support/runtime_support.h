// Helpers of the runtime suites: databases with chosen rows, and GEMM calls checked on the host.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/database.h"
#include "ops/gemm/gemm_problem.h"
#include "runtime/gemm.h"
#include "runtime/runtime.h"

namespace ocltune::testing {

// A best row for `device_key` at `shape` with `config`.
BestRow gemm_row(const std::string& device_key, const GemmShape& shape, const Config& config, double median_ns = 1000);

// Writes a database holding `devices` and `rows` (created fresh at `path`); returns `path`.
std::string write_database(const std::string& path, const std::vector<DeviceInfo>& devices,
                           const std::vector<BestRow>& rows);

// A database of schema version 1 (tests/data/schema_v1.sql) holding `devices` and `rows`.
std::string write_version1_database(const std::string& path, const std::vector<DeviceInfo>& devices,
                                    const std::vector<BestRow>& rows);

// The bytes of a file, to show that something was not modified.
std::string file_bytes(const std::string& path);

// A device of the same class (vendor and type) as `device`, with another key.
DeviceInfo sibling_device(const DeviceInfo& device);

// Options that read only the named files (empty: no such layer) and collect warnings.
struct LogSink {
  std::mutex mutex;
  std::vector<std::string> lines;
  bool contains(const std::string& text);
  std::string all();
};
RuntimeOptions isolated(const std::string& user_db, const std::string& system_db, std::shared_ptr<LogSink> sink);

// Configurations distinct from the built-in one, valid for every shape of at least 16 x 16.
Config small_tile_config();   // 16x16 tiles of 2x2 per work-item, nothing staged
Config staged_tile_config();  // 16x16 tiles of 4x1 per work-item, A and B staged

// A GEMM with random operands in its own buffers (padding, offsets and batch strides as `layout`),
// and the float64 check of its result.
class HostGemm {
 public:
  HostGemm(const cl::Context& context, const GemmShape& shape, const GemmLayout& layout = {}, std::uint64_t seed = 1);
  const GemmCall& call() const { return call_; }
  GemmCall& call() { return call_; }
  // Resets C to its initial contents.
  void reset(cl::CommandQueue& queue);
  // Reads C back after the op and returns the first mismatch ("" if every element is within
  // tolerance and nothing outside C's matrices changed). `extra_tolerance` (relative to the
  // magnitude of the terms) admits a library that accumulates in the storage type.
  std::string check(cl::CommandQueue& queue, double extra_tolerance = 0) const;

 private:
  GemmCall call_;
  std::vector<float> a_, b_, c_, bias_;
  cl::Buffer a_buf_, b_buf_, c_buf_, bias_buf_;
};

}  // namespace ocltune::testing
