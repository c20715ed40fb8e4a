// SqliteStateStore: the raw event log behind the "event" hook. Same locking as the rest of the
// store: every call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kEventColumns =
    "seq, uid, resource, namespace, name, type, object, observed_at_ms, retries, next_attempt_ms, last_message";

// The query for every column ReadEvent reads, with `rest` (WHERE, ORDER BY) added.
std::string SelectEvents(const char* rest) { return std::string("SELECT ") + kEventColumns + " FROM events " + rest; }

EventRecord ReadEvent(const Statement& st) {
  EventRecord e;
  st.Columns(0, e.seq, e.uid, e.resource, e.namespace_name, e.name, e.type, e.object, e.observed_at_ms, e.retries,
             e.next_attempt_ms, e.last_message);
  return e;
}

}  // namespace

Status SqliteStateStore::AppendEvent(const EventRecord& e) {
  MutexLock lock(&mu_);
  return db_->RunCached("AppendEvent",
                        "INSERT INTO events (node, uid, resource, namespace, name, type, object, observed_at_ms) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        node_name_, e.uid, e.resource, e.namespace_name, e.name, e.type, e.object, e.observed_at_ms);
}

Result<std::vector<EventRecord>> SqliteStateStore::PendingEvents(const std::string& uid) {
  MutexLock lock(&mu_);
  const char* rest = "WHERE node = ?1 AND uid = ?2 ORDER BY seq";
  return ReadAll(db_->Prepare("PendingEvents", SelectEvents(rest), node_name_, uid), &ReadEvent);
}

Status SqliteStateStore::RecordEventAttempt(int64_t seq, int retries, int64_t next_attempt_ms,
                                            const std::string& message) {
  MutexLock lock(&mu_);
  return db_->RunCached(
      "RecordEventAttempt",
      "UPDATE events SET retries = ?1, next_attempt_ms = ?2, last_message = ?3 WHERE seq = ?4 AND node = ?5",
      retries, next_attempt_ms, message, seq, node_name_);
}

Status SqliteStateStore::CompleteEvent(int64_t seq) {
  MutexLock lock(&mu_);
  return db_->RunCached("CompleteEvent", "DELETE FROM events WHERE seq = ?1 AND node = ?2", seq, node_name_);
}

Result<std::vector<std::string>> SqliteStateStore::UidsWithPendingEvents(const std::string& resource,
                                                                        const std::string& namespace_name) {
  MutexLock lock(&mu_);
  return ReadAll(db_->Prepare("UidsWithPendingEvents",
                              "SELECT DISTINCT uid FROM events WHERE node = ?1 AND resource = ?2"
                              " AND (?3 = '' OR namespace = ?3) ORDER BY uid",
                              node_name_, resource, namespace_name),
                 +[](const Statement& row) { return row.Text(0); });
}

}  // namespace nodehook
