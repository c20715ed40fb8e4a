// SqliteStateStore: the StateStore kept in one SQLite file on the node (WAL mode).
// Ownership: owns its connection. Thread-safe: a mutex serializes every call. Each call is one
// transaction, except RecordAttempt and RecordHandled: concurrent ones share a transaction
// (GroupCommit), and each returns only after the transaction holding its write committed. Several stores (even processes) may open one file; rows are scoped by node
// name, so a store never sees another node's records.
#pragma once

#include <memory>
#include <string>

#include "agent/base/mutex.h"

#include "storage/group_commit.h"
#include "storage/sqlite_db.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"

namespace nodehook {

struct StoreOptions {
  // FULL survives power loss with every commit; NORMAL (WAL) may lose the last few commits
  // on power loss but never corrupts the file, and syncs far less often.
  bool synchronous_full = false;
  // Where nodehook_store_commit_duration_seconds is recorded (not owned); null = not measured.
  Metrics* metrics = nullptr;
};

class SqliteStateStore final : public StateStore, public ScheduleStore {
 public:
  // Opens or creates the state file at `path` (":memory:" for a private in-memory store),
  // sets its pragmas and migrates it to the current schema. Refuses a file that cannot use WAL
  // or that a newer nodehook wrote.
  static Result<std::unique_ptr<SqliteStateStore>> Open(const std::string& path,
                                                        const std::string& node_name,
                                                        const StoreOptions& options);

  const std::string& node_name() const override { return node_name_; }

  Result<std::optional<ObjectRecord>> GetObject(const std::string& uid) override;
  Result<std::vector<ObjectRecord>> ListObjects(const std::string& resource) override;
  Result<std::optional<HandlerRecord>> GetHandler(const std::string& uid,
                                                  const std::string& handler) override;
  Result<std::vector<HandlerRecord>> ListHandlers(const std::string& uid) override;
  Result<ObjectState> ReadObjectState(const std::string& uid) override;
  // Ordered by next attempt time, earliest first.
  Result<std::vector<HandlerRecord>> ListAllHandlers() override;
  // Counted again only when the stamp moved since the last count (sqlite_state_store_summary.cc).
  Result<StoreSummary> Summarize() override;
  std::optional<StoreStamp> Stamp() override;
  Status RecordAttempt(const HandlerRecord& record) override;
  Status RecordHandled(const ObjectRecord& object, const std::string& handler) override;
  Status Forget(const std::string& uid) override;

  // Upkeep (sqlite_state_store_upkeep.cc).
  Result<std::vector<ObjectRecord>> ListAllObjects() override;
  Result<std::vector<ObjectRecord>> ListObjectSummaries() override;
  Result<std::optional<ObjectRecord>> GetObjectSummary(const std::string& uid) override;
  Status MarkGone(const std::string& uid, int64_t gone_at_ms) override;
  Result<GarbageStats> CollectGarbage(int64_t now_ms, int64_t ttl_ms) override;
  Result<bool> AdoptExistingPending() override;
  Status SetAdoptExisting(bool pending) override;
  Result<std::optional<std::string>> ReadNote(const std::string& key) override;
  Status WriteNote(const std::string& key, const std::string& value) override;
  // Node outputs (sqlite_node_outputs.cc).
  Result<std::optional<NodeOutputsRecord>> GetNodeOutputs(const std::string& uid) override;
  Result<std::vector<NodeOutputsRecord>> ListNodeOutputs(const std::string& resource) override;
  Status PutNodeOutputs(const NodeOutputsRecord& record) override;
  Result<std::optional<NodeStepsRecord>> GetNodeSteps(const std::string& uid) override;
  Result<std::vector<NodeStepsRecord>> ListNodeSteps() override;
  Status PutNodeSteps(const NodeStepsRecord& record) override;
  Status DropNodeSteps(const std::string& uid) override;
  Result<std::vector<std::string>> ExpireTombstones(int64_t now_ms, int64_t ttl_ms) override;
  Result<std::vector<RetriedHandler>> RequestRetry(const std::string& uid, const std::string& handler,
                                                   int64_t now_ms) override;
  Result<std::vector<RetryRequest>> TakeRetryRequests() override;

  Status AppendEvent(const EventRecord& event) override;
  Result<std::vector<EventRecord>> PendingEvents(const std::string& uid) override;
  Status RecordEventAttempt(int64_t seq, int retries, int64_t next_attempt_ms, const std::string& message) override;
  Status CompleteEvent(int64_t seq) override;
  Result<std::vector<std::string>> UidsWithPendingEvents(const std::string& resource,
                                                         const std::string& namespace_name) override;

  // Check and snapshot timing (sqlite_schedule_store.cc).
  Result<std::map<std::string, int64_t>> CheckSchedule(const std::string& resource) override;
  Status SetCheckDue(const std::string& uid, const std::string& resource, int64_t due_ms) override;
  Status DropCheck(const std::string& uid) override;
  Result<std::optional<SnapshotRecord>> GetSnapshot(const std::string& resource) override;
  Status PutSnapshot(const SnapshotRecord& record) override;

  // Every node name with rows in this file (any node's, not only this store's), sorted. Lets
  // `nodehook state` take the node from a file that holds one.
  Result<std::vector<std::string>> NodesInFile();

  // Test hook: caps the file at `pages` pages (PRAGMA max_page_count) on this store's own
  // connection, so tests can fill the "disk" without mounting anything. 0 lifts the cap.
  Status SetMaxPageCountForTesting(int64_t pages);

 private:
  SqliteStateStore(std::unique_ptr<SqliteDb> db, std::string node_name);

  // One transaction for a group of writes (GroupCommit's batch runner).
  Status RunGroup(const std::vector<const GroupCommit::Write*>& writes, const std::string& operation)
      EXCLUDES(mu_);
  // The statements of RecordAttempt / RecordHandled; run inside RunGroup's transaction.
  Result<std::optional<ObjectRecord>> ReadObjectRow(const std::string& uid) REQUIRES(mu_);
  Result<std::vector<HandlerRecord>> ReadHandlerRows(const std::string& uid) REQUIRES(mu_);
  Status WriteAttempt(const HandlerRecord& record) REQUIRES(mu_);
  Status WriteHandled(const ObjectRecord& object, const std::string& handler) REQUIRES(mu_);
  Result<StoreStamp> StampLocked() REQUIRES(mu_);
  Result<StoreSummary> CountLocked() REQUIRES(mu_);

  Mutex mu_;
  std::unique_ptr<SqliteDb> db_ GUARDED_BY(mu_);
  // The last summary and the stamp it was counted at: an agent at rest asks every second.
  std::optional<StoreStamp> summary_stamp_ GUARDED_BY(mu_);
  StoreSummary summary_ GUARDED_BY(mu_);
  const std::string node_name_;
  GroupCommit group_;
};

}  // namespace nodehook
