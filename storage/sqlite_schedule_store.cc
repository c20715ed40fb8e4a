// SqliteStateStore: check and snapshot timing (ScheduleStore, schema version 5). Same locking as
// the rest of the store: every call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {

Result<std::map<std::string, int64_t>> SqliteStateStore::CheckSchedule(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<Statement> st =
      db_->Prepare("CheckSchedule", "SELECT uid, due_ms FROM check_schedule WHERE node = ?1 AND resource = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, resource);
  std::map<std::string, int64_t> due;
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return due;
    due[st->Text(0)] = st->Int64(1);
  }
}

Status SqliteStateStore::SetCheckDue(const std::string& uid, const std::string& resource, int64_t due_ms) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "SetCheckDue",
      "INSERT INTO check_schedule (uid, node, resource, due_ms) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT (uid, node) DO UPDATE SET resource = excluded.resource, due_ms = excluded.due_ms");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_).Bind(3, resource).Bind(4, due_ms);
  return st->Run();
}

Status SqliteStateStore::DropCheck(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare("DropCheck", "DELETE FROM check_schedule WHERE uid = ?1 AND node = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_);
  return st->Run();
}

Result<std::optional<SnapshotRecord>> SqliteStateStore::GetSnapshot(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "GetSnapshot",
      "SELECT done_digest, target, retries, first_start_ms, next_attempt_ms, last_outcome, last_message "
      "FROM snapshots WHERE node = ?1 AND resource = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, resource);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<SnapshotRecord>();
  SnapshotRecord r;
  r.resource = resource;
  r.done_digest = st->Text(0);
  r.target = st->Text(1);
  r.retries = static_cast<int>(st->Int64(2));
  r.first_start_ms = st->Int64(3);
  r.next_attempt_ms = st->Int64(4);
  r.last_outcome = st->Text(5);
  r.last_message = st->Text(6);
  return std::optional<SnapshotRecord>(std::move(r));
}

Status SqliteStateStore::PutSnapshot(const SnapshotRecord& r) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "PutSnapshot",
      "INSERT OR REPLACE INTO snapshots (node, resource, done_digest, target, retries, first_start_ms, "
      "next_attempt_ms, last_outcome, last_message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, r.resource).Bind(3, r.done_digest).Bind(4, r.target);
  st->Bind(5, int64_t{r.retries}).Bind(6, r.first_start_ms).Bind(7, r.next_attempt_ms);
  st->Bind(8, r.last_outcome).Bind(9, r.last_message);
  return st->Run();
}

}  // namespace nodehook
