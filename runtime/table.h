// The runtime's in-memory view of the database layers: validated rows for one device and its class.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "db/database.h"
#include "db/jsonl.h"
#include "harness/device.h"
#include "runtime/tuned_rows.h"

namespace ocltune {

// One usable tuned configuration.
struct TunedEntry {
  std::string layer;  // which database it came from: "system" or "user"
  std::string path;   // that database's file
  std::string device_key, op, dtype, math, shape_key;
  Config config;
  ShapeInfo shape;
  double median_ns = 0;
  bool same_device = false;  // measured on this device key (else on a device of the same class)
  // Configurations its problem was chosen from (provenance "evaluations"); nullopt: unknown.
  std::optional<std::int64_t> evaluations;
};

class TunedTable {
 public:
  using Log = std::function<void(const std::string&)>;

  explicit TunedTable(DeviceInfo device) : device_(std::move(device)) {}

  // Adds the best rows of `db` that can serve this device: those of its device key and those of
  // devices of its class (DeviceInfo::device_class). Each is validated (runtime/tuned_rows.h) against
  // this device; a refused row is reported through `log` (naming the table and row) and skipped.
  // A later layer's row replaces an earlier one's of the same key: add the system layer first.
  void add_layer(Database& db, const std::string& layer, const Log& log);
  // The same for rows already read (`path`: the file they came from, for messages and sources).
  void add_rows(const TunedRows& rows, const std::string& layer, const std::string& path, const Log& log);

  // The entry of exactly this key on this device, if any.
  const TunedEntry* exact(const std::string& op, const std::string& dtype, const std::string& math,
                          const std::string& shape_key) const;
  // Entries of the same op, dtype and math whose shape is comparable (runtime/tuned_rows.h), measured on
  // this device (`same_device`) or on other devices of its class, nearest first, at most
  // `max_distance` away. At equal distance a shallow row (fewer known evaluations than
  // kMinEvaluations, db/provenance.h) comes after a deeper or unknown one; then by shape key. The
  // exact shape itself is excluded.
  std::vector<std::pair<double, const TunedEntry*>> nearest(const std::string& op, const std::string& dtype,
                                                            const std::string& math, const std::string& shape_key,
                                                            const ShapeInfo& shape, bool same_device,
                                                            double max_distance) const;

  std::size_t size() const { return entries_.size(); }
  const std::vector<std::string>& rejected() const { return rejected_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  DeviceInfo device_;
  std::map<Key, TunedEntry> entries_;
  std::vector<std::string> rejected_;
};

}  // namespace ocltune
