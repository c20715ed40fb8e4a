#include "agent/rollout/rollout_coordination.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "agent/base/log.h"
#include "agent/rollout/rollout_board.h"

namespace nodehook {

std::string CoordinatorLeaseName(const std::string& rid) { return "nodehook-rollout-" + rid + "-coordinator"; }

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
      elector_(lease_, monotonic, options_.election) {}

void RolloutCoordination::Run(const CancelToken& stop) {
  std::mutex mu;
  std::condition_variable cv;
  bool leading = false;
  elector_.SetOnChange([&](bool now) {
    {
      std::lock_guard<std::mutex> lock(mu);
      leading = now;
    }
    cv.notify_all();
  });
  CancelToken election_stop;
  std::thread election([this, &election_stop] { elector_.Run(election_stop); });
  {
    CancelRegistration wake(stop, [&] {
      std::lock_guard<std::mutex> lock(mu);
      cv.notify_all();
    });
    auto is_leading = [&] {
      std::lock_guard<std::mutex> lock(mu);
      return leading && !stop.cancelled();
    };
    std::unique_lock<std::mutex> lock(mu);
    while (!stop.cancelled()) {
      cv.wait(lock, [&] { return leading || stop.cancelled(); });
      if (stop.cancelled()) break;
      lock.unlock();
      Coordinate(stop, is_leading);
      lock.lock();
    }
  }
  election_stop.Cancel();
  election.join();
  elector_.SetOnChange(nullptr);
}

void RolloutCoordination::Coordinate(const CancelToken& stop, const std::function<bool()>& leading) {
  const std::string rid = RolloutIdOf(resource_.ref);
  Log(LogLevel::kInfo, "rollout coordinator started",
      {{"resource", resource_.ref.Id()}, {"lease", CoordinatorLeaseName(rid)},
       {"next", "watch every Lease of the rollout and grant slots"}});
  RolloutBoard board(monotonic_);
  // Each change the watch brings (an ask, a result, a release) is judged at once.
  std::mutex change_mu;
  std::condition_variable change_cv;
  bool changed = false;
  board.SetOnChange([&] {
    {
      std::lock_guard<std::mutex> lock(change_mu);
      changed = true;
    }
    change_cv.notify_one();
  });
  ResourceRef leases = KubeLeaseClient::LeasesResource();
  leases.namespace_name = options_.coordinator.namespace_name;
  leases.label_selector = std::string(kRolloutLabel) + "=" + rid;
  CancelToken term;
  Watcher watcher(client_, leases, board, SystemClock::Instance(), options_.watch);
  std::thread watch([&] { watcher.Run(term); });
  RolloutCoordinator coordinator(resource_, client_, server_, events_, options_.coordinator);
  while (leading()) {
    if (board.listed()) coordinator.Round(board);
    std::unique_lock<std::mutex> lock(change_mu);
    change_cv.wait_for(lock, options_.round, [&] { return changed; });
    changed = false;
  }
  term.Cancel();
  watch.join();
  Log(LogLevel::kInfo, "rollout coordinator stopped",
      {{"resource", resource_.ref.Id()}, {"lease", CoordinatorLeaseName(rid)},
       {"next", stop.cancelled() ? "the agent stops" : "its term ended: watch only this node's Leases"}});
}

}  // namespace nodehook
