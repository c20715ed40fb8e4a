#include "storage/migrations.h"

#include <string>

namespace nodehook {
namespace {

// Version 1: the diffbase of each handled object and the progress of each unfinished handler,
// both keyed by this node's name so several nodes' agents could share one file in tests.
// handlers has no foreign key to objects: progress exists before the first diffbase does.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE objects (
  uid TEXT NOT NULL,
  node TEXT NOT NULL,
  resource TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  essence TEXT NOT NULL,
  last_object TEXT NOT NULL,
  handled_at_ms INTEGER NOT NULL,
  PRIMARY KEY (uid, node)
) WITHOUT ROWID;
CREATE INDEX objects_by_resource ON objects (node, resource);
CREATE TABLE handlers (
  uid TEXT NOT NULL,
  node TEXT NOT NULL,
  handler TEXT NOT NULL,
  resource TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  retries INTEGER NOT NULL,
  first_start_ms INTEGER NOT NULL,
  next_attempt_ms INTEGER NOT NULL,
  last_outcome TEXT NOT NULL,
  last_message TEXT NOT NULL,
  target TEXT NOT NULL,
  PRIMARY KEY (uid, node, handler)
) WITHOUT ROWID;
)sql";

// Version 2: what the file needs to look after itself (see docs/state.md).
//   metadata        per-node flags and notes, e.g. "adopt_existing_after_recovery" after a corrupt
//                   file was moved aside, "finalizer_domains" (which finalizers this node may hold).
//   gone            when this node saw an object disappear; garbage collection purges rows of
//                   objects gone longer than a TTL that have nothing left to do.
//   retry_requests  "retry now" asks from `nodehook state retry`, polled by the running agent.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE metadata (
  node TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (node, key)
) WITHOUT ROWID;
CREATE TABLE gone (
  uid TEXT NOT NULL,
  node TEXT NOT NULL,
  gone_at_ms INTEGER NOT NULL,
  PRIMARY KEY (uid, node)
) WITHOUT ROWID;
CREATE INDEX gone_by_time ON gone (node, gone_at_ms);
CREATE TABLE retry_requests (
  node TEXT NOT NULL,
  uid TEXT NOT NULL,
  handler TEXT NOT NULL,
  requested_at_ms INTEGER NOT NULL,
  PRIMARY KEY (node, uid, handler)
) WITHOUT ROWID;
)sql";

// Version 3: the raw event log. Each observed change is stored before the "event" hook runs,
// so its retries survive restarts; rows are deleted once the hook succeeded.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  node TEXT NOT NULL,
  uid TEXT NOT NULL,
  resource TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  object TEXT NOT NULL,
  observed_at_ms INTEGER NOT NULL,
  retries INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER NOT NULL DEFAULT 0,
  last_message TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_by_uid ON events (node, uid, seq);
CREATE INDEX events_by_resource ON events (node, resource);
)sql";

// Version 4: handlers remember the object they work on, so an object that vanishes while its
// first hook was running (agent killed) still gets its delete hook, with that state.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE handlers ADD COLUMN last_object TEXT NOT NULL DEFAULT '';
)sql";

// Version 5 (issue 12): timing of periodic checks and node snapshot hooks (ScheduleStore).
//   check_schedule  when each handled object's check is next due, so a restart neither fires
//                   every check at once nor skips one. Its retry state lives in handlers
//                   (handler "check") like every other hook's.
//   snapshots       per resource, the digest of the object set the snapshot hook last succeeded
//                   with, and the retry state of the attempt in flight.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE check_schedule (
  uid TEXT NOT NULL,
  node TEXT NOT NULL,
  resource TEXT NOT NULL,
  due_ms INTEGER NOT NULL,
  PRIMARY KEY (uid, node)
) WITHOUT ROWID;
CREATE INDEX check_schedule_by_resource ON check_schedule (node, resource);
CREATE TABLE snapshots (
  node TEXT NOT NULL,
  resource TEXT NOT NULL,
  done_digest TEXT NOT NULL,
  target TEXT NOT NULL,
  retries INTEGER NOT NULL,
  first_start_ms INTEGER NOT NULL,
  next_attempt_ms INTEGER NOT NULL,
  last_outcome TEXT NOT NULL,
  last_message TEXT NOT NULL,
  PRIMARY KEY (node, resource)
) WITHOUT ROWID;
)sql";

// Version 6 (issue 29): what an object's hooks published for this node ("node" in a result
// file: labels, annotations, conditions, taints), as JSON. Kept until the object is forgotten
// (its delete hook done), so the outputs writer keeps them on the Node through restarts and
// takes them off once the object is gone.
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE node_outputs (
  uid TEXT NOT NULL,
  node TEXT NOT NULL,
  resource TEXT NOT NULL,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  outputs TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (uid, node)
) WITHOUT ROWID;
CREATE INDEX node_outputs_by_resource ON node_outputs (node, resource);
)sql";

// Version 7 (issue 28): a rollout's node steps per object (cordon, drain, reboot, uncordon), so
// an agent that restarts resumes the step it was in and uncordons only a Node it cordoned.
constexpr const char* kSchemaV7 = R"sql(
CREATE TABLE node_steps (
  uid TEXT NOT NULL,
  node TEXT NOT NULL,
  resource TEXT NOT NULL,
  state TEXT NOT NULL,
  step TEXT NOT NULL,
  cordoned INTEGER NOT NULL,
  was_unschedulable INTEGER NOT NULL,
  boot_id TEXT NOT NULL,
  reboot_started INTEGER NOT NULL,
  step_started_ms INTEGER NOT NULL,
  pods_left TEXT NOT NULL,
  evictions INTEGER NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (uid, node)
) WITHOUT ROWID;
CREATE INDEX node_steps_by_resource ON node_steps (node, resource);
)sql";

// Version 8 (issue 41): a drain's or a reboot's timeout counts the time the step spent inside
// its slot, not the time since it started (an agent away for a DaemonSet update adds nothing).
constexpr const char* kSchemaV8 = R"sql(
ALTER TABLE node_steps ADD COLUMN step_spent_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE node_steps ADD COLUMN step_seen_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE node_steps ADD COLUMN step_wait_ms INTEGER NOT NULL DEFAULT 0;
)sql";

Result<int> ReadUserVersion(SqliteDb& db) {
  Result<std::string> text = db.QueryText("Migrate", "PRAGMA user_version");
  if (!text.ok()) return text.status();
  return std::stoi(*text);
}

Status Apply(SqliteDb& db, const Migration& migration) {
  Transaction tx(db, "Migrate");
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  // Re-read under the write lock: another process may have migrated the file meanwhile.
  Result<int> version = ReadUserVersion(db);
  if (!version.ok()) return version.status();
  if (*version >= migration.version) return Status::Ok();
  NODEHOOK_RETURN_IF_ERROR(db.Exec("Migrate", migration.sql));
  NODEHOOK_RETURN_IF_ERROR(
      db.Exec("Migrate", "PRAGMA user_version = " + std::to_string(migration.version)));
  return tx.Commit();
}

}  // namespace

const std::vector<Migration>& StateMigrations() {
  static const std::vector<Migration> kMigrations = {
      {1, kSchemaV1},
      {2, kSchemaV2},
      {3, kSchemaV3},
      {4, kSchemaV4},
      {5, kSchemaV5},
      {6, kSchemaV6},
      {7, kSchemaV7},
      {8, kSchemaV8},
  };
  return kMigrations;
}

int LatestSchemaVersion() { return StateMigrations().back().version; }

Status MigrateToLatest(SqliteDb& db) {
  Result<int> version = ReadUserVersion(db);
  if (!version.ok()) return version.status();
  if (*version > LatestSchemaVersion()) {
    return InvalidError("state file " + db.path() + " has schema version " +
                        std::to_string(*version) + " but this nodehook understands up to " +
                        std::to_string(LatestSchemaVersion()) +
                        "; refusing to open it (downgrade?)");
  }
  for (const Migration& migration : StateMigrations()) {
    if (migration.version > *version) NODEHOOK_RETURN_IF_ERROR(Apply(db, migration));
  }
  return EnableIncrementalVacuum(db);
}

Status EnableIncrementalVacuum(SqliteDb& db) {
  if (db.in_memory()) return Status::Ok();
  Result<std::string> mode = db.QueryText("Migrate", "PRAGMA auto_vacuum");
  if (!mode.ok()) return mode.status();
  if (*mode == "2") return Status::Ok();  // 2 = incremental
  // auto_vacuum is stored in the file header; switching an existing file needs one VACUUM,
  // which cannot run inside a transaction, hence not a migration. Safe to repeat after a crash.
  NODEHOOK_RETURN_IF_ERROR(db.Exec("Migrate", "PRAGMA auto_vacuum = INCREMENTAL"));
  return db.Exec("Migrate", "VACUUM");
}

}  // namespace nodehook
