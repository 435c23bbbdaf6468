// Helpers of the runtime suites: databases with chosen rows, and GEMM calls checked on the host.
#include "tests/support/runtime_support.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/storage.h"
#include "db/sqlite.h"
#include "harness/verify.h"

namespace ocltune::testing {

BestRow gemm_row(const std::string& device_key, const GemmShape& shape, const Config& config, double median_ns) {
  BestRow r;
  r.device_key = device_key;
  r.op = "gemm";
  r.dtype = dtype_name(shape.dtype);
  r.math = math_name(shape.math);
  r.shape_key = shape.key();
  r.shape_json = shape.to_json().dump();
  r.params_json = to_json(config).dump();
  r.median_ns = r.min_ns = r.max_ns = median_ns;
  r.source_hash = "test";
  return r;
}

std::string write_database(const std::string& path, const std::vector<DeviceInfo>& devices,
                           const std::vector<BestRow>& rows) {
  Database db = Database::open(path);
  for (const DeviceInfo& d : devices) db.upsert_device(d);
  for (const BestRow& r : rows) db.update_best_if_faster(r);
  return path;
}

std::string write_version1_database(const std::string& path, const std::vector<DeviceInfo>& devices,
                                    const std::vector<BestRow>& rows) {
  sql::Connection c(path, false);
  c.exec(file_bytes(OCLTUNE_SOURCE_DIR "/tests/data/schema_v1.sql"));
  c.exec("INSERT INTO schema_version(version) VALUES (1)");
  for (const DeviceInfo& d : devices) {
    sql::Statement s(c, R"(INSERT INTO devices(device_key, platform_name, platform_version, device_name, vendor,
        driver_version, device_type, compute_units, clock_mhz, global_mem_bytes, local_mem_bytes, max_work_group_size,
        first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'))");
    s.bind(1, d.key()).bind(2, d.platform_name).bind(3, d.platform_version).bind(4, d.name).bind(5, d.vendor);
    s.bind(6, d.driver_version).bind(7, device_type_name(d.type)).bind(8, static_cast<std::int64_t>(d.compute_units));
    s.bind(9, static_cast<std::int64_t>(d.local_mem_bytes))
        .bind(10, static_cast<std::int64_t>(d.max_work_group_size))
        .run();
  }
  c.exec(
      R"(INSERT INTO runs(device_key, started_at, tool_version, host) VALUES ('-', '2024-01-01T00:00:00Z', '0.0.9', 'oldhost'))");
  for (const BestRow& r : rows) {
    sql::Statement s(c, R"(INSERT INTO best(device_key, op, dtype, math, shape_key, shape_json, params_json, median_ns,
        min_ns, max_ns, spread, source_hash, run_id, provenance, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 'h', 1, ?, '2024-01-01T00:00:00Z'))");
    s.bind(1, r.device_key).bind(2, r.op).bind(3, r.dtype).bind(4, r.math).bind(5, r.shape_key).bind(6, r.shape_json);
    s.bind(7, r.params_json).bind(8, r.median_ns).bind(9, r.min_ns).bind(10, r.max_ns);
    s.bind(11, R"({"device":"old device"})").run();
  }
  return path;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

DeviceInfo sibling_device(const DeviceInfo& device) {
  DeviceInfo d = device;
  d.name += " (another model)";
  d.compute_units += 7;
  return d;
}

bool LogSink::contains(const std::string& text) {
  std::lock_guard lock(mutex);
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string LogSink::all() {
  std::lock_guard lock(mutex);
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

RuntimeOptions isolated(const std::string& user_db, const std::string& system_db, std::shared_ptr<LogSink> sink) {
  RuntimeOptions o;
  o.user_db = user_db;
  o.system_db = system_db;
  o.use_user_db = !user_db.empty();
  o.use_system_db = !system_db.empty();
  o.gemm_fallback = "builtin";
  o.check_record = "off";  // every runtime checks afresh, whatever earlier test runs checked
  o.log = [sink](const std::string& line) {
    std::lock_guard lock(sink->mutex);
    sink->lines.push_back(line);
  };
  return o;
}

Config small_tile_config() {
  return {{"MWG", 16}, {"NWG", 16}, {"KWG", 8}, {"WPTM", 2}, {"WPTN", 2}, {"VWM", 1}, {"VWN", 1},
          {"SA", 0},   {"SB", 0},   {"VWL", 1}, {"DB", 0},   {"KWI", 2},  {"WTN", 0}};
}

Config staged_tile_config() {
  return {{"MWG", 16}, {"NWG", 16}, {"KWG", 16}, {"WPTM", 4}, {"WPTN", 1}, {"VWM", 1}, {"VWN", 1},
          {"SA", 1},   {"SB", 1},   {"VWL", 1},  {"DB", 0},   {"KWI", 8},  {"WTN", 0}};
}

HostGemm::HostGemm(const cl::Context& context, const GemmShape& shape, const GemmLayout& layout, std::uint64_t seed)
    : call_{.shape = shape} {
  GemmCall& c = call_;
  c.lda = shape.packed_lda() + layout.lda_pad;
  c.ldb = shape.packed_ldb() + layout.ldb_pad;
  c.ldc = shape.packed_ldc() + layout.ldc_pad;
  c.a_offset = layout.a_offset;
  c.b_offset = layout.b_offset;
  c.c_offset = layout.c_offset;
  c.stride_a = shape.rows_a() * c.lda + layout.stride_pad;
  c.stride_b = shape.rows_b() * c.ldb + layout.stride_pad;
  c.stride_c = shape.m * c.ldc + layout.stride_pad;
  const auto size = [&](std::int64_t offset, std::int64_t stride, std::int64_t rows, std::int64_t ld) {
    return static_cast<std::size_t>(offset + (shape.batch - 1) * stride + rows * ld + 16);
  };
  a_.resize(size(c.a_offset, c.stride_a, shape.rows_a(), c.lda));
  b_.resize(size(c.b_offset, c.stride_b, shape.rows_b(), c.ldb));
  c_.resize(size(c.c_offset, c.stride_c, shape.m, c.ldc));
  fill_uniform(a_, seed);
  fill_uniform(b_, seed + 1);
  fill_uniform(c_, seed + 2);
  for (std::vector<float>* v : {&a_, &b_, &c_}) round_to_storage(*v, shape.dtype);  // what the buffers hold
  a_buf_ = make_buffer(context, a_, shape.dtype, CL_MEM_READ_ONLY);
  b_buf_ = make_buffer(context, b_, shape.dtype, CL_MEM_READ_ONLY);
  c_buf_ = make_buffer(context, c_, shape.dtype);
  c.a = a_buf_();
  c.b = b_buf_();
  c.c = c_buf_();
  if (shape.bias) {  // behind the layout's offset
    c.bias_offset = layout.bias_offset;
    bias_.resize(static_cast<std::size_t>(c.bias_offset + shape.n));
    fill_uniform(bias_, seed + 3);
    round_to_storage(bias_, shape.dtype);
    bias_buf_ = make_buffer(context, bias_, shape.dtype, CL_MEM_READ_ONLY);
    c.bias = bias_buf_();
  }
}

void HostGemm::reset(cl::CommandQueue& queue) { write_buffer(queue, c_buf_, c_, call_.shape.dtype); }

std::string HostGemm::check(cl::CommandQueue& queue, double extra_tolerance) const {
  const GemmCall& c = call_;
  const GemmShape& s = c.shape;
  const std::vector<float> after = read_buffer(queue, c_buf_, c_.size(), s.dtype);
  std::vector<std::uint8_t> written(c_.size(), 0);
  double tolerance = (8.0 * std::sqrt(static_cast<double>(s.k)) + 4.0) * 0x1.0p-24;
  if (s.math == MathMode::kTf32)
    tolerance += 8.0 * 0x1.0p-10 / std::sqrt(static_cast<double>(s.k));  // as GemmProblem's verification
  if (s.dtype != DType::kFp32) tolerance += dtype_roundoff(s.dtype);     // C's rounding to its storage
  tolerance += extra_tolerance;
  for (std::int64_t bt = 0; bt < s.batch; ++bt) {
    for (std::int64_t i = 0; i < s.m; ++i) {
      for (std::int64_t j = 0; j < s.n; ++j) {
        double dot = 0, magnitude = 0;
        for (std::int64_t p = 0; p < s.k; ++p) {
          const double x =
              a_[static_cast<std::size_t>(c.a_offset + bt * c.stride_a + (s.trans_a ? p * c.lda + i : i * c.lda + p))];
          const double y =
              b_[static_cast<std::size_t>(c.b_offset + bt * c.stride_b + (s.trans_b ? j * c.ldb + p : p * c.ldb + j))];
          dot += x * y;
          magnitude += std::abs(x * y);
        }
        const std::size_t at = static_cast<std::size_t>(c.c_offset + bt * c.stride_c + i * c.ldc + j);
        written[at] = 1;
        const double bias = s.bias ? static_cast<double>(bias_[static_cast<std::size_t>(c.bias_offset + j)]) : 0.0;
        const ActivatedValue y =
            activate_reference(s.act, s.alpha * dot + s.beta * static_cast<double>(c_[at]) + bias,
                               std::abs(s.alpha) * magnitude + std::abs(s.beta * c_[at]) + std::abs(bias) + 1e-30);
        const double expected = y.value, scale = y.scale;
        if (!(std::abs(after[at] - expected) <= tolerance * scale)) {
          return fmt::format("C[batch {}][{}][{}] = {} but the reference is {}", bt, i, j, after[at], expected);
        }
      }
    }
  }
  for (std::size_t i = 0; i < c_.size(); ++i) {
    if (!written[i] && std::memcmp(&after[i], &c_[i], 4) != 0) return fmt::format("element {} outside C changed", i);
  }
  return "";
}

}  // namespace ocltune::testing
