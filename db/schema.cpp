// The text of db/schema.sql, embedded at build time.
#include "db/schema.h"

#include "harness/embedded_file.h"

namespace ocltune {

extern const EmbeddedFile kDbFiles[];

std::string_view schema_sql() { return kDbFiles[0].text; }

}  // namespace ocltune
