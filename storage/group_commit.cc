#include "storage/group_commit.h"

namespace nodehook {

Status GroupCommit::Submit(const char* operation, const Write& write) {
  Writer self;
  self.operation = operation;
  self.write = &write;
  MutexLock lock(&mu_);
  queue_.push_back(&self);
  // A leader ahead of us may take our write into its group; else we lead once at the front.
  mu_.Wait(self.cv, [&] {
    mu_.AssertHeld();
    return self.done || queue_.front() == &self;
  });
  if (self.done) return self.status;

  std::vector<Writer*> group;
  std::vector<const Write*> writes;
  std::string operations;
  for (Writer* w : queue_) {
    if (group.size() == kMaxGroup) break;
    group.push_back(w);
    writes.push_back(w->write);
    if (("+" + operations + "+").find(std::string("+") + w->operation + "+") == std::string::npos) {
      operations += operations.empty() ? w->operation : std::string("+") + w->operation;
    }
  }
  Status status;
  {
    MutexUnlock unlock(&mu_);
    // Writers that queue from now on wait for the next group: the one being written is closed.
    status = run_batch_(writes, operations);
  }
  for (Writer* w : group) {
    queue_.pop_front();  // the group is the queue's head, in order
    w->status = status;
    w->done = true;
    if (w != &self) w->cv.notify_one();
  }
  if (!queue_.empty()) queue_.front()->cv.notify_one();  // the next leader
  return status;
}

size_t GroupCommit::QueuedForTesting() {
  MutexLock lock(&mu_);
  return queue_.size();
}

}  // namespace nodehook
