// Schema migrations: an older database is upgraded in one transaction after a backup copy.
#include "db/migrate.h"

#include <fmt/format.h>

#include "db/database.h"
#include "db/sqlite.h"

namespace ocltune {

void migrate(sql::Connection& db, int from_version) {
  // Version 1 is the first schema: there is nothing older to migrate from yet.
  throw DatabaseError(fmt::format("{}: no migration from schema version {} to {}", db.path(), from_version, kSchemaVersion));
}

}  // namespace ocltune
