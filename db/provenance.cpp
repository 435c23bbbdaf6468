// Provenance of a best row: where and with what a configuration was measured, and how much
// evidence (evaluations) stands behind it.
#include "db/provenance.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ocltune {
namespace {

// The field's value, or a null json when the text is not an object or lacks it.
nlohmann::json evaluations_value(const std::string& provenance) {
  const nlohmann::json p = nlohmann::json::parse(provenance, nullptr, false);
  if (p.is_discarded() || !p.is_object() || !p.contains(kEvaluationsField)) return nullptr;
  return p.at(kEvaluationsField);
}

bool is_count(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

}  // namespace

std::string_view complete_provenance_sql() {
  return R"(json_patch(
      json_object(
        'host', coalesce((SELECT r.host FROM runs r WHERE r.run_id = best.run_id), ''),
        'date', coalesce((SELECT r.started_at FROM runs r WHERE r.run_id = best.run_id), best.updated_at),
        'tool_version', coalesce((SELECT r.tool_version FROM runs r WHERE r.run_id = best.run_id), ''),
        'driver', coalesce((SELECT d.driver_version FROM devices d WHERE d.device_key = best.device_key), ''),
        'device', coalesce((SELECT d.device_name FROM devices d WHERE d.device_key = best.device_key), ''),
        'source', ''),
      CASE WHEN json_valid(best.provenance) AND json_type(best.provenance) = 'object' THEN best.provenance
           ELSE '{}' END))";
}

std::optional<std::int64_t> provenance_evaluations(const std::string& provenance) {
  const nlohmann::json v = evaluations_value(provenance);
  if (!is_count(v) || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)) return std::nullopt;
  return v.get<std::int64_t>();
}

std::string evaluations_problem(const std::string& provenance) {
  const nlohmann::json v = evaluations_value(provenance);
  if (v.is_null() || provenance_evaluations(provenance)) return "";
  return fmt::format("provenance field '{}' must be a non-negative integer or null", kEvaluationsField);
}

std::string with_evaluations(const std::string& provenance, std::optional<std::int64_t> evaluations) {
  nlohmann::json p = nlohmann::json::parse(provenance, nullptr, false);
  if (p.is_discarded() || !p.is_object()) p = nlohmann::json::object();
  p[kEvaluationsField] = evaluations ? nlohmann::json(*evaluations) : nlohmann::json(nullptr);
  return p.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ocltune
