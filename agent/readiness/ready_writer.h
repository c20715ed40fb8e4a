// ReadyWriter: one resource's ready_condition, written on its objects by the fleet's one writer
// (ready_coordination.h). Each round judges every object against the board of the nodes'
// records (ready_judge.h) and writes the condition where its status, reason or
// observedGeneration would change: a merge patch of the status subresource that carries the
// other conditions as they are and the resourceVersion it judged, so a change made meanwhile
// (someone else's condition) fails it with a 409 and the next round, on the new version, makes
// it again. Changes within one round are one write; an object whose write the watch has not
// brought back yet is not written twice.
// Writes per object per state: the InProgress (or Failing) that starts it, and the True that ends
// it, plus one per failing/recovered transition.
// Not thread-safe: one thread calls Round. Borrows the client and clock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/readiness/ready_objects.h"
#include "agent/rollout/rules/board_view.h"

namespace nodehook {

class ReadyWriter {
 public:
  // `wall` stamps lastTransitionTime; `monotonic` times the backoff after the server failed.
  ReadyWriter(const WatchedResource& resource, KubeClient& client, Clock& wall, Clock& monotonic);

  // One round; returns the writes made.
  int Round(const BoardView& board, const std::vector<ReadyObjectView>& objects);

  int writes() const { return writes_; }

 private:
  struct Written {
    std::string based_on;  // the resourceVersion the write was judged on
    ReadyValue value;
    int64_t generation = 0;
  };
  // False: the server failed (unavailable, 429, ...): the round stops and backs off.
  bool Write(const ReadyObjectView& view, const ReadyValue& wanted);

  const WatchedResource& resource_;
  KubeClient& client_;
  Clock& wall_;
  Clock& monotonic_;
  TimePoint backoff_until_{};
  Duration backoff_{0};
  std::map<std::string, Written> written_;  // by uid: writes the watch has not brought back yet
  // by uid: the version whose write was refused as invalid or forbidden (logged once; tried
  // again on the next version)
  std::map<std::string, std::string> refused_;
  int writes_ = 0;
};

}  // namespace nodehook
