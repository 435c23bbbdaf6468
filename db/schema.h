// The text of db/schema.sql, embedded at build time.
#pragma once

#include <string_view>

namespace ocltune {

std::string_view schema_sql();

}  // namespace ocltune
