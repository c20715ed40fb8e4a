// StateMetrics: what the state store holds, on /metrics, without /metrics ever touching SQLite.
// The housekeeping thread hands it a fresh StoreSummary every few seconds (Refresh); at scrape
// time a collector renders the latest one, so a busy database never slows a scrape:
//   nodehook_handlers_pending_retry{resource}      handlers with failed attempts still retrying
//   nodehook_handlers_failed_permanently{resource} handlers that gave up until the object changes
//   nodehook_oldest_pending_retry_seconds          since the first attempt of the oldest of those
//                                                  still retrying (0: none); grows between refreshes
//   nodehook_oldest_tombstone_seconds              since the oldest deleted object whose delete
//                                                  hook has not succeeded was seen gone (0: none)
//   nodehook_store_rows{table}                     this node's rows per table
//   nodehook_store_file_bytes, nodehook_store_wal_bytes   stat() of the file and its -wal
//   nodehook_store_garbage_collected_total         objects whose rows garbage collection removed
// A null registry turns every call into a no-op. Thread-safe; borrows the clock, which must
// outlive it.
#pragma once

#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "storage/state_store.h"

namespace nodehook {

class StateMetrics {
 public:
  // `resources`: ResourceRef::Id() of every watched resource, reported at 0 until they have any.
  StateMetrics(Metrics* metrics, Clock& clock, std::string state_file, std::vector<std::string> resources);
  ~StateMetrics();
  StateMetrics(const StateMetrics&) = delete;
  StateMetrics& operator=(const StateMetrics&) = delete;

  void Refresh(StoreSummary summary);
  void GarbageCollected(int64_t objects);

 private:
  void Collect(Metrics& m);

  Metrics* const metrics_;
  Clock& clock_;
  const std::string state_file_;
  const std::vector<std::string> resources_;
  Metrics::CollectorId collector_ = 0;
  Mutex mu_;
  StoreSummary latest_ GUARDED_BY(mu_);
};

}  // namespace nodehook
