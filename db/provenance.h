// Provenance of a best row: where and with what a configuration was measured, and how much
// evidence (evaluations) stands behind it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ocltune {

// An SQL expression over a `best` row (unaliased) that yields its provenance JSON with every field
// present: host, date, tool_version (from its run), driver, device (from its device row), source.
// Fields the row's own provenance already has win; a provenance that is not a JSON object is replaced.
std::string_view complete_provenance_sql();

// Rows measured over fewer configurations than this are shallow: `db export --best-only` leaves them
// out by default, and the runtime ranks them after deeper rows at the same distance.
inline constexpr std::int64_t kMinEvaluations = 8;

// The provenance field that says how many configurations of the row's problem (same kernel source)
// the exporting database had measured; null or absent: unknown (written before it existed, or the
// database held no measurements of the problem).
inline constexpr const char* kEvaluationsField = "evaluations";

// The evaluations a provenance JSON text records: nullopt when unknown (absent, null, or the text is
// not a JSON object). Throws nothing; a malformed value (not a non-negative integer) is unknown
// here and refused by evaluations_problem().
std::optional<std::int64_t> provenance_evaluations(const std::string& provenance);
// Why a provenance's evaluations field is malformed: empty when absent, null or a non-negative integer.
std::string evaluations_problem(const std::string& provenance);
// `provenance` (a JSON object text) with the evaluations field set to `evaluations` (null when
// nullopt); a text that is not a JSON object becomes one.
std::string with_evaluations(const std::string& provenance, std::optional<std::int64_t> evaluations);

}  // namespace ocltune
