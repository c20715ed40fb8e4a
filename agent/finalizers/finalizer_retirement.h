// FinalizerRetirement: after a config change, the finalizers this node may have left on objects
// of a resource it no longer serves in that mode come off (a resource removed from the config,
// or switched off `finalizer` or `singleton`). Without it they stay for ever: no agent would
// remove them, and deleting the objects, their namespace or the CRD hangs.
//
//   Load()  reads the finalizer domains this node recorded in its state file
//           (finalizer_domains.h), records what the config serves now (before any claim), and
//           keeps the rest as retired until released.
//   Step()  one pass over the retired domains:
//           - this node's own finalizer comes off every object of a retired node domain at once:
//             it is this node's, and this node no longer serves it (other nodes' stay: each
//             node releases its own when it runs the new config, so a rolling config update
//             never races an agent still on the old one);
//           - nodehook.io/singleton comes off a retired singleton domain only once no agent pod
//             alike to this one runs an older pod template (agent_revisions.h): an agent still
//             on the old config could be the leader and claim it again;
//           objects a served domain still covers keep theirs. A domain is forgotten once swept.
// No delete hook runs for what is released. Errors (a 403 when the rights went with the config,
// an unreachable API server) are logged and tried again with backoff; a resource the API server
// no longer serves (its CRD deleted) leaves nothing to release.
//
// Thread-safe: Run (or Step) on one thread; pending() from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/finalizers/finalizer_domains.h"
#include "agent/kube/client/kube_client.h"
#include "storage/state_store.h"

namespace nodehook {

struct RetirementOptions {
  std::string own_finalizer;             // this node's, FinalizerName(node)
  std::vector<FinalizerDomain> serving;  // DomainsServed(config)
  // The agent pods still on another pod template (OlderAgentPods::Find); unset when the agent's
  // own pod is not known (no POD_NAMESPACE/POD_NAME): retired singleton domains then wait.
  std::function<Result<std::vector<std::string>>()> pods_on_other_revisions;
  // A Node Event: reason, warning or not, note. May be null.
  std::function<void(const std::string& reason, bool warning, const std::string& note)> node_event;
  Duration first_retry = std::chrono::seconds(5);
  Duration max_retry = std::chrono::minutes(5);
};

class FinalizerRetirement {
 public:
  FinalizerRetirement(KubeClient& client, StateStore& store, Clock& clock, RetirementOptions options);

  // Ok once the domains are recorded; an error (the state file) leaves Step to try again.
  Status Load();
  // Sweeps what is due; when to call again (nullopt: nothing left to release).
  std::optional<TimePoint> Step();
  // Load, then Step until nothing is left or `stop`.
  void Run(const CancelToken& stop);

  // Retired domains not yet released (the gauge nodehook_retired_finalizer_domains).
  size_t pending() const { return pending_.load(); }

 private:
  struct Retired {
    FinalizerDomain domain;
    TimePoint due{};
    Duration backoff{0};
    std::string last_wait;  // the last reason it waited, logged once per change
  };
  struct Outcome {
    enum State { kDone, kWaiting, kFailed } state;
    std::string why;  // kWaiting, kFailed: what for, what went wrong
  };
  Outcome Sweep(const FinalizerDomain& domain);
  // Records recorded_ (the state file) as what this node may hold.
  Status Record();

  KubeClient& client_;
  StateStore& store_;
  Clock& clock_;
  const RetirementOptions options_;
  bool loaded_ = false;
  std::vector<FinalizerDomain> recorded_;  // what the state file says this node may hold
  std::string note_;                       // the note as the state file has it ("" = none)
  std::vector<Retired> retired_;
  std::atomic<size_t> pending_{0};
  Mutex mu_;  // for the wait in Run
  std::condition_variable cv_;
};

}  // namespace nodehook
