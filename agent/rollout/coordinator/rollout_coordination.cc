#include "agent/rollout/coordinator/rollout_coordination.h"

#include <condition_variable>
#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "agent/base/log.h"
#include "agent/base/mutex.h"
#include "agent/election/elected_terms.h"
#include "agent/rollout/coordinator/cordoned_nodes.h"
#include "agent/rollout/rules/rollout_cordons.h"
#include "agent/rollout/board/rollout_board.h"

namespace nodehook {

std::string CoordinatorLeaseName(const std::string& rid) { return "nodehook-rollout-" + rid + "-coordinator"; }

std::string PickStandbys(const BoardView& board, const std::string& rid, const std::string& identity, size_t count) {
  auto fnv = [](const std::string& text) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    return h;
  };
  std::vector<std::pair<uint64_t, std::string>> ranked;
  for (const auto& [node, results] : board.nodes) {
    if (!NamedStandby(node, identity)) ranked.emplace_back(fnv(rid + "/" + node), node);
  }
  std::sort(ranked.begin(), ranked.end());
  std::string out;
  for (size_t i = 0; i < ranked.size() && i < count; ++i) out += (i ? "," : "") + ranked[i].second;
  return out;
}

RolloutCoordination::RolloutCoordination(const WatchedResource& resource, KubeClient& client, Clock& monotonic,
                                         const ServerClock& server, EventRecorder& events,
                                         RolloutCoordinationOptions options)
    : resource_(resource),
      client_(client),
      monotonic_(monotonic),
      server_(server),
      events_(events),
      options_(std::move(options)),
      lease_(client, options_.coordinator.namespace_name, CoordinatorLeaseName(RolloutIdOf(resource.ref))),
      elector_(lease_, monotonic, Roles(options_.election, "coordinate the rollout", "stop coordinating the rollout")) {
  elector_.SetNotes([this](LeaseRecord& record) {
    MutexLock lock(&notes_mu_);
    record.standbys = standbys_;
    record.fleet_size = fleet_size_;
    // An acquire writes the Lease it read: the predecessor's handover stays for this term to take up.
    if (coordinating_) record.handover = handover_;
  });
}

int RolloutCoordination::FleetSize() const {
  auto observed = elector_.Observed();
  return observed ? observed->fleet_size : 0;
}

namespace {

// Raised by the board's watch thread on every change, awaited by the coordinator's rounds.
class ChangeFlag {
 public:
  void Raise() {
    {
      MutexLock lock(&mu_);
      raised_ = true;
    }
    cv_.notify_one();
  }

  // Waits until raised or `most` has passed, then lowers the flag.
  void WaitAndLower(Duration most) {
    MutexLock lock(&mu_);
    mu_.WaitWith([&](std::unique_lock<std::mutex>& held) {
      cv_.wait_for(held, most, [&] {
        mu_.AssertHeld();
        return raised_;
      });
    });
    raised_ = false;
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  bool raised_ GUARDED_BY(mu_) = false;
};

}  // namespace

void RolloutCoordination::Run(const CancelToken& stop) {
  RunElectedTerms(elector_, stop, [&](const std::function<bool()>& leading) { Coordinate(stop, leading); });
}

void RolloutCoordination::Coordinate(const CancelToken& stop, const std::function<bool()>& leading) {
  const std::string rid = RolloutIdOf(resource_.ref);
  Log(LogLevel::kInfo, "rollout coordinator started",
      {{"resource", resource_.ref.Id()}, {"lease", CoordinatorLeaseName(rid)},
       {"next", "watch every Lease of the rollout and grant slots"}});
  RolloutBoard board(monotonic_);
  // Each change the watch brings (an ask, a result, a release) is judged at once.
  ChangeFlag changed;
  board.SetOnChange([&] { changed.Raise(); });
  ResourceRef leases = KubeLeaseClient::LeasesResource();
  leases.namespace_name = options_.coordinator.namespace_name;
  leases.label_selector = std::string(kRolloutLabel) + "=" + rid;
  CancelToken term;
  Watcher watcher(client_, leases, board, SystemClock::Instance(), options_.watch);
  std::thread watch([&] { watcher.Run(term); });
  // A rollout that cordons counts the Nodes it keeps cordoned against max_nodes: known from a watch
  // of the cordoned Nodes, before the first grant.
  RolloutCoordinatorOptions coordinator_options = options_.coordinator;
  std::unique_ptr<CordonedNodes> cordoned;
  std::unique_ptr<Watcher> node_watcher;
  std::thread node_watch;
  if (resource_.rollout->Cordons()) {
    cordoned = std::make_unique<CordonedNodes>(rid);
    node_watcher = std::make_unique<Watcher>(client_, CordonedNodesResource(), *cordoned, SystemClock::Instance(),
                                             options_.watch);
    node_watch = std::thread([&] { node_watcher->Run(term); });
    coordinator_options.cordoned = [&] { return cordoned->Nodes(); };
  }
  RolloutCoordinator coordinator(resource_, client_, server_, events_, coordinator_options);
  if (auto observed = elector_.Observed()) coordinator.TakeOver(observed->handover);
  {
    MutexLock lock(&notes_mu_);
    coordinating_ = true;
    handover_ = coordinator.Handover();
  }
  TimePoint pick_standbys_at{};
  while (leading()) {
    if (board.listed() && (!cordoned || cordoned->listed())) {
      coordinator.Round(board);
      std::string handover = coordinator.Handover();
      {
        MutexLock lock(&notes_mu_);
        handover_ = std::move(handover);
      }
      // The standbys and the fleet's size change only when nodes come and go: noted again every
      // few seconds, not every round (each copies the board).
      if (monotonic_.Now() >= pick_standbys_at) {
        const BoardView view = board.View();
        std::string picked = PickStandbys(view, rid, options_.election.identity, kStandbys);
        MutexLock lock(&notes_mu_);
        standbys_ = std::move(picked);
        fleet_size_ = static_cast<int>(view.nodes.size());
        pick_standbys_at = monotonic_.Now() + options_.election.retry_period * 5;
      }
    }
    changed.WaitAndLower(options_.round);
  }
  {
    MutexLock lock(&notes_mu_);
    coordinating_ = false;
  }
  term.Cancel();
  watch.join();
  if (node_watch.joinable()) node_watch.join();
  Log(LogLevel::kInfo, "rollout coordinator stopped",
      {{"resource", resource_.ref.Id()}, {"lease", CoordinatorLeaseName(rid)},
       {"next", stop.cancelled() ? "the agent stops" : "its term ended: watch only this node's Leases"}});
}

}  // namespace nodehook
