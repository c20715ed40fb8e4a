// The agent's own pod's tolerations, against which a hook's NoExecute taints are judged. A
// NoExecute taint on the agent's own Node that its pod does not tolerate evicts the agent, and
// then no agent is left on the node to take the taint off again: the node is lost to nodehook
// until a person removes it. So a publication with such a taint is refused whole, like any other
// bad key (outputs_recorder.h). A toleration with tolerationSeconds only delays the eviction: it
// does not count. The tolerations are read once, from the pod (spec.tolerations, with those the
// DaemonSet controller adds), at start: a running pod's tolerations can only be added to, so what
// was read stays tolerated.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {

struct Toleration {
  std::string key;       // "" with operator Exists: every key
  std::string op;        // "Exists" or "Equal" ("" is Equal)
  std::string value;
  std::string effect;    // "" = every effect
  std::optional<int64_t> seconds;  // tolerationSeconds: tolerated for that long only
};

// Whether `t` matches `taint`, as the scheduler and the taint manager match them.
bool Tolerates(const Toleration& t, const OutputTaint& taint);

// spec.tolerations of a Pod's JSON. kInvalid when it is not a Pod's JSON.
Result<std::vector<Toleration>> ParseTolerations(const std::string& pod_json);

// What the agent knows of its own pod.
struct OwnTolerations {
  std::string pod;  // "namespace/name"
  // nullopt: not known (`unknown_why` says why): every NoExecute taint is refused.
  std::optional<std::vector<Toleration>> tolerations;
  std::string unknown_why;
};

// The first NoExecute taint of `outputs` that `own` does not tolerate for good, as an error
// naming the taint, the pod and what would tolerate it; else Ok.
Status CheckOwnPodTolerates(const PublishedOutputs& outputs, const OwnTolerations& own);

}  // namespace nodehook
