// Schema migrations of the state file, versioned by PRAGMA user_version.
// Migration N takes a file from version N-1 to N; each runs in its own transaction that also
// sets user_version, so a crash leaves the file at a whole version. A file from a newer
// nodehook (user_version above what this build knows) is refused rather than misread.
// Thread-safety: as SqliteDb (the caller serializes).
#pragma once

#include <vector>

#include "agent/base/status.h"
#include "storage/sqlite_db.h"

namespace nodehook {

struct Migration {
  int version;        // user_version after this migration
  const char* sql;    // DDL, possibly several statements
};

// Every migration, ordered by version, starting at 1 with no gaps.
const std::vector<Migration>& StateMigrations();

// The schema version this build writes: the last migration's version.
int LatestSchemaVersion();

// Brings `db` up to LatestSchemaVersion(), or refuses a file whose version is newer; then
// makes sure the file uses incremental auto-vacuum (see EnableIncrementalVacuum).
Status MigrateToLatest(SqliteDb& db);

// Puts a file into auto_vacuum=INCREMENTAL so garbage collection can give freed pages back to
// the file system. A file created without it (schema v1) is converted once with VACUUM.
Status EnableIncrementalVacuum(SqliteDb& db);

}  // namespace nodehook
