// Tuned rows as reviewable text: the JSON-lines form of shipped databases (db/shipped/*.jsonl).
#include "db/jsonl.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ocltune {
namespace {

using Ordered = nlohmann::ordered_json;
using nlohmann::json;

constexpr const char* kFormat = "ocltune-tuned-rows";
// The version of the rows this format carries (devices and best). Schema 3 changed only runs and
// measurements, which are never exported, so files stay at 2 and older tools keep reading them.
constexpr std::int64_t kRowsVersion = 2;

// Text read from a database file need not be UTF-8; JSON must be. Invalid bytes become U+FFFD
// (such a row fails validation anyway) instead of an exception from the serializer.
std::string line(const Ordered& o) { return o.dump(-1, ' ', false, Ordered::error_handler_t::replace) + "\n"; }
constexpr std::size_t kMaxLine = 1 << 20;
constexpr std::size_t kMaxString = 4096;

// Parses a stored JSON text for the nested form; text that is not JSON stays a string (and is then
// refused by whoever validates it), so writing never fails.
Ordered nested(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return text;
  return Ordered::parse(j.dump(-1, ' ', false, json::error_handler_t::replace));
}

void put_optional(Ordered& o, const char* name, const std::optional<double>& v) {
  if (v) o[name] = *v;
}

// Reads the fields of one line, refusing anything unexpected.
class Fields {
 public:
  Fields(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& what) const { throw DatabaseError(fmt::format("{}: {}", where_, what)); }

  const json& get(const char* name) {
    seen_.insert(name);
    if (!object_.contains(name)) fail(fmt::format("missing field '{}'", name));
    return object_.at(name);
  }
  std::string text(const char* name) {
    const json& v = get(name);
    if (!v.is_string()) fail(fmt::format("field '{}' must be a string", name));
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > kMaxString) fail(fmt::format("field '{}' is longer than {} bytes", name, kMaxString));
    return s;
  }
  std::int64_t integer(const char* name) {
    const json& v = get(name);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)) {
      fail(fmt::format("field '{}' must be a 64-bit integer", name));
    }
    return v.get<std::int64_t>();
  }
  double number(const char* name) {
    const json& v = get(name);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      fail(fmt::format("field '{}' must be a finite number", name));
    return v.get<double>();
  }
  std::optional<double> optional_number(const char* name) {
    if (!object_.contains(name)) return std::nullopt;
    return number(name);
  }
  // A nested object, stored as its compact JSON text.
  std::string object_text(const char* name) {
    const json& v = get(name);
    if (!v.is_object()) fail(fmt::format("field '{}' must be a JSON object", name));
    std::string text = v.dump();
    if (text.size() > kMaxString) fail(fmt::format("field '{}' is longer than {} bytes", name, kMaxString));
    return text;
  }
  void no_others() const {
    for (const auto& item : object_.items()) {
      if (!seen_.count(item.key())) fail(fmt::format("unknown field '{}'", item.key().substr(0, 64)));
    }
  }

 private:
  const json& object_;
  std::string where_;
  std::set<std::string> seen_;
};

DeviceRow parse_device(Fields& f) {
  DeviceRow d;
  d.device_key = f.text("device_key");
  d.platform_name = f.text("platform_name");
  d.platform_version = f.text("platform_version");
  d.device_name = f.text("device_name");
  d.vendor = f.text("vendor");
  d.driver_version = f.text("driver_version");
  d.device_type = f.text("device_type");
  d.compute_units = f.integer("compute_units");
  d.clock_mhz = f.integer("clock_mhz");
  d.global_mem_bytes = f.integer("global_mem_bytes");
  d.local_mem_bytes = f.integer("local_mem_bytes");
  d.max_work_group_size = f.integer("max_work_group_size");
  d.copy_bandwidth_gbs = f.optional_number("copy_bandwidth_gbs");
  d.peak_gflops = f.optional_number("peak_gflops");
  d.first_seen = f.text("first_seen");
  d.last_seen = f.text("last_seen");
  return d;
}

BestRow parse_best(Fields& f) {
  BestRow b;
  b.device_key = f.text("device_key");
  b.op = f.text("op");
  b.dtype = f.text("dtype");
  b.math = f.text("math");
  b.shape_key = f.text("shape_key");
  b.shape_json = f.object_text("shape");
  b.params_json = f.object_text("params");
  b.median_ns = f.number("median_ns");
  b.min_ns = f.number("min_ns");
  b.max_ns = f.number("max_ns");
  b.spread = f.number("spread");
  b.gflops = f.optional_number("gflops");
  b.gbs = f.optional_number("gbs");
  b.default_median_ns = f.optional_number("default_median_ns");
  b.confidence = f.optional_number("confidence");
  b.source_hash = f.text("source_hash");
  b.provenance = f.object_text("provenance");
  b.updated_at = f.text("updated_at");
  return b;
}

}  // namespace

std::string to_jsonl(const TunedRows& rows) {
  std::string out = line(Ordered{{"format", kFormat}, {"schema_version", kRowsVersion}});
  std::vector<const DeviceRow*> devices;
  for (const DeviceRow& d : rows.devices) devices.push_back(&d);
  std::sort(devices.begin(), devices.end(), [](auto* a, auto* b) { return a->device_key < b->device_key; });
  for (const DeviceRow* d : devices) {
    Ordered o = {{"table", "devices"},
                 {"device_key", d->device_key},
                 {"platform_name", d->platform_name},
                 {"platform_version", d->platform_version},
                 {"device_name", d->device_name},
                 {"vendor", d->vendor},
                 {"driver_version", d->driver_version},
                 {"device_type", d->device_type},
                 {"compute_units", d->compute_units},
                 {"clock_mhz", d->clock_mhz},
                 {"global_mem_bytes", d->global_mem_bytes},
                 {"local_mem_bytes", d->local_mem_bytes},
                 {"max_work_group_size", d->max_work_group_size}};
    put_optional(o, "copy_bandwidth_gbs", d->copy_bandwidth_gbs);
    put_optional(o, "peak_gflops", d->peak_gflops);
    o["first_seen"] = d->first_seen;
    o["last_seen"] = d->last_seen;
    out += line(o);
  }
  std::vector<const BestRow*> best;
  for (const BestRow& b : rows.best) best.push_back(&b);
  std::sort(best.begin(), best.end(), [](auto* a, auto* b) {
    return std::tie(a->device_key, a->op, a->dtype, a->math, a->shape_key) <
           std::tie(b->device_key, b->op, b->dtype, b->math, b->shape_key);
  });
  for (const BestRow* b : best) {
    Ordered o = {{"table", "best"},
                 {"device_key", b->device_key},
                 {"op", b->op},
                 {"dtype", b->dtype},
                 {"math", b->math},
                 {"shape_key", b->shape_key},
                 {"shape", nested(b->shape_json)},
                 {"params", nested(b->params_json)},
                 {"median_ns", b->median_ns},
                 {"min_ns", b->min_ns},
                 {"max_ns", b->max_ns},
                 {"spread", b->spread}};
    put_optional(o, "gflops", b->gflops);
    put_optional(o, "gbs", b->gbs);
    put_optional(o, "default_median_ns", b->default_median_ns);
    put_optional(o, "confidence", b->confidence);
    o["source_hash"] = b->source_hash;
    o["provenance"] = nested(b->provenance);
    o["updated_at"] = b->updated_at;
    out += line(o);
  }
  return out;
}

TunedRows parse_jsonl(std::string_view text, const std::string& name) {
  TunedRows rows;
  std::size_t line_number = 0;
  bool header = false;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    const std::string where = fmt::format("{}:{}", name, line_number);
    if (line.size() > kMaxLine) throw DatabaseError(fmt::format("{}: line longer than {} bytes", where, kMaxLine));
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw DatabaseError(fmt::format("{}: not a JSON object", where));
    Fields f(j, where);
    if (!header) {
      if (f.text("format") != kFormat)
        f.fail(fmt::format("not an ocltune tuned-rows file (format must be '{}')", kFormat));
      const std::int64_t version = f.integer("schema_version");
      if (version > kRowsVersion) {
        f.fail(fmt::format("schema version {} is newer than this ocltune understands ({}); upgrade ocltune", version,
                           kRowsVersion));
      }
      if (version < 1) f.fail(fmt::format("invalid schema version {}", version));
      f.no_others();
      header = true;
      continue;
    }
    const std::string table = f.text("table");
    if (table == "devices") {
      rows.devices.push_back(parse_device(f));
    } else if (table == "best") {
      rows.best.push_back(parse_best(f));
    } else {
      f.fail(fmt::format("unknown table '{}'", table.substr(0, 64)));
    }
    f.no_others();
  }
  if (!header) throw DatabaseError(fmt::format("{}: empty file, not an ocltune tuned-rows file", name));
  return rows;
}

}  // namespace ocltune
