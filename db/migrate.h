// Schema migrations: an older database is upgraded in one transaction after a backup copy.
#pragma once

namespace ocltune {

namespace sql {
class Connection;
}

// Upgrades `db` from `from_version` to kSchemaVersion. A copy of the file is written first
// (<path>.v<from>.bak). Throws DatabaseError, leaving the database as it was, on failure.
void migrate(sql::Connection& db, int from_version);

}  // namespace ocltune
