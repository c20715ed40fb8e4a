// Taints are one atomic list on the Node (spec.taints): server-side apply would take the whole
// list from the kubelet, the node controller and the people who taint nodes. So a resource's
// taints are written by a guarded read-modify-write: read the Node, keep every taint that is not
// this resource's, put this resource's in place of what it put there before, and send the list
// as a merge patch that carries the resourceVersion read, so a concurrent change fails it
// (kConflict: tried again next round) instead of being lost. A list already as wanted is not
// written. Stateless; thread-safe as the client.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"
#include "agent/outputs/published_outputs.h"

namespace nodehook {

// The taints `node_json` should hold: `view`'s taints without any of `before`'s or `ours`' key and
// effect, then `ours`; as JSON array text. Pure.
std::string TaintsWanted(const std::vector<std::string>& taints_json, const std::vector<OutputTaint>& taints,
                         const std::vector<OutputTaint>& before, const std::vector<OutputTaint>& ours);

// Replaces `before` (what this resource put on the Node earlier) by `ours` on `node`. Returns
// whether a write was needed (false: the Node held them already), or the error.
Result<bool> WriteTaints(KubeClient& client, const std::string& node, const std::vector<OutputTaint>& before,
                         const std::vector<OutputTaint>& ours);

}  // namespace nodehook
