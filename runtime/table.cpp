// The runtime's in-memory view of the database layers: validated rows for one device and its class.
#include "runtime/table.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "db/provenance.h"
#include "db/transfer.h"

namespace ocltune {

void TunedTable::add_layer(Database& db, const std::string& layer, const Log& log) {
  add_rows(TunedRows{db.devices(), db.all_best()}, layer, db.path(), log);
}

void TunedTable::add_rows(const TunedRows& rows, const std::string& layer, const std::string& path, const Log& log) {
  const std::string my_key = device_.key();
  const std::string my_class = device_.device_class();
  std::set<std::string> usable = {my_key};
  std::map<std::string, std::optional<double>> bandwidth;  // measured copy bandwidth per device key
  for (const DeviceRow& d : rows.devices) {
    if (device_from_row(d).device_class() == my_class) usable.insert(d.device_key);
    bandwidth[d.device_key] = d.copy_bandwidth_gbs;
  }
  std::set<std::string> unknown_ops;
  for (const BestRow& row : rows.best) {
    if (!usable.count(row.device_key)) continue;
    try {
      // A row's time is checked against the bandwidth of the device it was measured on.
      CheckedRow checked = check_row(row, device_, bandwidth[row.device_key]);
      TunedEntry e;
      e.layer = layer;
      e.path = path;
      e.device_key = row.device_key;
      e.op = row.op;
      e.dtype = row.dtype;
      e.math = row.math;
      e.shape_key = row.shape_key;
      e.config = std::move(checked.config);
      e.shape = shape_info(checked.problem->lookup_json());
      e.median_ns = row.median_ns;
      e.same_device = row.device_key == my_key;
      e.evaluations = provenance_evaluations(row.provenance);
      entries_[{e.device_key, e.op, e.dtype, e.math, e.shape_key}] = std::move(e);
    } catch (const std::exception& ex) {
      // Rows of op families this build does not have are expected in a shared database: say so once.
      if (std::string(ex.what()).rfind("unknown op", 0) == 0) {
        if (unknown_ops.insert(row.op).second && log) {
          log(fmt::format("{} database {}: skipping rows of op '{}', which this build does not know", layer, path,
                          printable(row.op, 40)));
        }
        continue;
      }
      std::string message =
          fmt::format("{} database {}: rejected table best row {}: {}", layer, path, describe_row(row), ex.what());
      if (log) log(message);
      rejected_.push_back(std::move(message));
    }
  }
}

const TunedEntry* TunedTable::exact(const std::string& op, const std::string& dtype, const std::string& math,
                                    const std::string& shape_key) const {
  auto it = entries_.find({device_.key(), op, dtype, math, shape_key});
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::pair<double, const TunedEntry*>> TunedTable::nearest(const std::string& op, const std::string& dtype,
                                                                      const std::string& math,
                                                                      const std::string& shape_key,
                                                                      const ShapeInfo& shape, bool same_device,
                                                                      double max_distance) const {
  std::vector<std::pair<double, const TunedEntry*>> found;
  for (const auto& [key, e] : entries_) {
    if (e.same_device != same_device || e.op != op || e.dtype != dtype || e.math != math) continue;
    if (same_device && e.shape_key == shape_key) continue;
    const double d = shape_distance(shape, e.shape);
    if (d <= max_distance) found.emplace_back(d, &e);
  }
  // Depth breaks ties of distance only: a nearer row, shallow or not, was tuned for a shape more
  // like this one, and an exact row (never ranked here) was measured against the built-in at it.
  auto shallow = [](const TunedEntry* e) { return e->evaluations && *e->evaluations < kMinEvaluations; };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (shallow(a.second) != shallow(b.second)) return shallow(b.second);
    if (a.second->shape_key != b.second->shape_key) return a.second->shape_key < b.second->shape_key;
    return a.second->device_key < b.second->device_key;
  });
  return found;
}

}  // namespace ocltune
