// StateStore: the agent's durable memory on the node. Everything is keyed by object uid and
// this agent's node name (fixed when the store is opened), so nothing is ever written to the
// watched objects. Implementations are thread-safe; each method is one atomic transaction.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "storage/stored_outcome.h"

namespace nodehook {

// The last state of an object that this node handled: its diffbase.
struct ObjectRecord {
  std::string uid;
  std::string resource;        // ResourceRef::Id(), e.g. "widgets.example.com/v1"
  std::string namespace_name;
  std::string name;
  std::string essence;         // JSON of the handled essence (spec, labels, annotations minus ignored paths)
  std::string last_object;     // JSON of the whole object as last handled: given to delete hooks
  int64_t handled_at_ms = 0;
};


// Progress of one handler (create, update, delete, resume, event) for one object.
struct HandlerRecord {
  std::string uid;
  std::string handler;
  std::string resource;        // identity, so progress is readable before any diffbase exists
  std::string namespace_name;
  std::string name;
  int retries = 0;               // failed attempts so far
  int64_t first_start_ms = 0;    // when the first attempt for this target started
  int64_t next_attempt_ms = 0;   // not before this time
  std::string last_outcome;      // a StoredOutcomeName (stored_outcome.h)
  std::string last_message;
  std::string target;            // digest of the essence this handler is working towards
  // The object as this handler last saw it: the delete hook's input when the object vanished
  // before any diffbase was stored (a create that was running when the agent was killed).
  std::string last_object;
};

// What an object's hooks published for this node ("node" in a result file), kept until the
// object is forgotten. `outputs` is JSON text the agent writes and reads (outputs/published_outputs.h).
struct NodeOutputsRecord {
  std::string uid;
  std::string resource;
  std::string namespace_name;
  std::string name;
  std::string outputs;
  int64_t updated_at_ms = 0;
};

// Where this node's steps around a rollout's gated hook stand for one object (schema version 7):
// written before each step, so an agent that restarts resumes the step it was in, and kept while
// the Node stays cordoned by those steps. Times are wall-clock milliseconds.
struct NodeStepsRecord {
  std::string uid;
  std::string resource;
  std::string state;              // the object state (its digest) the steps work towards
  std::string step;               // "cordoning", "draining", "running", "rebooting", "verifying",
                                  // "soaking", "uncordoning", "failed"
  bool cordoned = false;          // these steps cordoned the Node (and annotated it so)
  bool was_unschedulable = false; // someone else had cordoned the Node before the steps
  std::string boot_id;            // "rebooting": the boot ID before the reboot
  bool reboot_started = false;    // "rebooting": the reboot command was started (never twice);
                                  // false: recorded, the command not run yet (the slot not held)
  int64_t step_started_ms = 0;
  // A drain's or a reboot's timeout counts time inside the slot only (schema version 8): each
  // look at the step adds the time since the last one, at most the wait that look asked for (and
  // one poll of lateness), so an agent away or a node outside its slot adds nothing.
  int64_t step_spent_ms = 0;      // counted against the step's timeout so far
  int64_t step_seen_ms = 0;       // the last look (0: none yet)
  int64_t step_wait_ms = 0;       // the wait the last look asked for
  std::string pods_left;          // "draining": the pods still to go, "namespace/name" per line
  int evictions = 0;              // "draining": Eviction calls made (refusals included)
  std::string message;            // the last word on the step, e.g. what blocks the drain
};

// A "retry now" asked for by `nodehook state retry`, waiting for the running agent to take it.
struct RetryRequest {
  std::string uid;
  std::string handler;          // "" = every pending handler of the object
  int64_t requested_at_ms = 0;
};

// A handler that a retry request made due.
struct RetriedHandler {
  std::string handler;
  int retries = 0;       // failed attempts so far
  bool revived = false;  // it had failed permanently and now runs once more
};

// One observed change waiting for (or retrying) the raw "event" hook. Stored before the hook
// runs, so a failing event hook is retried after a restart instead of being dropped.
struct EventRecord {
  int64_t seq = 0;            // assigned by AppendEvent; handling order per object
  std::string uid;
  std::string resource;
  std::string namespace_name;
  std::string name;
  std::string type;           // ADDED, MODIFIED or DELETED
  std::string object;         // the object as observed (last state for DELETED)
  int64_t observed_at_ms = 0;
  int retries = 0;
  int64_t next_attempt_ms = 0;
  std::string last_message;
};

// What one garbage collection removed.
struct GarbageStats {
  int64_t objects_purged = 0;   // uids whose rows were all removed
  int64_t handler_rows_purged = 0;
};

// Handler progress of one resource, counted for metrics.
struct HandlerCounts {
  // Handlers (and stored events of the "event" hook) with failed attempts that have neither
  // succeeded nor given up yet.
  int64_t pending_retry = 0;
  int64_t failed_permanently = 0;
  int64_t oldest_pending_since_ms = 0;  // first attempt of the oldest pending retry; 0 = none
};

// Names a moment of the store's content: two stamps read from one store are equal only when
// nothing was written in between, by this process or any other (`nodehook state retry` writes
// from outside the agent).
struct StoreStamp {
  int64_t others = 0;  // changes committed by other connections (SQLite's data_version)
  int64_t own = 0;     // rows this store changed
  bool operator==(const StoreStamp& o) const { return others == o.others && own == o.own; }
  bool operator!=(const StoreStamp& o) const { return !(*this == o); }
};

// What the store holds, counted (nodehook_handlers_*, nodehook_store_rows).
struct StoreSummary {
  std::map<std::string, HandlerCounts> by_resource;  // only resources with such handlers
  std::map<std::string, int64_t> rows;               // this node's rows, by table
  // When the oldest deleted object whose delete hook has not succeeded yet was seen gone; 0 = none.
  int64_t oldest_tombstone_since_ms = 0;
};

// What a decision about one object reads from the store: its diffbase and its handlers' progress.
struct ObjectState {
  std::optional<ObjectRecord> record;
  std::vector<HandlerRecord> progress;  // by handler name
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  virtual const std::string& node_name() const = 0;

  // Reads of one uid answer kCorrupt when one of its rows is not what this store writes (edited
  // by hand, damaged): that object is quarantined on its own. Lists across objects leave such
  // rows out.
  virtual Result<std::optional<ObjectRecord>> GetObject(const std::string& uid) = 0;
  virtual Result<std::vector<ObjectRecord>> ListObjects(const std::string& resource) = 0;

  virtual Result<std::optional<HandlerRecord>> GetHandler(const std::string& uid,
                                                          const std::string& handler) = 0;
  virtual Result<std::vector<HandlerRecord>> ListHandlers(const std::string& uid) = 0;
  // GetObject and ListHandlers of one uid as of one moment (one read transaction): what the
  // agent reads for each handled change. kCorrupt as either.
  virtual Result<ObjectState> ReadObjectState(const std::string& uid) = 0;
  // Every handler record of this node, for `nodehook state list` and restart scheduling.
  virtual Result<std::vector<HandlerRecord>> ListAllHandlers() = 0;
  // Counts only (aggregate queries, no row is copied): cheap enough to run every few seconds.
  virtual Result<StoreSummary> Summarize() = 0;
  // The content's stamp now; nullopt when this store cannot tell (a reader then assumes that
  // anything may have changed).
  virtual std::optional<StoreStamp> Stamp() { return std::nullopt; }
  // Every diffbase of this node without its essence and last_object (left empty), ordered as
  // ListAllObjects: for the agent's /v1/objects snapshot, refreshed every few seconds.
  virtual Result<std::vector<ObjectRecord>> ListObjectSummaries() = 0;
  // One diffbase as ListObjectSummaries reads it (essence and last_object empty): for the
  // snapshot's read of an object that changed. By default GetObject with the bodies dropped.
  virtual Result<std::optional<ObjectRecord>> GetObjectSummary(const std::string& uid) {
    Result<std::optional<ObjectRecord>> object = GetObject(uid);
    if (object.ok() && object->has_value()) {
      std::string().swap((*object)->essence);
      std::string().swap((*object)->last_object);
    }
    return object;
  }

  // Upserts one handler's progress (a failed or unfinished attempt).
  virtual Status RecordAttempt(const HandlerRecord& record) = 0;

  // A handler completed: stores the new diffbase and drops that handler's progress row,
  // in one transaction, so a restart never re-runs a completed hook.
  virtual Status RecordHandled(const ObjectRecord& object, const std::string& handler) = 0;

  // The object is gone and its delete handling finished: forgets the object and all its handlers
  // (and its gone mark and retry requests).
  virtual Status Forget(const std::string& uid) = 0;

  // ---- Upkeep (issue 5). Defaults are harmless no-ops so other implementations (fakes) keep
  // compiling; SqliteStateStore implements all of them. See docs/state.md. ----

  // Every diffbase of this node, ordered by resource, namespace, name.
  virtual Result<std::vector<ObjectRecord>> ListAllObjects() { return std::vector<ObjectRecord>(); }

  // The agent saw the object disappear (DELETED event, or missing from a relist) at `gone_at_ms`.
  // Idempotent: the earliest time is kept. RecordHandled/RecordAttempt clear the mark (an object
  // that left a label selector may come back with the same uid).
  virtual Status MarkGone(const std::string& /*uid*/, int64_t /*gone_at_ms*/) { return Status::Ok(); }

  // Purges every uid of this node that is garbage: marked gone at or before now_ms - ttl_ms, with
  // no diffbase (a diffbase of a gone object is a tombstone whose delete hook must still run) and
  // no "delete" handler row. Its remaining handler rows (create/update/resume/... of an object
  // that no longer exists) and its gone mark are deleted; then free pages are returned to the
  // file system (incremental vacuum).
  virtual Result<GarbageStats> CollectGarbage(int64_t /*now_ms*/, int64_t /*ttl_ms*/) { return GarbageStats(); }

  // Gives up on deletions whose delete hook kept failing: forgets every object of this node
  // marked gone at or before now_ms - ttl_ms that still has a diffbase and whose delete hook has
  // failed at least once, with its handlers, retry requests and events. A deletion whose hook
  // has not run yet (waiting for a rollout slot, a window, a paused rollout) is kept until it
  // runs or a person forgets it. Returns the uids forgotten.
  virtual Result<std::vector<std::string>> ExpireTombstones(int64_t /*now_ms*/, int64_t /*ttl_ms*/) {
    return std::vector<std::string>();
  }

  // After a corrupt state file was moved aside the store starts empty; while this flag is set the
  // reconciler should adopt objects it has no diffbase for (store their diffbase without running
  // create) instead of treating them as new. Cleared by the agent after its first full relist.
  virtual Result<bool> AdoptExistingPending() { return false; }
  virtual Status SetAdoptExisting(bool /*pending*/) { return Status::Ok(); }

  // `nodehook state retry` and POST /v1/retry: sets next_attempt_ms of the object's pending
  // handlers (one, or all when `handler` is "") to now_ms, revives permanent failures (their
  // outcome becomes kOutcomeRetryRequested, so they run once more) and leaves a retry request for
  // the running agent. Handlers of an object marked gone are left out, except delete, since
  // nothing would run them. Returns the handlers made due; kNotFound when there is none.
  virtual Result<std::vector<RetriedHandler>> RequestRetry(const std::string& /*uid*/, const std::string& /*handler*/,
                                                           int64_t /*now_ms*/) {
    return InvalidError("this state store does not support retry requests");
  }
  // ---- Raw event log (the "event" hook). ----
  virtual Status AppendEvent(const EventRecord& /*event*/) { return Status::Ok(); }
  // This object's unhandled events, oldest first.
  virtual Result<std::vector<EventRecord>> PendingEvents(const std::string& /*uid*/) {
    return std::vector<EventRecord>();
  }
  virtual Status RecordEventAttempt(int64_t /*seq*/, int /*retries*/, int64_t /*next_attempt_ms*/,
                                    const std::string& /*message*/) {
    return Status::Ok();
  }
  virtual Status CompleteEvent(int64_t /*seq*/) { return Status::Ok(); }
  // Objects of `resource` in `namespace_name` ("" = every namespace) with unhandled events, for
  // queueing them after a restart.
  virtual Result<std::vector<std::string>> UidsWithPendingEvents(const std::string& /*resource*/,
                                                                 const std::string& /*namespace_name*/) {
    return std::vector<std::string>();
  }

  // Returns and removes every pending retry request of this node, oldest first.
  virtual Result<std::vector<RetryRequest>> TakeRetryRequests() { return std::vector<RetryRequest>(); }

  // ---- Per-node notes that outlive restarts (the metadata table), e.g. which finalizers this
  // node may hold. nullopt: never written. ----
  virtual Result<std::optional<std::string>> ReadNote(const std::string& key) = 0;
  // Node outputs: one record per object, removed with the object by Forget (and by garbage
  // collection and tombstone expiry). Putting a record with empty `outputs` removes it.
  virtual Result<std::optional<NodeOutputsRecord>> GetNodeOutputs(const std::string& uid) = 0;
  virtual Result<std::vector<NodeOutputsRecord>> ListNodeOutputs(const std::string& resource) = 0;
  virtual Status PutNodeOutputs(const NodeOutputsRecord& record) = 0;
  // Node steps: one record per object, put before each step and dropped once the steps are over
  // (not by Forget: a deleted object's cordon is undone after its state is forgotten).
  virtual Result<std::optional<NodeStepsRecord>> GetNodeSteps(const std::string& uid) = 0;
  virtual Result<std::vector<NodeStepsRecord>> ListNodeSteps() = 0;  // every record of this node
  virtual Status PutNodeSteps(const NodeStepsRecord& record) = 0;
  virtual Status DropNodeSteps(const std::string& uid) = 0;
  virtual Status WriteNote(const std::string& key, const std::string& value) = 0;
};

}  // namespace nodehook
