// Tuned rows as reviewable text: the JSON-lines form of shipped databases (db/shipped/*.jsonl).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "db/database.h"

namespace ocltune {

// What a shipped database holds: device descriptions and best configurations.
struct TunedRows {
  std::vector<DeviceRow> devices;
  std::vector<BestRow> best;
};

// One header line, then one line per device and per best row, sorted by key, with the shape, the
// parameters and the provenance as nested objects: a diff shows exactly which configuration changed.
std::string to_jsonl(const TunedRows& rows);

// Inverse of to_jsonl. The text is untrusted: anything but the exact format (unknown or missing
// fields, wrong types, non-finite numbers, oversized lines or strings, a newer schema version) is
// refused with a DatabaseError naming `name`, the line and the field. Values are not checked
// against the ops' parameter spaces here; that is the caller's job (runtime/tuned_rows.h).
TunedRows parse_jsonl(std::string_view text, const std::string& name);

}  // namespace ocltune
