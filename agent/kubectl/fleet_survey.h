// Survey: asks every agent pod for its objects, a bounded number at a time, and keeps every
// pod in the result: one that does not answer (no IP yet, proxy error, timeout, a garbled
// answer) is reported with the reason, never dropped. Thread-safe if the source is.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kubectl/fleet_source.h"
#include "agent/kubectl/objects_answer.h"

namespace nodehook {

struct NodeAnswer {
  AgentPod pod;
  Status error;         // not ok: the pod is unreachable, and this says why
  NodeObjects objects;  // when error is ok

  // The node's name as the agent says it, else as the pod is scheduled, else the pod's name.
  std::string NodeName() const;
};

// `path` is asked of each pod (e.g. "/v1/objects?limit=500"); at most `parallel` at once.
// Answers come back in the sources' pod order. Fails only when the pods cannot be listed.
Result<std::vector<NodeAnswer>> Survey(FleetSource& source, const std::string& path, int parallel);

}  // namespace nodehook
