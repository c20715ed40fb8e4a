// When `kubectl nodehook wait OBJECT` is done: every node that handles the object has handled its
// current state. Two sources, one verdict type:
//   - a resource with a rollout policy: the node Leases (rollout_view.h). Done when every node's
//     result for the object's uid is "done" for the current state digest; halted when the state's
//     rollout halted (max_failed_nodes, or a failed canary) and was not resumed. (The command
//     also asks the agents while the Leases are not complete: ungated reasons write no result.)
//   - any resource: the agents themselves (fleet_survey.h, GET /v1/objects?uid=UID). Done when
//     every agent lists the object with settled_resource_version equal to the object's current
//     metadata.resourceVersion and no pending handler. An agent that does not answer blocks (its
//     404 "knows no such object" is an answer: it does not list the object). Once
//     the object is gone: done when no agent lists it any more.
// Each verdict names every node that blocks and why. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/kubectl/fleet_survey.h"
#include "agent/kubectl/rollout_view.h"

namespace nodehook {

struct WaitBlocker {
  std::string node;
  std::string why;
};

struct WaitVerdict {
  enum class Kind { kDone, kPending, kHalted };
  Kind kind = Kind::kPending;
  std::string summary;  // one line for people: what is done, or why it halted
  int nodes = 0;        // nodes that handle the object (that answered, for the survey)
  std::vector<WaitBlocker> blockers;  // by node
};

WaitVerdict JudgeRolloutWait(const RolloutView& view);

// `live_resource_version`: the object's metadata.resourceVersion now; nullopt once it is gone.
WaitVerdict JudgeSurveyWait(const std::vector<NodeAnswer>& answers, const std::string& uid,
                            const std::optional<std::string>& live_resource_version);

// The blockers, one line each ("  node-b: ..."), escaped for the terminal.
std::string FormatBlockers(const WaitVerdict& verdict);

}  // namespace nodehook
