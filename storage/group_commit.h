// GroupCommit: concurrent writers share one transaction, as leveldb's write batch group does.
// A writer queues its write; the writer at the head of the queue becomes the leader, takes every
// write queued by then (up to kMaxGroup) and hands them to the batch runner, which runs them in
// one transaction. Each Submit returns only once the transaction holding its write has
// committed, with that transaction's status: a failing transaction fails every writer in it, so
// no caller is told "done" for a write that was rolled back.
//
// Why: one commit (WAL append, lock, fsync under synchronous=FULL) per change per worker was
// most of the store's cost; with N workers a group of up to N writes costs one.
// Ownership: holds the batch runner; writers own their writes and outlive their Submit call.
// Thread-safe: Submit may be called from any number of threads.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/base/status.h"

namespace nodehook {

class GroupCommit {
 public:
  // One write: statements run inside the open transaction. Its error fails the whole group.
  using Write = std::function<Status()>;
  // Runs `writes` (in queue order) in one transaction and commits it; returns the first error,
  // after rolling back. `operation` names the group in errors: the writes' distinct operations
  // joined by "+", e.g. "RecordHandled" or "RecordAttempt+RecordHandled". Called by one leader
  // at a time.
  using BatchRunner = std::function<Status(const std::vector<const Write*>& writes, const std::string& operation)>;

  static constexpr size_t kMaxGroup = 64;

  explicit GroupCommit(BatchRunner run_batch) : run_batch_(std::move(run_batch)) {}
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Returns once `write` was committed (Ok) or its group failed (that error). `operation` is a
  // literal naming the write in errors.
  Status Submit(const char* operation, const Write& write);

  // Writers queued now, the leader's group included. For tests that line writers up.
  size_t QueuedForTesting();

 private:
  struct Writer {
    const char* operation;
    const Write* write;
    Status status;
    bool done = false;
    std::condition_variable cv;
  };

  const BatchRunner run_batch_;
  Mutex mu_;
  std::deque<Writer*> queue_ GUARDED_BY(mu_);  // the front is the leader or the next one
};

}  // namespace nodehook
