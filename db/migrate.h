// Schema migrations: an older database is upgraded in one transaction after a backup copy.
#pragma once

#include <string>

namespace ocltune {

namespace sql {
class Connection;
}

// Upgrades `db` from `from_version` to kSchemaVersion, every step in one transaction. A copy of the
// file is written first (<path>.v<from>.bak, never overwriting an earlier one); returns its path.
// Throws DatabaseError, leaving the database as it was, on failure.
std::string migrate(sql::Connection& db, int from_version);

}  // namespace ocltune
