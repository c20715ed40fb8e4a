// `kubectl nodehook wait OBJECT`: polls (every WaitOptions::poll) until every node that handles the
// object has handled its current state (fleet_wait.h), then prints the verdict. From the rollout
// Leases for a resource with a rollout policy (and, while they are not complete, the agents: a
// reason the policy does not gate writes no result), else from the agents through the fleet
// survey, resolving the object's group and version first when not spelled. The clock and the sleep
// are injected, so tests run a wait instantly. Not thread-safe (one call).
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "agent/base/clock.h"
#include "agent/kubectl/fleet_source.h"
#include "agent/kubectl/fleet_wait.h"
#include "agent/kubectl/object_spec.h"
#include "agent/kubectl/rollout_cluster.h"
#include "agent/kubectl/rollout_view.h"

namespace nodehook {

struct WaitOptions {
  Duration timeout{0};
  std::string timeout_text;  // as given (--timeout), for "timed out after 5m"
  Duration poll{1000};
  int parallel = 16;             // agents asked at once
  std::string agents_namespace;  // where the agent pods are
};

struct WaitTime {
  const Clock* clock = nullptr;        // the deadline and the polls
  std::function<int64_t()> server_now_ms;  // by which slots, soaks and windows are judged
  std::function<void(Duration)> sleep;
  WindowJudge windows = KubectlWindowNow;
};

// The agents to ask, made only when the wait gets that far (making it may log about the kubeconfig).
using AgentsFleet = std::function<Result<std::unique_ptr<FleetSource>>()>;

// Exit codes: 0 done (or the object was deleted); 1 object or rollout not found, or the API
// refused; 2 no agents to ask for a resource without a rollout policy; 4 timed out; 5 the
// rollout halted. Blockers go to `out`, failures to `err`.
int WaitForObject(RolloutCluster& cluster, const AgentsFleet& make_fleet, const ObjectSpec& spec,
                  const WaitOptions& options, const WaitTime& time, std::ostream& out, std::ostream& err);

// "90s", "5m", "1h30m", "45" (seconds). kInvalid otherwise.
Result<Duration> ParseWaitDuration(const std::string& text);

}  // namespace nodehook
