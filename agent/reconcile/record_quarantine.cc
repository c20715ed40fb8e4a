#include "agent/reconcile/record_quarantine.h"

#include "agent/base/log.h"

namespace nodehook {

RecordQuarantine::RecordQuarantine(Metrics* metrics, EventRecorder& events) : metrics_(metrics), events_(events) {
  MutexLock lock(&mu_);
  SetGauge();  // 0 from the start, for alerts on > 0
}

void RecordQuarantine::Quarantine(const ResourceRef& resource, const ObjectMeta& object, const Status& why) {
  {
    MutexLock lock(&mu_);
    if (!uids_.insert(object.uid).second) return;
    SetGauge();
  }
  Log(LogLevel::kError, "state record quarantined",
      {{"resource", resource.Id()}, {"object", object.Key()}, {"uid", object.uid}, {"error", why.ToString()},
       {"next", "no hook runs for it here until a person looks (nodehook state show " + object.uid +
                    ") and clears it (nodehook state forget " + object.uid + "); the node stays ready"}});
  events_.Quarantined(resource, object,
                      "its state record on this node cannot be read (" + why.message() +
                          "); no hook runs for it here until `nodehook state forget " + object.uid + "`");
}

void RecordQuarantine::Cleared(const std::string& uid) {
  MutexLock lock(&mu_);
  if (uids_.erase(uid) == 0) return;
  SetGauge();
  Log(LogLevel::kInfo, "state record readable again", {{"uid", uid}, {"next", "handle it as usual"}});
}

size_t RecordQuarantine::size() const {
  MutexLock lock(&mu_);
  return uids_.size();
}

void RecordQuarantine::SetGauge() {
  if (!metrics_) return;
  metrics_->GetGauge("state_records_quarantined", "Objects whose state record on this node cannot be read, set aside")
      .Set(static_cast<double>(uids_.size()));
}

}  // namespace nodehook
