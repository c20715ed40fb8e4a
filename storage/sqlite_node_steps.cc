// SqliteStateStore: node steps (schema versions 7 and 8). Same locking as the rest of the store: every
// call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kColumns =
    "uid, resource, state, step, cordoned, was_unschedulable, boot_id, reboot_started, step_started_ms, pods_left, "
    "evictions, message, step_spent_ms, step_seen_ms, step_wait_ms";

// The query for every column ReadRecord reads, with `rest` (WHERE, ORDER BY) added.
std::string Select(const char* rest) { return std::string("SELECT ") + kColumns + " FROM node_steps " + rest; }

NodeStepsRecord ReadRecord(const Statement& row) {
  NodeStepsRecord r;
  row.Columns(0, r.uid, r.resource, r.state, r.step, r.cordoned, r.was_unschedulable, r.boot_id, r.reboot_started,
              r.step_started_ms, r.pods_left, r.evictions, r.message, r.step_spent_ms, r.step_seen_ms,
              r.step_wait_ms);
  return r;
}

}  // namespace

Result<std::optional<NodeStepsRecord>> SqliteStateStore::GetNodeSteps(const std::string& uid) {
  MutexLock lock(&mu_);
  return ReadOne(db_->Prepare("GetNodeSteps", Select("WHERE uid = ?1 AND node = ?2"), uid, node_name_), &ReadRecord);
}

Result<std::vector<NodeStepsRecord>> SqliteStateStore::ListNodeSteps() {
  MutexLock lock(&mu_);
  return ReadAll(db_->Prepare("ListNodeSteps", Select("WHERE node = ?1 ORDER BY uid"), node_name_), &ReadRecord);
}

Status SqliteStateStore::PutNodeSteps(const NodeStepsRecord& r) {
  MutexLock lock(&mu_);
  return db_->RunCached(
      "PutNodeSteps",
      "INSERT INTO node_steps (uid, node, resource, state, step, cordoned, was_unschedulable, boot_id, reboot_started, "
      "step_started_ms, pods_left, evictions, message, step_spent_ms, step_seen_ms, step_wait_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
      "ON CONFLICT (uid, node) DO UPDATE SET resource = excluded.resource, state = excluded.state, "
      "step = excluded.step, cordoned = excluded.cordoned, was_unschedulable = excluded.was_unschedulable, "
      "boot_id = excluded.boot_id, reboot_started = excluded.reboot_started, "
      "step_started_ms = excluded.step_started_ms, pods_left = excluded.pods_left, evictions = excluded.evictions, "
      "message = excluded.message, step_spent_ms = excluded.step_spent_ms, step_seen_ms = excluded.step_seen_ms, "
      "step_wait_ms = excluded.step_wait_ms",
      r.uid, node_name_, r.resource, r.state, r.step, r.cordoned, r.was_unschedulable, r.boot_id, r.reboot_started,
      r.step_started_ms, r.pods_left, r.evictions, r.message, r.step_spent_ms, r.step_seen_ms, r.step_wait_ms);
}

Status SqliteStateStore::DropNodeSteps(const std::string& uid) {
  MutexLock lock(&mu_);
  return db_->RunCached("DropNodeSteps", "DELETE FROM node_steps WHERE uid = ?1 AND node = ?2", uid, node_name_);
}

}  // namespace nodehook
