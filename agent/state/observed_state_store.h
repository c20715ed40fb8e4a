// ObservedStateStore: a forwarding decorator (in the manner of leveldb's EnvWrapper) over a
// StateStore and ScheduleStore that tells StoreHealth the Status of every read and write, so a
// file that cannot be read shows in readiness, metrics and Events like one that cannot be
// written.
//
// Writes observed, by the operation label they get: RecordAttempt, RecordHandled, Forget,
// MarkGone, CollectGarbage, ExpireTombstones, SetAdoptExisting, WriteNote, RequestRetry,
// TakeRetryRequests, PutNodeOutputs, AppendEvent, RecordEventAttempt, CompleteEvent, SetCheckDue, DropCheck,
// PutSnapshot. Reads: every other method, under its own name. A kCorrupt read (one record that
// cannot be read) says nothing about the file: StoreHealth ignores it and the caller
// quarantines that object (record_quarantine.h).
//
// It also tells `written` (SetOnObjectWritten) the uid of each write that may change what the
// store holds for an object (its diffbase or handlers): RecordAttempt, RecordHandled, Forget,
// MarkGone, RequestRetry; and "" after one that may change any object's (CollectGarbage,
// ExpireTombstones, TakeRetryRequests), so the /v1/objects snapshot reads only those again.
//
// Borrows the stores and the health object, which must outlive it. Thread-safe as the stores are;
// SetOnObjectWritten only while no other thread uses the store.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "agent/state/store_health.h"
#include "storage/schedule_store.h"
#include "storage/state_store.h"

namespace nodehook {

class ObservedStateStore final : public StateStore, public ScheduleStore {
 public:
  ObservedStateStore(StateStore& store, ScheduleStore& schedule, StoreHealth& health)
      : store_(store), schedule_(schedule), health_(health) {}

  const std::string& node_name() const override { return store_.node_name(); }
  void SetOnObjectWritten(std::function<void(const std::string& uid)> written) { written_ = std::move(written); }

  Result<std::optional<ObjectRecord>> GetObject(const std::string& uid) override {
    return Read("GetObject", store_.GetObject(uid));
  }
  Result<std::optional<ObjectRecord>> GetObjectSummary(const std::string& uid) override {
    return Read("GetObjectSummary", store_.GetObjectSummary(uid));
  }
  Result<std::vector<ObjectRecord>> ListObjects(const std::string& resource) override {
    return Read("ListObjects", store_.ListObjects(resource));
  }
  Result<std::optional<HandlerRecord>> GetHandler(const std::string& uid, const std::string& handler) override {
    return Read("GetHandler", store_.GetHandler(uid, handler));
  }
  Result<std::vector<HandlerRecord>> ListHandlers(const std::string& uid) override {
    return Read("ListHandlers", store_.ListHandlers(uid));
  }
  Result<ObjectState> ReadObjectState(const std::string& uid) override {
    return Read("ReadObjectState", store_.ReadObjectState(uid));
  }
  Result<std::vector<HandlerRecord>> ListAllHandlers() override { return Read("ListAllHandlers", store_.ListAllHandlers()); }
  Result<StoreSummary> Summarize() override { return Read("Summarize", store_.Summarize()); }
  std::optional<StoreStamp> Stamp() override { return store_.Stamp(); }
  Result<std::vector<ObjectRecord>> ListObjectSummaries() override {
    return Read("ListObjectSummaries", store_.ListObjectSummaries());
  }
  Result<std::vector<ObjectRecord>> ListAllObjects() override { return Read("ListAllObjects", store_.ListAllObjects()); }
  Result<bool> AdoptExistingPending() override { return Read("AdoptExistingPending", store_.AdoptExistingPending()); }
  Result<std::optional<std::string>> ReadNote(const std::string& key) override {
    return Read("ReadNote", store_.ReadNote(key));
  }
  Result<std::optional<NodeOutputsRecord>> GetNodeOutputs(const std::string& uid) override {
    return Read("GetNodeOutputs", store_.GetNodeOutputs(uid));
  }
  Result<std::vector<NodeOutputsRecord>> ListNodeOutputs(const std::string& resource) override {
    return Read("ListNodeOutputs", store_.ListNodeOutputs(resource));
  }
  Result<std::optional<NodeStepsRecord>> GetNodeSteps(const std::string& uid) override {
    return Read("GetNodeSteps", store_.GetNodeSteps(uid));
  }
  Result<std::vector<NodeStepsRecord>> ListNodeSteps() override {
    return Read("ListNodeSteps", store_.ListNodeSteps());
  }
  Result<std::vector<EventRecord>> PendingEvents(const std::string& uid) override {
    return Read("PendingEvents", store_.PendingEvents(uid));
  }
  Result<std::vector<std::string>> UidsWithPendingEvents(const std::string& resource,
                                                         const std::string& namespace_name) override {
    return Read("UidsWithPendingEvents", store_.UidsWithPendingEvents(resource, namespace_name));
  }

  Status RecordAttempt(const HandlerRecord& record) override;
  Status RecordHandled(const ObjectRecord& object, const std::string& handler) override;
  Status Forget(const std::string& uid) override;
  Status MarkGone(const std::string& uid, int64_t gone_at_ms) override;
  Result<GarbageStats> CollectGarbage(int64_t now_ms, int64_t ttl_ms) override;
  Result<std::vector<std::string>> ExpireTombstones(int64_t now_ms, int64_t ttl_ms) override;
  Status SetAdoptExisting(bool pending) override;
  Status WriteNote(const std::string& key, const std::string& value) override;
  Status PutNodeOutputs(const NodeOutputsRecord& record) override;
  Status PutNodeSteps(const NodeStepsRecord& record) override;
  Status DropNodeSteps(const std::string& uid) override;
  Result<std::vector<RetriedHandler>> RequestRetry(const std::string& uid, const std::string& handler,
                                                   int64_t now_ms) override;
  Result<std::vector<RetryRequest>> TakeRetryRequests() override;
  Status AppendEvent(const EventRecord& event) override;
  Status RecordEventAttempt(int64_t seq, int retries, int64_t next_attempt_ms, const std::string& message) override;
  Status CompleteEvent(int64_t seq) override;

  Result<std::map<std::string, int64_t>> CheckSchedule(const std::string& resource) override {
    return Read("CheckSchedule", schedule_.CheckSchedule(resource));
  }
  Result<std::optional<SnapshotRecord>> GetSnapshot(const std::string& resource) override {
    return Read("GetSnapshot", schedule_.GetSnapshot(resource));
  }
  Status SetCheckDue(const std::string& uid, const std::string& resource, int64_t due_ms) override;
  Status DropCheck(const std::string& uid) override;
  Status PutSnapshot(const SnapshotRecord& record) override;

 private:
  // Tells health_ how the write went and hands its result back unchanged.
  Status Seen(const char* operation, Status result);
  // Tells `written_` of a write (also of one that failed: it may have been applied in part).
  template <typename T>
  T Written(const std::string& uid, T result) {
    if (written_) written_(uid);
    return result;
  }
  template <typename T>
  Result<T> Seen(const char* operation, Result<T> result) {
    health_.Observe(operation, result.status());
    return result;
  }
  // Tells health_ how the read went and hands its result back unchanged.
  template <typename T>
  Result<T> Read(const char* operation, Result<T> result) {
    health_.Observe(operation, result.status(), StoreAccess::kRead);
    return result;
  }

  StateStore& store_;
  ScheduleStore& schedule_;
  StoreHealth& health_;
  std::function<void(const std::string&)> written_;  // set while no other thread uses the store
};

}  // namespace nodehook
