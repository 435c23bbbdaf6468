// Provenance of a best row: where and with what a configuration was measured.
#pragma once

#include <string_view>

namespace ocltune {

// An SQL expression over a `best` row (unaliased) that yields its provenance JSON with every field
// present: host, date, tool_version (from its run), driver, device (from its device row), source.
// Fields the row's own provenance already has win; a provenance that is not a JSON object is replaced.
std::string_view complete_provenance_sql();

}  // namespace ocltune
