#include "agent/state/observed_state_store.h"

#include <utility>

namespace nodehook {

Status ObservedStateStore::Seen(const char* operation, Status result) {
  health_.Observe(operation, result);
  return result;
}

Status ObservedStateStore::RecordAttempt(const HandlerRecord& record) {
  return Written(record.uid, Seen("RecordAttempt", store_.RecordAttempt(record)));
}

Status ObservedStateStore::RecordHandled(const ObjectRecord& object, const std::string& handler) {
  return Written(object.uid, Seen("RecordHandled", store_.RecordHandled(object, handler)));
}

Status ObservedStateStore::Forget(const std::string& uid) { return Written(uid, Seen("Forget", store_.Forget(uid))); }

Status ObservedStateStore::MarkGone(const std::string& uid, int64_t gone_at_ms) {
  return Written(uid, Seen("MarkGone", store_.MarkGone(uid, gone_at_ms)));
}

Result<GarbageStats> ObservedStateStore::CollectGarbage(int64_t now_ms, int64_t ttl_ms) {
  return Written("", Seen("CollectGarbage", store_.CollectGarbage(now_ms, ttl_ms)));
}

Result<std::vector<std::string>> ObservedStateStore::ExpireTombstones(int64_t now_ms, int64_t ttl_ms) {
  return Written("", Seen("ExpireTombstones", store_.ExpireTombstones(now_ms, ttl_ms)));
}

Status ObservedStateStore::SetAdoptExisting(bool pending) {
  return Seen("SetAdoptExisting", store_.SetAdoptExisting(pending));
}

Status ObservedStateStore::WriteNote(const std::string& key, const std::string& value) {
  return Seen("WriteNote", store_.WriteNote(key, value));
}

Status ObservedStateStore::PutNodeOutputs(const NodeOutputsRecord& record) {
  return Seen("PutNodeOutputs", store_.PutNodeOutputs(record));
}

Status ObservedStateStore::PutNodeSteps(const NodeStepsRecord& record) {
  return Seen("PutNodeSteps", store_.PutNodeSteps(record));
}

Status ObservedStateStore::DropNodeSteps(const std::string& uid) {
  return Seen("DropNodeSteps", store_.DropNodeSteps(uid));
}

Result<std::vector<RetriedHandler>> ObservedStateStore::RequestRetry(const std::string& uid, const std::string& handler,
                                                                     int64_t now_ms) {
  return Written(uid, Seen("RequestRetry", store_.RequestRetry(uid, handler, now_ms)));
}

Result<std::vector<RetryRequest>> ObservedStateStore::TakeRetryRequests() {
  Result<std::vector<RetryRequest>> taken = Seen("TakeRetryRequests", store_.TakeRetryRequests());
  if (taken.ok() && !taken->empty() && written_) written_("");  // each tick takes; most find none
  return taken;
}

Status ObservedStateStore::AppendEvent(const EventRecord& event) {
  return Seen("AppendEvent", store_.AppendEvent(event));
}

Status ObservedStateStore::RecordEventAttempt(int64_t seq, int retries, int64_t next_attempt_ms,
                                              const std::string& message) {
  return Seen("RecordEventAttempt", store_.RecordEventAttempt(seq, retries, next_attempt_ms, message));
}

Status ObservedStateStore::CompleteEvent(int64_t seq) { return Seen("CompleteEvent", store_.CompleteEvent(seq)); }

Status ObservedStateStore::SetCheckDue(const std::string& uid, const std::string& resource, int64_t due_ms) {
  return Seen("SetCheckDue", schedule_.SetCheckDue(uid, resource, due_ms));
}

Status ObservedStateStore::DropCheck(const std::string& uid) { return Seen("DropCheck", schedule_.DropCheck(uid)); }

Status ObservedStateStore::PutSnapshot(const SnapshotRecord& record) {
  return Seen("PutSnapshot", schedule_.PutSnapshot(record));
}

}  // namespace nodehook
