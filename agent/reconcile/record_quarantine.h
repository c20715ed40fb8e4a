// RecordQuarantine: objects whose state record on this node cannot be read (kCorrupt: a row
// edited by hand or damaged, while the rest of the file reads fine). Such an object is set aside
// on its own: no hook runs for it and it is not retried every few seconds, the node stays ready,
// and it is said once (log event `state record quarantined`, an ObjectQuarantined Event on the
// object) and counted (nodehook_state_records_quarantined). Nothing is deleted: a person looks at
// it (`nodehook state show UID`) and clears it with `nodehook state forget UID`, after which the
// object is handled as new. A later read that works lets it go.
// Thread-safe; borrows the metrics registry and EventRecorder, which must outlive it.
#pragma once

#include <set>
#include <string>

#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/base/status.h"
#include "agent/events/event_recorder.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

class RecordQuarantine {
 public:
  RecordQuarantine(Metrics* metrics, EventRecorder& events);

  // `why` (kCorrupt) came from reading `object`'s record; said the first time only.
  void Quarantine(const ResourceRef& resource, const ObjectMeta& object, const Status& why) EXCLUDES(mu_);
  // A read of `uid` worked: it is no longer set aside.
  void Cleared(const std::string& uid) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  void SetGauge() REQUIRES(mu_);

  Metrics* const metrics_;
  EventRecorder& events_;
  mutable Mutex mu_;
  std::set<std::string> uids_ GUARDED_BY(mu_);
};

}  // namespace nodehook
