// Plan: what Decide (decide.h) concluded one object needs on this node, as values: the handler
// (reason), the two states, and the ordered steps the executor (plan_executor.h) runs.
// Plain data; no behaviour.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"
#include "storage/state_store.h"

namespace nodehook {

// Not a hook: stores the diffbase of an object some agent handled before (state recovery, or the
// previous singleton leader).
inline constexpr const char* kReasonAdopt = "adopt";

enum class Step {
  kSweepDeparted,         // finalizer mode: departed nodes' finalizers off a deleting object
  kAwaitLeader,           // singleton, not leading: keep a deleted object for the next leader
  kReleaseStrayFinalizer, // finalizer mode: our finalizer on an object this node knows nothing of
  kClaimFinalizer,        // finalizer mode: this node's finalizer on before its first hook
  kEnterRollout,          // rollout: a slot in the gate for this state, else wait
  kRecordStart,           // "running" stored before the hook, so a crash still owes the delete
  kRunHook,               // the reason's hook; the steps after it run only when it is done
  kRebootIfAsked,         // rollout: the reboot the hook asked for, when the policy has reboot steps
  kVerifyRollout,         // rollout: the policy's verify hook, when it has one
  kFinishRollout,         // rollout: this node's result recorded; its slot soaks or frees
  kRecordLeaderHandled,   // singleton: the handled state's digest onto the object
  kMarkFinalizerPending,  // finalizer mode: the delete succeeded, stored before the release
  kReleaseFinalizer,      // finalizer mode: this node's finalizer off
  kStoreHandled,          // the new diffbase (create, update, resume, adopt)
  kForget,                // the object's state goes (delete)
  kMarkSeen,              // unchanged since start: no resume for it later
  kDropBytes,             // handled: the cache may drop the object's bytes
  kEraseTombstone,        // a tombstone with nothing owed leaves the cache
};

const char* StepName(Step step);

struct Plan {
  std::string reason;  // the handler; "" when only housekeeping steps run
  ObjectMeta meta;
  std::string old_object;  // JSON of the last handled (or last seen, for delete) state
  std::string new_object;  // JSON of the current state; "" on delete
  std::string old_essence;
  std::string new_essence;  // "" on delete
  std::string target;       // what a retrying handler works towards
  ObjectPtr live_object;    // the object as it is now, when it still exists
  FactsPtr live_facts;      // its facts
  // The handler's progress to continue from (same target), or a fresh record.
  HandlerRecord progress;
  int earlier_failures = 0;  // failed attempts before this run: a success after them "recovers"
  // Set when a step finishes without a hook: what the log line says instead of a hook outcome.
  std::string without_hook;
  // The object could not be read (its essence): it waits for the next change.
  Status problem;
  // Not due yet: nothing runs; look again then.
  std::optional<TimePoint> wait_until;
  std::vector<Step> steps;
};

}  // namespace nodehook
