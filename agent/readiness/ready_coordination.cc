#include "agent/readiness/ready_coordination.h"

#include <atomic>
#include <thread>

#include "agent/base/log.h"
#include "agent/election/elected_terms.h"
#include "agent/readiness/ready_objects.h"
#include "agent/readiness/ready_records.h"
#include "agent/readiness/ready_writer.h"
#include "agent/rollout/board/rollout_board.h"
#include "agent/rollout/coordinator/rollout_coordination.h"  // PickStandbys

namespace nodehook {

namespace {
// Rounds without a change before the writer judges everything again anyway.
constexpr int kRecheckRounds = 10;
}  // namespace

std::string ReadyWriterLeaseName(const std::string& rid) { return "nodehook-ready-" + rid + "-writer"; }

ReadyCoordination::ReadyCoordination(const WatchedResource& resource, KubeClient& client, Clock& monotonic,
                                     ReadyCoordinationOptions options)
    : resource_(resource),
      client_(client),
      monotonic_(monotonic),
      options_(std::move(options)),
      lease_(client, options_.namespace_name, ReadyWriterLeaseName(RolloutIdOf(resource.ref))),
      elector_(lease_, monotonic, Roles(options_.election, "write the ready condition", "stop writing the ready condition")) {
  elector_.SetNotes([this](LeaseRecord& record) {
    MutexLock lock(&notes_mu_);
    record.standbys = standbys_;
  });
}

void ReadyCoordination::Run(const CancelToken& stop) {
  RunElectedTerms(elector_, stop, [&](const std::function<bool()>& leading) { Write(stop, leading); });
}

void ReadyCoordination::Write(const CancelToken& stop, const std::function<bool()>& leading) {
  const std::string rid = RolloutIdOf(resource_.ref);
  const std::string lease = ReadyWriterLeaseName(rid);
  Log(LogLevel::kInfo, "ready writer started",
      {{"resource", resource_.ref.Id()}, {"lease", lease}, {"condition", resource_.ready_condition},
       {"next", "watch the nodes' records and the objects; write the condition where it changes"}});
  std::atomic<bool> changed{false};
  auto on_change = [&changed] { changed = true; };
  RolloutBoard board(monotonic_);
  board.SetOnChange(on_change);
  ReadyObjects objects(resource_);
  objects.SetOnChange(on_change);
  ResourceRef records = KubeLeaseClient::LeasesResource();
  records.namespace_name = options_.namespace_name;
  records.label_selector = ReadyRecordsSelector(rid);
  CancelToken term;
  Watcher records_watch(client_, records, board, SystemClock::Instance(), options_.watch);
  Watcher objects_watch(client_, resource_.ref, objects, SystemClock::Instance(), options_.watch);
  std::thread records_thread([&] { records_watch.Run(term); });
  std::thread objects_thread([&] { objects_watch.Run(term); });
  ReadyWriter writer(resource_, client_, SystemClock::Instance(), monotonic_);
  int quiet_rounds = 0;
  bool caught_up = false;
  TimePoint pick_standbys_at{};
  while (leading()) {
    const bool judge = changed.exchange(false) || ++quiet_rounds >= kRecheckRounds;  // a recheck ends a backoff
    // Both lists first: judged on a partial board, every object would be "in progress".
    if (judge && board.listed() && objects.listed()) {
      quiet_rounds = 0;
      std::vector<ReadyObjectView> all = objects.Snapshot();
      const int written = writer.Round(board.View(), all);
      if (!caught_up) {
        caught_up = true;
        Log(LogLevel::kInfo, "ready writer caught up",
            {{"resource", resource_.ref.Id()}, {"objects", all.size()}, {"written", written},
             {"next", "write the condition where it changes"}});
      }
    }
    // The standbys change only when nodes come and go: picked again every few seconds.
    if (board.listed() && monotonic_.Now() >= pick_standbys_at) {
      std::string picked = PickStandbys(board.View(), rid, options_.election.identity, kStandbys);
      MutexLock lock(&notes_mu_);
      standbys_ = std::move(picked);
      pick_standbys_at = monotonic_.Now() + options_.election.retry_period * 5;
    }
    // A change is judged at the next round, not at once: the changes of a round are one write.
    if (!SleepUnlessCancelled(monotonic_, options_.round, stop)) break;
  }
  term.Cancel();
  records_thread.join();
  objects_thread.join();
  Log(LogLevel::kInfo, "ready writer stopped",
      {{"resource", resource_.ref.Id()}, {"lease", lease}, {"writes", writer.writes()},
       {"next", stop.cancelled() ? "stop" : "its term ended: another candidate writes"}});
}

}  // namespace nodehook
