// SqliteStateStore::Summarize: counts for metrics, in one read transaction of aggregate queries
// (no row is copied out), so the agent can refresh its metrics every few seconds; counted again
// only when the store's stamp moved, so an agent at rest does not scan its tables every second.
#include <algorithm>
#include <functional>

#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

// Per resource: handlers with failed attempts still retrying, those that gave up, and the first
// start of the oldest one still retrying. Stored events of the "event" hook retry the same way
// (a permanent failure drops the event, so it has no row to count).
constexpr const char* kHandlerCounts =
    "SELECT resource, "
    "sum(retries > 0 AND last_outcome <> 'permanent_failure'), "
    "sum(last_outcome = 'permanent_failure'), "
    "min(CASE WHEN retries > 0 AND last_outcome <> 'permanent_failure' THEN first_start_ms END) "
    "FROM handlers WHERE node = ?1 GROUP BY resource";
constexpr const char* kEventCounts =
    "SELECT resource, count(*), min(observed_at_ms) FROM events "
    "WHERE node = ?1 AND retries > 0 GROUP BY resource";

// Tombstones: objects seen gone that still have a diffbase (their delete hook has not succeeded).
constexpr const char* kOldestTombstone =
    "SELECT min(g.gone_at_ms) FROM gone g JOIN objects o ON o.uid = g.uid AND o.node = g.node WHERE g.node = ?1";

// Tables whose rows belong to one node (metadata holds flags only).
constexpr const char* const kTables[] = {"objects", "handlers", "events", "gone", "retry_requests", "node_outputs", "node_steps"};

// Runs the bound query `st` and hands every row to `row`.
Status ForEachRow(Statement& st, const std::function<void(const Statement&)>& row) {
  while (true) {
    Result<bool> more = st.Step();
    if (!more.ok()) return more.status();
    if (!*more) return Status::Ok();
    row(st);
  }
}

int64_t EarliestNonZero(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace

Result<StoreStamp> SqliteStateStore::StampLocked() {
  Result<Statement> others = db_->Prepare("Stamp", "PRAGMA data_version");
  if (!others.ok()) return others.status();
  Result<bool> row = others->Step();
  if (!row.ok()) return row.status();
  return StoreStamp{*row ? others->Int64(0) : 0, db_->TotalChanges()};
}

std::optional<StoreStamp> SqliteStateStore::Stamp() {
  MutexLock lock(&mu_);
  Result<StoreStamp> stamp = StampLocked();
  if (!stamp.ok()) return std::nullopt;
  return *stamp;
}

Result<StoreSummary> SqliteStateStore::Summarize() {
  MutexLock lock(&mu_);
  // Taken before the counts: a commit by another process between the two makes the next call
  // count again.
  Result<StoreStamp> stamp = StampLocked();
  if (stamp.ok() && summary_stamp_ == *stamp) return summary_;
  Result<StoreSummary> counted = CountLocked();
  if (!counted.ok()) return counted;
  summary_ = *counted;
  summary_stamp_ = stamp.ok() ? std::optional<StoreStamp>(*stamp) : std::nullopt;
  return counted;
}

Result<StoreSummary> SqliteStateStore::CountLocked() {
  StoreSummary summary;
  // A read transaction: every count comes from the same snapshot of the file.
  NODEHOOK_RETURN_IF_ERROR(db_->Exec("Summarize", "BEGIN"));
  struct EndRead {
    SqliteDb& db;
    ~EndRead() { (void)db.Exec("Summarize", "COMMIT"); }  // read-only: nothing to lose if it fails
  } end_read{*db_};

  Result<Statement> handlers = db_->Prepare("Summarize", kHandlerCounts, node_name_);
  if (!handlers.ok()) return handlers.status();
  NODEHOOK_RETURN_IF_ERROR(ForEachRow(*handlers, [&](const Statement& row) {
    HandlerCounts& counts = summary.by_resource[row.Text(0)];
    counts.pending_retry = row.Int64(1);
    counts.failed_permanently = row.Int64(2);
    counts.oldest_pending_since_ms = row.Int64(3);  // NULL reads as 0: none pending
  }));
  Result<Statement> events = db_->Prepare("Summarize", kEventCounts, node_name_);
  if (!events.ok()) return events.status();
  NODEHOOK_RETURN_IF_ERROR(ForEachRow(*events, [&](const Statement& row) {
    HandlerCounts& counts = summary.by_resource[row.Text(0)];
    counts.pending_retry += row.Int64(1);
    counts.oldest_pending_since_ms = EarliestNonZero(counts.oldest_pending_since_ms, row.Int64(2));
  }));
  Result<Statement> tombstone = db_->Prepare("Summarize", kOldestTombstone, node_name_);
  if (!tombstone.ok()) return tombstone.status();
  Result<bool> found = tombstone->Step();
  if (!found.ok()) return found.status();
  summary.oldest_tombstone_since_ms = *found ? tombstone->Int64(0) : 0;  // NULL reads as 0: none
  for (const char* table : kTables) {
    Result<Statement> count =
        db_->Prepare("Summarize", std::string("SELECT count(*) FROM ") + table + " WHERE node = ?1", node_name_);
    if (!count.ok()) return count.status();
    Result<bool> row = count->Step();
    if (!row.ok()) return row.status();
    summary.rows[table] = *row ? count->Int64(0) : 0;
  }
  return summary;
}

}  // namespace nodehook
