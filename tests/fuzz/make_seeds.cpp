// Writes the seed inputs of the fuzz targets under DIR/{shape,tuned_rows,db_file}/:
//   build/tests/fuzz_make_seeds tests/fuzz/corpus
// Small on purpose: libFuzzer grows the corpus from these; what it finds is kept beside them.
#include <filesystem>
#include <fstream>
#include <string>

#include "db/jsonl.h"
#include "db/sqlite.h"
#include "db/transfer.h"
#include "ops/gemm/gemm.h"
#include "tests/fuzz/fuzz_device.h"

namespace {

using namespace ocltune;
namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

BestRow row(const GemmShape& shape, const Config& config, double ns) {
  BestRow r;
  r.device_key = fuzz::device().key();
  r.op = "gemm";
  r.dtype = "fp32";
  r.shape_key = shape.key();
  r.shape_json = shape.to_json().dump();
  r.params_json = to_json(config).dump();
  r.median_ns = r.min_ns = r.max_ns = ns;
  r.source_hash = "seed";
  r.provenance = R"({"host":"seed"})";
  r.updated_at = "2026-01-01T00:00:00Z";
  return r;
}

TunedRows rows() {
  TunedRows t;
  DeviceRow d;
  const DeviceInfo& f = fuzz::device();
  d.device_key = f.key();
  d.platform_name = f.platform_name;
  d.platform_version = f.platform_version;
  d.device_name = f.name;
  d.vendor = f.vendor;
  d.driver_version = f.driver_version;
  d.device_type = device_type_name(f.type);
  d.compute_units = f.compute_units;
  d.local_mem_bytes = static_cast<std::int64_t>(f.local_mem_bytes);
  d.max_work_group_size = static_cast<std::int64_t>(f.max_work_group_size);
  d.first_seen = d.last_seen = "2026-01-01T00:00:00Z";
  t.devices = {d};
  Config small = gemm_default_config();
  small["MWG"] = 16;
  small["NWG"] = 16;
  small["WPTM"] = 2;
  small["WPTN"] = 2;
  t.best = {row({.m = 64, .n = 64, .k = 64}, gemm_default_config(), 100),
            row({.m = 8, .n = 1000, .k = 512, .trans_b = true}, small, 50),
            row({.m = 19, .n = 23, .k = 29, .batch = 3, .trans_a = true}, small, 70)};
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const fs::path dir = argv[1];
  // Shapes and configurations.
  write(dir / "shape/gemm.json", R"({"op":"gemm","m":64,"n":64,"k":64})");
  write(dir / "shape/gemm_full.json",
        R"({"op":"gemm","m":8,"n":1000,"k":512,"batch":12,"trans_a":true,"trans_b":1,"alpha":1.5,"beta":-1})");
  write(dir / "shape/list.json", R"([{"op":"gemm","m":1,"n":1,"k":1},{"op":"gemm","m":2147483647,"n":3,"k":4}])");
  write(dir / "shape/bad.json", R"({"op":"gemm","m":-4,"n":"7","k":5.5,"evil":[1,{"x":null}]})");
  write(dir / "shape/config.txt", "KWG=16,MWG=64,NWG=64,SA=1");
  write(dir / "shape/config.json", R"({"MWG":16,"NWG":-9223372036854775808,"KWG":18446744073709551615})");
  // Tuned rows as text, valid and hostile.
  const TunedRows t = rows();
  const std::string text = to_jsonl(t);
  write(dir / "tuned_rows/valid.jsonl", text);
  std::string hostile = text;
  hostile.replace(hostile.find("\"MWG\":32"), 8, "\"MWG\":7");
  write(dir / "tuned_rows/bad_value.jsonl", hostile);
  // Database files: small pages keep them a few kilobytes.
  const fs::path db_path = dir / "db_file/valid.db";
  fs::create_directories(db_path.parent_path());
  fs::remove(db_path);
  {
    Database db = Database::open(db_path.string());
    merge_rows(db, t, nullptr, "seed");
    db.connection().exec("PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM");
  }
  return 0;
}
