// The cordon of a rollout's node steps: taken only where nobody else holds one, and given back
// only by the rollout whose mark (node_api.h) the Node carries. Someone else's cordon, before or
// during the work, is never undone. Functions over a NodeApi; each reads the Node first and
// writes conditioned on what it read, once more after a conflict. Thread-safe (as the NodeApi).
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/nodework/node_api.h"

namespace nodehook {

// The mark of a rollout's cordon for one object: kCordonMarkPrefix, the rollout id, "." and 12 hex
// digits of the object's uid. One per rollout and object: a node one object left cordoned (it
// failed there) stays so while another object's steps come and go.
std::string CordonMarkKey(const std::string& rid, const std::string& uid);

struct CordonTaken {
  bool ours = false;            // this rollout's mark is on the cordoned Node
  bool someone_elses = false;   // unschedulable before, without a nodehook mark: left alone
  std::vector<std::string> stale_marks{};  // marks found on the schedulable Node, removed
  ObjectMeta node{};                       // the Node as read, for Events about it
};
// Cordons the Node for the rollout (mark `key` = `value`), unless someone else cordoned it.
// A Node cordoned by another nodehook rollout gets this rollout's mark too. Marks on a
// schedulable Node are stale (someone uncordoned it and left them): removed in the same write,
// or every later rollout would take them for another one's live cordon and never uncordon.
Result<CordonTaken> TakeCordon(NodeApi& api, const std::string& key, const std::string& value);

enum class CordonGiven {
  kUncordoned,       // the mark and the cordon removed
  kOthersHold,       // the mark removed; another rollout's mark keeps the Node cordoned
  kUncordonedBefore, // someone uncordoned it meanwhile; the mark removed
  kNotOurs,          // the mark is gone: someone took the cordon over; left as it is
};
const char* CordonGivenName(CordonGiven given);
// Gives the cordon back (see CordonGiven).
Result<CordonGiven> GiveCordonBack(NodeApi& api, const std::string& key);

// Rewrites this rollout's mark to `value` (one that says the node failed), when the Node is still
// cordoned under it; otherwise leaves the Node as it is.
Status MarkCordonFailed(NodeApi& api, const std::string& key, const std::string& value);

// Whether the Node is still cordoned under this rollout's mark; false means someone uncordoned it
// (or took the mark off) during the work.
Result<bool> CordonHeld(NodeApi& api, const std::string& key);

}  // namespace nodehook
