// SqliteStateStore upkeep: gone marks and garbage collection, the adopt-after-recovery flag,
// retry requests and test hooks. Same locking as the rest of the store: every call holds mu_ and
// is one transaction.
#include <string>

#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kAdoptKey = "adopt_existing_after_recovery";

// Garbage: gone at or before the cutoff (?2), no diffbase (a tombstone still needs its delete
// hook) and no delete handler in progress. Used by both deletes so they pick the same uids.
constexpr const char* kGarbageUids =
    "SELECT g.uid FROM gone g WHERE g.node = ?1 AND g.gone_at_ms <= ?2 "
    "AND NOT EXISTS (SELECT 1 FROM objects o WHERE o.uid = g.uid AND o.node = g.node) "
    "AND NOT EXISTS (SELECT 1 FROM handlers h WHERE h.uid = g.uid AND h.node = g.node "
    "AND h.handler = 'delete') "
    "AND NOT EXISTS (SELECT 1 FROM events e WHERE e.uid = g.uid AND e.node = g.node)";

Result<int64_t> DeleteGarbage(SqliteDb& db, const std::string& table, const std::string& node, int64_t cutoff) {
  Result<Statement> st = db.Prepare(
      "CollectGarbage", "DELETE FROM " + table + " WHERE node = ?1 AND uid IN (" + kGarbageUids + ")");
  if (!st.ok()) return st.status();
  st->Bind(1, node).Bind(2, cutoff);
  NODEHOOK_RETURN_IF_ERROR(st->Run());
  return db.changes();
}

}  // namespace

Status SqliteStateStore::MarkGone(const std::string& uid, int64_t gone_at_ms) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "MarkGone", "INSERT INTO gone (uid, node, gone_at_ms) VALUES (?1, ?2, ?3) "
                  "ON CONFLICT (uid, node) DO UPDATE SET gone_at_ms = min(gone_at_ms, excluded.gone_at_ms)");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_).Bind(3, gone_at_ms);
  return st->Run();
}

Result<GarbageStats> SqliteStateStore::CollectGarbage(int64_t now_ms, int64_t ttl_ms) {
  MutexLock lock(&mu_);
  GarbageStats stats;
  {
    Transaction tx(*db_, "CollectGarbage");
    NODEHOOK_RETURN_IF_ERROR(tx.Begin());
    int64_t cutoff = now_ms - ttl_ms;
    // Handlers first: the gone rows are what selects the uids.
    Result<int64_t> handlers = DeleteGarbage(*db_, "handlers", node_name_, cutoff);
    if (!handlers.ok()) return handlers.status();
    Result<int64_t> retries = DeleteGarbage(*db_, "retry_requests", node_name_, cutoff);
    if (!retries.ok()) return retries.status();
    Result<int64_t> checks = DeleteGarbage(*db_, "check_schedule", node_name_, cutoff);
    if (!checks.ok()) return checks.status();
    Result<int64_t> outputs = DeleteGarbage(*db_, "node_outputs", node_name_, cutoff);
    if (!outputs.ok()) return outputs.status();
    Result<int64_t> gone = DeleteGarbage(*db_, "gone", node_name_, cutoff);
    if (!gone.ok()) return gone.status();
    NODEHOOK_RETURN_IF_ERROR(tx.Commit());
    stats.handler_rows_purged = *handlers;
    stats.objects_purged = *gone;
  }
  // Give free pages back (also those freed by Forget since the last run). Outside the purge
  // transaction: the rows are already gone for good, the file size is housekeeping.
  if (!db_->in_memory()) {
    NODEHOOK_RETURN_IF_ERROR(db_->Exec("CollectGarbage", "PRAGMA incremental_vacuum"));
    // The file shrinks when the WAL is checkpointed; TRUNCATE also empties the -wal file.
    // Best effort: a reader (e.g. `nodehook state list`) may keep it from completing now.
    Result<std::string> ignored = db_->QueryText("CollectGarbage", "PRAGMA wal_checkpoint(TRUNCATE)");
    (void)ignored;
  }
  return stats;
}

Result<std::vector<std::string>> SqliteStateStore::ExpireTombstones(int64_t now_ms, int64_t ttl_ms) {
  MutexLock lock(&mu_);
  Transaction tx(*db_, "ExpireTombstones");
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  Result<Statement> select = db_->Prepare(
      "ExpireTombstones", "SELECT g.uid FROM gone g JOIN objects o ON o.uid = g.uid AND o.node = g.node "
                          "WHERE g.node = ?1 AND g.gone_at_ms <= ?2 AND EXISTS (SELECT 1 FROM handlers h "
                          "WHERE h.uid = g.uid AND h.node = g.node AND h.handler = 'delete' AND h.retries > 0) "
                          "ORDER BY g.uid");
  if (!select.ok()) return select.status();
  select->Bind(1, node_name_).Bind(2, now_ms - ttl_ms);
  auto uids = ReadAll(*select, +[](const Statement& row) { return row.Text(0); });
  if (!uids.ok()) return uids.status();
  for (const std::string& uid : *uids) {
    for (const char* table : {"objects", "handlers", "retry_requests", "events", "check_schedule", "node_outputs", "gone"}) {
      Result<Statement> del =
          db_->Prepare("ExpireTombstones", std::string("DELETE FROM ") + table + " WHERE uid = ?1 AND node = ?2");
      if (!del.ok()) return del.status();
      del->Bind(1, uid).Bind(2, node_name_);
      NODEHOOK_RETURN_IF_ERROR(del->Run());
    }
  }
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return uids;
}

Result<bool> SqliteStateStore::AdoptExistingPending() {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare("AdoptExistingPending",
                                      "SELECT value FROM metadata WHERE node = ?1 AND key = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, std::string(kAdoptKey));
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row && st->Text(0) == "1";
}

Status SqliteStateStore::SetAdoptExisting(bool pending) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "SetAdoptExisting", pending ? "INSERT OR REPLACE INTO metadata (node, key, value) VALUES (?1, ?2, '1')"
                                  : "DELETE FROM metadata WHERE node = ?1 AND key = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, std::string(kAdoptKey));
  return st->Run();
}

Result<std::optional<std::string>> SqliteStateStore::ReadNote(const std::string& key) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare("ReadNote", "SELECT value FROM metadata WHERE node = ?1 AND key = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, key);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(st->Text(0));
}

Status SqliteStateStore::WriteNote(const std::string& key, const std::string& value) {
  MutexLock lock(&mu_);
  Result<Statement> st =
      db_->Prepare("WriteNote", "INSERT OR REPLACE INTO metadata (node, key, value) VALUES (?1, ?2, ?3)");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, key).Bind(3, value);
  return st->Run();
}

Result<std::vector<RetriedHandler>> SqliteStateStore::RequestRetry(const std::string& uid, const std::string& handler,
                                                                   int64_t now_ms) {
  MutexLock lock(&mu_);
  Transaction tx(*db_, "RequestRetry");
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  // Rows of an object the agent saw vanish would never run again, except its delete: left alone.
  const std::string runnable =
      " WHERE uid = ?1 AND node = ?2 AND (?3 = '' OR handler = ?3) AND (handler = 'delete' OR NOT EXISTS "
      "(SELECT 1 FROM gone WHERE gone.uid = ?1 AND gone.node = ?2))";
  std::vector<RetriedHandler> retried;
  {
    Result<Statement> pick = db_->Prepare("RequestRetry", "SELECT handler, retries, last_outcome FROM handlers" +
                                                              runnable + " ORDER BY handler");
    if (!pick.ok()) return pick.status();
    pick->Bind(1, uid).Bind(2, node_name_).Bind(3, handler);
    while (true) {
      Result<bool> row = pick->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      retried.push_back(RetriedHandler{pick->Text(0), static_cast<int>(pick->Int64(1)),
                                       pick->Text(2) == kOutcomePermanentFailure});
    }
  }
  if (retried.empty()) {
    return NotFoundError("no pending " + (handler.empty() ? std::string("handler") : "handler " + handler) +
                         " for uid " + uid + " on node " + node_name_ + " that could run: nothing to retry");
  }
  // A permanent failure is revived: marked retry_requested, it runs once more (and its retry
  // count, already at the limit, makes a new failure permanent again).
  Result<Statement> due = db_->Prepare(
      "RequestRetry", "UPDATE handlers SET next_attempt_ms = ?4, "
                      "last_outcome = CASE WHEN last_outcome = ?5 THEN ?6 ELSE last_outcome END" + runnable);
  if (!due.ok()) return due.status();
  due->Bind(1, uid).Bind(2, node_name_).Bind(3, handler).Bind(4, now_ms);
  due->Bind(5, std::string(kOutcomePermanentFailure)).Bind(6, std::string(kOutcomeRetryRequested));
  NODEHOOK_RETURN_IF_ERROR(due->Run());
  Result<Statement> ask = db_->Prepare(
      "RequestRetry", "INSERT OR REPLACE INTO retry_requests (node, uid, handler, requested_at_ms) "
                      "VALUES (?1, ?2, ?3, ?4)");
  if (!ask.ok()) return ask.status();
  ask->Bind(1, node_name_).Bind(2, uid).Bind(3, handler).Bind(4, now_ms);
  NODEHOOK_RETURN_IF_ERROR(ask->Run());
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return retried;
}

Result<std::vector<RetryRequest>> SqliteStateStore::TakeRetryRequests() {
  MutexLock lock(&mu_);
  Transaction tx(*db_, "TakeRetryRequests");
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  std::vector<RetryRequest> requests;
  {
    Result<Statement> st = db_->Prepare(
        "TakeRetryRequests", "SELECT uid, handler, requested_at_ms FROM retry_requests WHERE node = ?1 "
                             "ORDER BY requested_at_ms, uid, handler");
    if (!st.ok()) return st.status();
    st->Bind(1, node_name_);
    while (true) {
      Result<bool> row = st->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      requests.push_back(RetryRequest{st->Text(0), st->Text(1), st->Int64(2)});
    }
  }
  if (requests.empty()) return requests;  // nothing written: the transaction just rolls back
  Result<Statement> drop = db_->Prepare("TakeRetryRequests", "DELETE FROM retry_requests WHERE node = ?1");
  if (!drop.ok()) return drop.status();
  drop->Bind(1, node_name_);
  NODEHOOK_RETURN_IF_ERROR(drop->Run());
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return requests;
}

Result<std::vector<std::string>> SqliteStateStore::NodesInFile() {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "NodesInFile", "SELECT node FROM objects UNION SELECT node FROM handlers UNION SELECT node FROM events "
                     "UNION SELECT node FROM gone UNION SELECT node FROM retry_requests ORDER BY 1");
  if (!st.ok()) return st.status();
  std::vector<std::string> nodes;
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return nodes;
    nodes.push_back(st->Text(0));
  }
}

Status SqliteStateStore::SetMaxPageCountForTesting(int64_t pages) {
  MutexLock lock(&mu_);
  // max_page_count cannot go below the current size; 0 asks for the largest allowed.
  std::string value = pages > 0 ? std::to_string(pages) : "4294967294";
  Result<std::string> set = db_->QueryText("SetMaxPageCountForTesting", "PRAGMA max_page_count = " + value);
  return set.ok() ? Status::Ok() : set.status();
}

}  // namespace nodehook
