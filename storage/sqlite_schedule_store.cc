// SqliteStateStore: check and snapshot timing (ScheduleStore, schema version 5). Same locking as
// the rest of the store: every call holds mu_ and is one statement (one transaction).
#include <utility>

#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

using CheckDue = std::pair<std::string, int64_t>;

CheckDue ReadCheckDue(const Statement& row) { return CheckDue(row.Text(0), row.Int64(1)); }

// Every column but the resource, which the query is keyed by.
SnapshotRecord ReadSnapshot(const Statement& row) {
  SnapshotRecord r;
  row.Columns(0, r.done_digest, r.target, r.retries, r.first_start_ms, r.next_attempt_ms, r.last_outcome,
              r.last_message);
  return r;
}

}  // namespace

Result<std::map<std::string, int64_t>> SqliteStateStore::CheckSchedule(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<std::vector<CheckDue>> rows = ReadAll(
      db_->Prepare("CheckSchedule", "SELECT uid, due_ms FROM check_schedule WHERE node = ?1 AND resource = ?2",
                   node_name_, resource),
      &ReadCheckDue);
  if (!rows.ok()) return rows.status();
  std::map<std::string, int64_t> due;
  for (CheckDue& row : *rows) due[std::move(row.first)] = row.second;
  return due;
}

Status SqliteStateStore::SetCheckDue(const std::string& uid, const std::string& resource, int64_t due_ms) {
  MutexLock lock(&mu_);
  return db_->RunCached("SetCheckDue",
                        "INSERT INTO check_schedule (uid, node, resource, due_ms) VALUES (?1, ?2, ?3, ?4) "
                        "ON CONFLICT (uid, node) DO UPDATE SET resource = excluded.resource, due_ms = excluded.due_ms",
                        uid, node_name_, resource, due_ms);
}

Status SqliteStateStore::DropCheck(const std::string& uid) {
  MutexLock lock(&mu_);
  return db_->RunCached("DropCheck", "DELETE FROM check_schedule WHERE uid = ?1 AND node = ?2", uid, node_name_);
}

Result<std::optional<SnapshotRecord>> SqliteStateStore::GetSnapshot(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<std::optional<SnapshotRecord>> r = ReadOne(
      db_->Prepare("GetSnapshot",
                   "SELECT done_digest, target, retries, first_start_ms, next_attempt_ms, last_outcome, last_message "
                   "FROM snapshots WHERE node = ?1 AND resource = ?2",
                   node_name_, resource),
      &ReadSnapshot);
  if (r.ok() && r->has_value()) (*r)->resource = resource;
  return r;
}

Status SqliteStateStore::PutSnapshot(const SnapshotRecord& r) {
  MutexLock lock(&mu_);
  return db_->RunCached(
      "PutSnapshot",
      "INSERT OR REPLACE INTO snapshots (node, resource, done_digest, target, retries, first_start_ms, "
      "next_attempt_ms, last_outcome, last_message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
      node_name_, r.resource, r.done_digest, r.target, r.retries, r.first_start_ms, r.next_attempt_ms,
      r.last_outcome, r.last_message);
}

}  // namespace nodehook
