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
  NODEHOOK_RETURN_IF_ERROR(db.RunCached(
      "CollectGarbage", "DELETE FROM " + table + " WHERE node = ?1 AND uid IN (" + kGarbageUids + ")", node, cutoff));
  return db.changes();
}

std::string FirstText(const Statement& row) { return row.Text(0); }

RetriedHandler ReadRetried(const Statement& row) {
  return RetriedHandler{row.Text(0), static_cast<int>(row.Int64(1)), row.Text(2) == kOutcomePermanentFailure};
}

RetryRequest ReadRetryRequest(const Statement& row) { return RetryRequest{row.Text(0), row.Text(1), row.Int64(2)}; }

}  // namespace

Status SqliteStateStore::MarkGone(const std::string& uid, int64_t gone_at_ms) {
  MutexLock lock(&mu_);
  return db_->RunCached("MarkGone",
                        "INSERT INTO gone (uid, node, gone_at_ms) VALUES (?1, ?2, ?3) "
                        "ON CONFLICT (uid, node) DO UPDATE SET gone_at_ms = min(gone_at_ms, excluded.gone_at_ms)",
                        uid, node_name_, gone_at_ms);
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
  Result<std::vector<std::string>> uids =
      ReadAll(db_->Prepare("ExpireTombstones",
                           "SELECT g.uid FROM gone g JOIN objects o ON o.uid = g.uid AND o.node = g.node "
                           "WHERE g.node = ?1 AND g.gone_at_ms <= ?2 AND EXISTS (SELECT 1 FROM handlers h "
                           "WHERE h.uid = g.uid AND h.node = g.node AND h.handler = 'delete' AND h.retries > 0) "
                           "ORDER BY g.uid",
                           node_name_, now_ms - ttl_ms),
              &FirstText);
  if (!uids.ok()) return uids.status();
  for (const std::string& uid : *uids) {
    for (const char* table : {"objects", "handlers", "retry_requests", "events", "check_schedule", "node_outputs", "gone"}) {
      NODEHOOK_RETURN_IF_ERROR(db_->RunCached(
          "ExpireTombstones", std::string("DELETE FROM ") + table + " WHERE uid = ?1 AND node = ?2", uid, node_name_));
    }
  }
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return uids;
}

Result<bool> SqliteStateStore::AdoptExistingPending() {
  MutexLock lock(&mu_);
  Result<std::optional<std::string>> value = ReadOne(
      db_->Prepare("AdoptExistingPending", "SELECT value FROM metadata WHERE node = ?1 AND key = ?2", node_name_,
                   kAdoptKey),
      &FirstText);
  if (!value.ok()) return value.status();
  return *value == "1";
}

Status SqliteStateStore::SetAdoptExisting(bool pending) {
  MutexLock lock(&mu_);
  return db_->RunCached("SetAdoptExisting",
                        pending ? "INSERT OR REPLACE INTO metadata (node, key, value) VALUES (?1, ?2, '1')"
                                : "DELETE FROM metadata WHERE node = ?1 AND key = ?2",
                        node_name_, kAdoptKey);
}

Result<std::optional<std::string>> SqliteStateStore::ReadNote(const std::string& key) {
  MutexLock lock(&mu_);
  return ReadOne(db_->Prepare("ReadNote", "SELECT value FROM metadata WHERE node = ?1 AND key = ?2", node_name_, key),
                 &FirstText);
}

Status SqliteStateStore::WriteNote(const std::string& key, const std::string& value) {
  MutexLock lock(&mu_);
  return db_->RunCached("WriteNote", "INSERT OR REPLACE INTO metadata (node, key, value) VALUES (?1, ?2, ?3)",
                        node_name_, key, value);
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
  const std::string pick = "SELECT handler, retries, last_outcome FROM handlers" + runnable + " ORDER BY handler";
  Result<std::vector<RetriedHandler>> retried =
      ReadAll(db_->Prepare("RequestRetry", pick, uid, node_name_, handler), &ReadRetried);
  if (!retried.ok()) return retried.status();
  if (retried->empty()) {
    return NotFoundError("no pending " + (handler.empty() ? std::string("handler") : "handler " + handler) +
                         " for uid " + uid + " on node " + node_name_ + " that could run: nothing to retry");
  }
  // A permanent failure is revived: marked retry_requested, it runs once more (and its retry
  // count, already at the limit, makes a new failure permanent again).
  NODEHOOK_RETURN_IF_ERROR(db_->RunCached(
      "RequestRetry",
      "UPDATE handlers SET next_attempt_ms = ?4, "
      "last_outcome = CASE WHEN last_outcome = ?5 THEN ?6 ELSE last_outcome END" + runnable,
      uid, node_name_, handler, now_ms, kOutcomePermanentFailure, kOutcomeRetryRequested));
  NODEHOOK_RETURN_IF_ERROR(db_->RunCached("RequestRetry",
                                          "INSERT OR REPLACE INTO retry_requests (node, uid, handler, requested_at_ms) "
                                          "VALUES (?1, ?2, ?3, ?4)",
                                          node_name_, uid, handler, now_ms));
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return retried;
}

Result<std::vector<RetryRequest>> SqliteStateStore::TakeRetryRequests() {
  MutexLock lock(&mu_);
  Transaction tx(*db_, "TakeRetryRequests");
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  Result<std::vector<RetryRequest>> requests =
      ReadAll(db_->Prepare("TakeRetryRequests",
                           "SELECT uid, handler, requested_at_ms FROM retry_requests WHERE node = ?1 "
                           "ORDER BY requested_at_ms, uid, handler",
                           node_name_),
              &ReadRetryRequest);
  if (!requests.ok() || requests->empty()) return requests;  // nothing written: the transaction just rolls back
  NODEHOOK_RETURN_IF_ERROR(
      db_->RunCached("TakeRetryRequests", "DELETE FROM retry_requests WHERE node = ?1", node_name_));
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return requests;
}

Result<std::vector<std::string>> SqliteStateStore::NodesInFile() {
  MutexLock lock(&mu_);
  return ReadAll(db_->Prepare("NodesInFile",
                              "SELECT node FROM objects UNION SELECT node FROM handlers UNION SELECT node FROM events "
                              "UNION SELECT node FROM gone UNION SELECT node FROM retry_requests ORDER BY 1"),
                 &FirstText);
}

Status SqliteStateStore::SetMaxPageCountForTesting(int64_t pages) {
  MutexLock lock(&mu_);
  // max_page_count cannot go below the current size; 0 asks for the largest allowed.
  std::string value = pages > 0 ? std::to_string(pages) : "4294967294";
  Result<std::string> set = db_->QueryText("SetMaxPageCountForTesting", "PRAGMA max_page_count = " + value);
  return set.ok() ? Status::Ok() : set.status();
}

}  // namespace nodehook
