// ScheduleStore: durable timing of the hooks that are not driven by an object's changes
// (issue 12): when each object's periodic check is next due, and what each resource's node
// snapshot hook last succeeded with. Rows are keyed by this store's node, like StateStore's.
// A separate interface from StateStore, all of it pure: a store either keeps these or does not
// compile. Implementations are thread-safe; each method is one atomic transaction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "agent/base/status.h"

namespace nodehook {

// Progress of one resource's snapshot hook on this node.
struct SnapshotRecord {
  std::string resource;        // ResourceRef::Id()
  std::string done_digest;     // digest of the object set the last successful run saw; "" = none yet
  std::string target;          // digest of the set the current (failing, in-progress) attempt works on
  int retries = 0;             // failed attempts towards `target`
  int64_t first_start_ms = 0;  // first attempt towards `target`
  int64_t next_attempt_ms = 0; // not before this time
  std::string last_outcome;    // "done", "failed", "retry_later", "in_progress", "permanent_failure"
  std::string last_message;
};

class ScheduleStore {
 public:
  virtual ~ScheduleStore() = default;

  // Next check due time per uid, for the objects of `resource` that have one.
  virtual Result<std::map<std::string, int64_t>> CheckSchedule(const std::string& resource) = 0;
  // Upserts when the check of `uid` is next due.
  virtual Status SetCheckDue(const std::string& uid, const std::string& resource, int64_t due_ms) = 0;
  // The object is no longer checked here (deleted, or no longer this node's).
  virtual Status DropCheck(const std::string& uid) = 0;

  virtual Result<std::optional<SnapshotRecord>> GetSnapshot(const std::string& resource) = 0;
  virtual Status PutSnapshot(const SnapshotRecord& record) = 0;
};

}  // namespace nodehook
