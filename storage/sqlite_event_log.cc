// SqliteStateStore: the raw event log behind the "event" hook. Same locking as the rest of the
// store: every call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kEventColumns =
    "seq, uid, resource, namespace, name, type, object, observed_at_ms, retries, next_attempt_ms, last_message";

EventRecord ReadEvent(const Statement& st) {
  EventRecord e;
  e.seq = st.Int64(0);
  e.uid = st.Text(1);
  e.resource = st.Text(2);
  e.namespace_name = st.Text(3);
  e.name = st.Text(4);
  e.type = st.Text(5);
  e.object = st.Text(6);
  e.observed_at_ms = st.Int64(7);
  e.retries = static_cast<int>(st.Int64(8));
  e.next_attempt_ms = st.Int64(9);
  e.last_message = st.Text(10);
  return e;
}

}  // namespace

Status SqliteStateStore::AppendEvent(const EventRecord& e) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "AppendEvent",
      "INSERT INTO events (node, uid, resource, namespace, name, type, object, observed_at_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, e.uid).Bind(3, e.resource).Bind(4, e.namespace_name).Bind(5, e.name);
  st->Bind(6, e.type).Bind(7, e.object).Bind(8, e.observed_at_ms);
  return st->Run();
}

Result<std::vector<EventRecord>> SqliteStateStore::PendingEvents(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "PendingEvents",
      std::string("SELECT ") + kEventColumns + " FROM events WHERE node = ?1 AND uid = ?2 ORDER BY seq");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, uid);
  return ReadAll(*st, &ReadEvent);
}

Status SqliteStateStore::RecordEventAttempt(int64_t seq, int retries, int64_t next_attempt_ms,
                                            const std::string& message) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "RecordEventAttempt",
      "UPDATE events SET retries = ?1, next_attempt_ms = ?2, last_message = ?3 WHERE seq = ?4 AND node = ?5");
  if (!st.ok()) return st.status();
  st->Bind(1, static_cast<int64_t>(retries)).Bind(2, next_attempt_ms).Bind(3, message).Bind(4, seq);
  st->Bind(5, node_name_);
  return st->Run();
}

Status SqliteStateStore::CompleteEvent(int64_t seq) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare("CompleteEvent", "DELETE FROM events WHERE seq = ?1 AND node = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, seq).Bind(2, node_name_);
  return st->Run();
}

Result<std::vector<std::string>> SqliteStateStore::UidsWithPendingEvents(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "UidsWithPendingEvents", "SELECT DISTINCT uid FROM events WHERE node = ?1 AND resource = ?2 ORDER BY uid");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, resource);
  return ReadAll(*st, +[](const Statement& row) { return row.Text(0); });
}

}  // namespace nodehook
