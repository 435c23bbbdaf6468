// A recorded search space: load, save, and extract from a database.
#include "tuner/recorded_space.h"

#include <cmath>
#include <fstream>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "db/database.h"
#include "db/space_records.h"
#include "harness/error.h"

namespace ocltune {

std::optional<double> RecordedSpace::optimum_ns() const {
  std::optional<double> best;
  for (const RecordedPoint& p : points) {
    if (p.status == Status::kOk && p.median_ns && (!best || *p.median_ns < *best)) best = p.median_ns;
  }
  return best;
}

RecordedSpace load_recorded_space(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot read recorded space {}", path));
  RecordedSpace space;
  std::string line;
  int number = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) throw Error(fmt::format("{}:{}: not a JSON object", path, number));
    try {
      if (!header) {
        space.op = j.at("op").get<std::string>();
        space.dtype = j.value("dtype", "fp32");
        space.math = j.value("math", "exact");
        space.shape_key = j.at("shape_key").get<std::string>();
        space.shape = j.value("shape", nlohmann::json::object());
        space.device_key = j.value("device_key", "");
        space.device = j.value("device", "");
        space.source_hash = j.value("source_hash", "");
        header = true;
        continue;
      }
      RecordedPoint p;
      p.config = parse_config(j.at("params").get<std::string>());
      const std::string status = j.at("status").get<std::string>();
      p.status = parse_status(status).value_or(Status::kSkipped);
      if (j.contains("median_ns") && j["median_ns"].is_number()) p.median_ns = j["median_ns"].get<double>();
      space.points.push_back(std::move(p));
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}:{}: {}", path, number, e.what()));
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", path, number, e.what()));
    }
  }
  if (!header) throw Error(fmt::format("{}: empty recorded space", path));
  return space;
}

void save_recorded_space(const RecordedSpace& space, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error(fmt::format("cannot write {}", path));
  const nlohmann::json header = {{"op", space.op},
                                 {"dtype", space.dtype},
                                 {"math", space.math},
                                 {"shape_key", space.shape_key},
                                 {"shape", space.shape},
                                 {"device_key", space.device_key},
                                 {"device", space.device},
                                 {"source_hash", space.source_hash},
                                 {"configurations", space.points.size()}};
  out << header.dump() << '\n';
  for (const RecordedPoint& p : space.points) {
    nlohmann::json j = {{"params", to_string(p.config)}, {"status", status_name(p.status)}};
    // Three significant digits past the noise of any timing keep the file small and reviewable.
    if (p.median_ns) j["median_ns"] = std::round(*p.median_ns * 10.0) / 10.0;
    out << j.dump() << '\n';
  }
  if (!out) throw Error(fmt::format("writing {} failed", path));
}

RecordedSpace recorded_space_from_db(Database& db, const std::string& op, const std::string& shape_key,
                                     const std::string& device_key) {
  using Group = std::tuple<std::string, std::string, std::string, std::string>;  // device, dtype, math, source
  std::map<Group, std::map<std::string, MeasuredPoint>> groups;
  std::map<Group, std::map<std::string, double>> retimed;  // params -> latest final median
  for (MeasuredPoint& m : shape_measurements(db, op, shape_key)) {
    if (!device_key.empty() && m.device_key != device_key) continue;
    if (parse_role(m.role) == Role::kFinal && parse_status(m.status) == Status::kOk && m.median_ns) {
      retimed[{m.device_key, m.dtype, m.math, m.source_hash}][m.params] = *m.median_ns;
    }
    // The space is what the search measured: defaults may lie outside a restricted sub-space, and
    // final rows re-time points already in it.
    if (parse_role(m.role) != Role::kSearch) continue;
    groups[{m.device_key, m.dtype, m.math, m.source_hash}].emplace(m.params, m);
  }
  if (groups.empty()) {
    throw Error(fmt::format("no measurements of {} at shape '{}'{} in {}", op, shape_key,
                            device_key.empty() ? "" : " for device key " + device_key, db.path()));
  }
  auto largest = groups.begin();
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (it->second.size() > largest->second.size()) largest = it;
  }
  RecordedSpace space;
  space.op = op;
  space.shape_key = shape_key;
  std::tie(space.device_key, space.dtype, space.math, space.source_hash) = largest->first;
  space.device = device_description(db, space.device_key);
  const auto& finals = retimed[largest->first];
  for (const auto& [params, m] : largest->second) {
    auto final = finals.find(params);
    space.points.push_back({parse_config(params), parse_status(m.status).value_or(Status::kSkipped),
                            final != finals.end() ? final->second : m.median_ns});
    if (space.shape.empty()) space.shape = nlohmann::json::parse(m.shape_json, nullptr, false);
  }
  return space;
}

}  // namespace ocltune
