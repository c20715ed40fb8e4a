// SqliteStateStore: node steps (schema versions 7 and 8). Same locking as the rest of the store: every
// call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kColumns =
    "uid, resource, state, step, cordoned, was_unschedulable, boot_id, reboot_started, step_started_ms, pods_left, "
    "evictions, message, step_spent_ms, step_seen_ms, step_wait_ms";

NodeStepsRecord ReadRecord(const Statement& row) {
  NodeStepsRecord r;
  r.uid = row.Text(0);
  r.resource = row.Text(1);
  r.state = row.Text(2);
  r.step = row.Text(3);
  r.cordoned = row.Int64(4) != 0;
  r.was_unschedulable = row.Int64(5) != 0;
  r.boot_id = row.Text(6);
  r.reboot_started = row.Int64(7) != 0;
  r.step_started_ms = row.Int64(8);
  r.pods_left = row.Text(9);
  r.evictions = static_cast<int>(row.Int64(10));
  r.message = row.Text(11);
  r.step_spent_ms = row.Int64(12);
  r.step_seen_ms = row.Int64(13);
  r.step_wait_ms = row.Int64(14);
  return r;
}

}  // namespace

Result<std::optional<NodeStepsRecord>> SqliteStateStore::GetNodeSteps(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "GetNodeSteps", std::string("SELECT ") + kColumns + " FROM node_steps WHERE uid = ?1 AND node = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<NodeStepsRecord>();
  return std::optional<NodeStepsRecord>(ReadRecord(*st));
}

Result<std::vector<NodeStepsRecord>> SqliteStateStore::ListNodeSteps() {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "ListNodeSteps", std::string("SELECT ") + kColumns + " FROM node_steps WHERE node = ?1 ORDER BY uid");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_);
  return ReadAll(*st, &ReadRecord);
}

Status SqliteStateStore::PutNodeSteps(const NodeStepsRecord& r) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "PutNodeSteps",
      "INSERT INTO node_steps (uid, node, resource, state, step, cordoned, was_unschedulable, boot_id, reboot_started, "
      "step_started_ms, pods_left, evictions, message, step_spent_ms, step_seen_ms, step_wait_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
      "ON CONFLICT (uid, node) DO UPDATE SET resource = excluded.resource, state = excluded.state, "
      "step = excluded.step, cordoned = excluded.cordoned, was_unschedulable = excluded.was_unschedulable, "
      "boot_id = excluded.boot_id, reboot_started = excluded.reboot_started, "
      "step_started_ms = excluded.step_started_ms, pods_left = excluded.pods_left, evictions = excluded.evictions, "
      "message = excluded.message, step_spent_ms = excluded.step_spent_ms, step_seen_ms = excluded.step_seen_ms, "
      "step_wait_ms = excluded.step_wait_ms");
  if (!st.ok()) return st.status();
  st->Bind(1, r.uid).Bind(2, node_name_).Bind(3, r.resource).Bind(4, r.state).Bind(5, r.step);
  st->Bind(6, static_cast<int64_t>(r.cordoned)).Bind(7, static_cast<int64_t>(r.was_unschedulable));
  st->Bind(8, r.boot_id).Bind(9, static_cast<int64_t>(r.reboot_started)).Bind(10, r.step_started_ms);
  st->Bind(11, r.pods_left).Bind(12, static_cast<int64_t>(r.evictions)).Bind(13, r.message);
  st->Bind(14, r.step_spent_ms).Bind(15, r.step_seen_ms).Bind(16, r.step_wait_ms);
  return st->Run();
}

Status SqliteStateStore::DropNodeSteps(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare("DropNodeSteps", "DELETE FROM node_steps WHERE uid = ?1 AND node = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_);
  return st->Run();
}

}  // namespace nodehook
