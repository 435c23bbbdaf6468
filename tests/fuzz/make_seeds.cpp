// Writes the seed inputs of the fuzz targets under DIR/{shape,tuned_rows,db_file}/:
//   build/tests/fuzz_make_seeds tests/fuzz/corpus
// Small on purpose: libFuzzer grows the corpus from these; what it finds is kept beside them.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

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
  // One shapes file per family (the examples of docs/CLI.md), and shapes too large for any device.
  write(dir / "shape/families.json",
        R"([{"op":"conv2d","n":1,"c":3,"h":17,"w":19,"k":8,"r":3,"s":3,"pad_h":1,"pad_w":1,"stride_h":2,"stride_w":2},
            {"op":"reduce","dims":[32,256,56,56],"axes":[0,2,3],"kind":"mean","dtype":"fp16"},
            {"op":"reduce","dims":[512,30522],"axes":[1],"kind":"argmax","keepdim":true},
            {"op":"softmax","dims":[8,12,512,512],"axis":3,"log":false},
            {"op":"norm","kind":"layer_norm","dims":[8,512,768],"axis":2,"eps":1e-12},
            {"op":"norm","kind":"batch_norm_backward","dims":[32,256,56,56],"dtype":"bf16"},
            {"op":"pool","kind":"max","n":32,"c":64,"h":112,"w":112,"kh":3,"kw":3,"sh":2,"sw":2,"ph":1,"pw":1},
            {"op":"elementwise","dtype":"fp16","x":[4096,3072],"steps":[{"op":"add","tensor":[3072]},{"op":"gelu"}]},
            {"op":"elementwise","x":{"dims":[8,12,512,64],"strides":[393216,64,768,1]}}])");
  write(dir / "shape/too_large.json",
        R"([{"op":"gemm","m":70000,"n":70000,"k":64},{"op":"gemm","m":1024,"n":1024,"k":1024,"batch":65535},
            {"op":"reduce","dims":[2000000000,1],"axes":[1],"kind":"argmax"},
            {"op":"norm","kind":"layer_norm_backward","dims":[2000000000,1],"axis":1}])");
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
    // A run and its measurements, as a tuner leaves them: ok, failed, crashed, one pending (its
    // process killed mid-evaluation) and one outside the space (a hostile or stale row).
    db.upsert_device(fuzz::device());
    RunRow run;
    run.device_key = fuzz::device().key();
    run.tool_version = "seed";
    run.host = "seed-host";
    run.pid = 999999;
    run.process_start = "boot/pid:[1]/12345";
    const std::int64_t run_id = db.begin_run(run);
    const GemmShape shape{.m = 64, .n = 64, .k = 64};
    for (const auto& [params, status] :
         std::vector<std::pair<std::string, std::string>>{{to_string(gemm_default_config()), "ok"},
                                                          {"KWG=16,MWG=64,NWG=64,SA=1", "compile_error"},
                                                          {"KWG=32,MWG=64,NWG=64", "crash"},
                                                          {"KWG=16,MWG=32,NWG=32", kPendingStatus},
                                                          {"KWG=16,MWG=3,NWG=64,VWM=3", "ok"}}) {
      MeasurementRow m;
      m.run_id = run_id;
      m.device_key = fuzz::device().key();
      m.op = "gemm";
      m.dtype = "fp32";
      m.shape_key = shape.key();
      m.shape_json = shape.to_json().dump();
      m.source_hash = "seed";
      m.params = params;
      m.status = status;
      if (status == "ok") m.median_ns = m.min_ns = m.max_ns = 100;
      m.created_at = "2026-01-01T00:00:00Z";
      db.add_measurement(m);
    }
    db.connection().exec("PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM");
  }
  return 0;
}
