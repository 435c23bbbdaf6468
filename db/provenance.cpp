// Provenance of a best row: where and with what a configuration was measured.
#include "db/provenance.h"

namespace ocltune {

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

}  // namespace ocltune
