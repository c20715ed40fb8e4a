#include "agent/pipeline/state_metrics.h"

#include <sys/stat.h>

#include <utility>

namespace nodehook {
namespace {

// 0 for a file that does not exist (yet): an in-memory store, or no WAL since the last checkpoint.
double FileBytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
}

}  // namespace

StateMetrics::StateMetrics(Metrics* metrics, Clock& clock, std::string state_file, std::vector<std::string> resources)
    : metrics_(metrics), clock_(clock), state_file_(std::move(state_file)), resources_(std::move(resources)) {
  if (!metrics_) return;
  metrics_->GetCounter("store_garbage_collected_total", "Objects whose rows state garbage collection removed");
  collector_ = metrics_->AddCollector([this](Metrics& m) { Collect(m); });
}

StateMetrics::~StateMetrics() {
  if (metrics_ && collector_ != 0) metrics_->RemoveCollector(collector_);
}

void StateMetrics::Refresh(StoreSummary summary) {
  MutexLock lock(&mu_);
  latest_ = std::move(summary);
}

void StateMetrics::GarbageCollected(int64_t objects) {
  if (!metrics_ || objects <= 0) return;
  metrics_->GetCounter("store_garbage_collected_total", "").Increment(static_cast<uint64_t>(objects));
}

void StateMetrics::Collect(Metrics& m) {
  StoreSummary summary;
  {
    MutexLock lock(&mu_);
    summary = latest_;
  }
  int64_t oldest_ms = 0;
  auto counts_of = [&](const std::string& resource) {
    auto it = summary.by_resource.find(resource);
    return it == summary.by_resource.end() ? HandlerCounts{} : it->second;
  };
  std::vector<std::string> resources = resources_;
  for (const auto& [resource, counts] : summary.by_resource) resources.push_back(resource);  // e.g. a removed one
  for (const std::string& resource : resources) {
    HandlerCounts counts = counts_of(resource);
    m.GetGauge("handlers_pending_retry", "Handlers with failed attempts that are still being retried",
               {{"resource", resource}})
        .Set(static_cast<double>(counts.pending_retry));
    m.GetGauge("handlers_failed_permanently", "Handlers that gave up after their retry limits, until the object changes",
               {{"resource", resource}})
        .Set(static_cast<double>(counts.failed_permanently));
    if (counts.oldest_pending_since_ms != 0 && (oldest_ms == 0 || counts.oldest_pending_since_ms < oldest_ms)) {
      oldest_ms = counts.oldest_pending_since_ms;
    }
  }
  double oldest = oldest_ms == 0 ? 0.0 : static_cast<double>(ToMillis(clock_.Now()) - oldest_ms) / 1000.0;
  m.GetGauge("oldest_pending_retry_seconds", "Seconds since the first attempt of the oldest handler still retrying (0: none)")
      .Set(oldest < 0 ? 0 : oldest);
  double tombstone = summary.oldest_tombstone_since_ms == 0
                         ? 0.0
                         : static_cast<double>(ToMillis(clock_.Now()) - summary.oldest_tombstone_since_ms) / 1000.0;
  m.GetGauge("oldest_tombstone_seconds",
             "Seconds since the oldest deleted object whose delete hook has not succeeded yet was seen gone (0: none)")
      .Set(tombstone < 0 ? 0 : tombstone);
  for (const auto& [table, rows] : summary.rows) {
    m.GetGauge("store_rows", "This node's rows in the state file, by table", {{"table", table}})
        .Set(static_cast<double>(rows));
  }
  m.GetGauge("store_file_bytes", "Size of the state file").Set(FileBytes(state_file_));
  m.GetGauge("store_wal_bytes", "Size of the state file's write-ahead log (-wal)").Set(FileBytes(state_file_ + "-wal"));
}

}  // namespace nodehook
