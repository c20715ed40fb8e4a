#include "agent/nodework/retired_node_steps.h"

#include <vector>

#include "agent/base/log.h"
#include "agent/config/config.h"
#include "agent/nodework/node_cordon.h"
#include "agent/nodework/node_steps.h"

namespace nodehook {
namespace {

// The marks on the Node that are the object's, under any rollout: they end in its uid's hash.
std::vector<std::string> MarksOf(const NodeState& node, const std::string& uid) {
  const std::string any = CordonMarkKey("", uid);
  const std::string tail = any.substr(std::string(kCordonMarkPrefix).size());  // "." + hash
  std::vector<std::string> keys;
  for (const auto& [key, value] : node.marks) {
    if (key.size() > tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0) {
      keys.push_back(key);
    }
  }
  return keys;
}

// Gives back every mark of the record's object; false when one could not be.
bool GiveBackMarks(NodeApi& api, const NodeStepsRecord& rec, const char* reason) {
  Result<NodeState> node = api.GetNode();
  if (!node.ok()) {
    Log(LogLevel::kError, "node cordon not given back",
        {{"uid", rec.uid}, {"resource", rec.resource}, {"error", node.status().ToString()},
         {"next", "try again at the next start"}});
    return false;
  }
  for (const std::string& key : MarksOf(*node, rec.uid)) {
    Result<CordonGiven> given = GiveCordonBack(api, key);
    if (!given.ok()) {
      Log(LogLevel::kError, "node cordon not given back",
          {{"uid", rec.uid}, {"resource", rec.resource}, {"error", given.status().ToString()},
           {"next", "try again at the next start; or by hand: kubectl uncordon this node and remove its annotation " +
                        key}});
      return false;
    }
    Log(LogLevel::kInfo, "node cordon given back",
        {{"uid", rec.uid}, {"resource", rec.resource}, {"mark", key}, {"reason", reason},
         {"outcome", CordonGivenName(*given)}, {"next", "forget the object's node steps"}});
  }
  return true;
}

// Whether an entry's NodeSteps go on with the record's steps. When the object's namespace is not
// known (no record of the object), any stepping entry of its resource may own them: kept.
bool StillStepping(StateStore& store, const NodeStepsRecord& rec, const std::vector<ResourceScope>& stepping) {
  bool namespaced_only = true;
  bool any = false;
  for (const ResourceScope& scope : stepping) {
    if (!scope.SameResource(rec.resource)) continue;
    any = true;
    namespaced_only = namespaced_only && !scope.namespace_name().empty();
  }
  if (!any) return false;
  if (!namespaced_only) return true;  // an entry of every namespace holds it
  Result<ObjectState> object = store.ReadObjectState(rec.uid);
  std::string namespace_name;
  if (object.ok() && object->record) {
    namespace_name = object->record->namespace_name;
  } else if (object.ok() && !object->progress.empty()) {
    namespace_name = object->progress.front().namespace_name;
  } else {
    return true;
  }
  for (const ResourceScope& scope : stepping) {
    if (scope.Holds(rec.resource, namespace_name)) return true;
  }
  return false;
}

}  // namespace

RetiredStepsOutcome GiveBackRetiredSteps(StateStore& store, NodeApi& api, const std::vector<ResourceScope>& stepping) {
  RetiredStepsOutcome outcome;
  Result<std::vector<NodeStepsRecord>> records = store.ListNodeSteps();
  if (!records.ok()) {
    Log(LogLevel::kWarn, "retired node steps unreadable",
        {{"error", records.status().ToString()}, {"next", "look for retired node steps at the next start"}});
    return outcome;
  }
  for (const NodeStepsRecord& rec : *records) {
    const bool deleted = StepOf(rec) == NodeStep::kDeleted;
    if (!deleted && StillStepping(store, rec, stepping)) continue;  // its NodeSteps goes on
    const char* reason = deleted ? "the object was deleted" : "the resource's rollout no longer has node steps";
    if (rec.cordoned && !deleted && StepOf(rec) == NodeStep::kFailed) {
      Log(LogLevel::kWarn, "node cordon kept for a person",
          {{"uid", rec.uid}, {"resource", rec.resource}, {"reason", reason},
           {"next", "the node failed that state: a person looks, then kubectl uncordon it and removes the "
                    "nodehook.io/cordoned- annotation"}});
      ++outcome.kept;
    } else if (rec.cordoned && !GiveBackMarks(api, rec, reason)) {
      ++outcome.left;
      continue;
    } else {
      ++outcome.given_back;
    }
    (void)store.DropNodeSteps(rec.uid);  // not dropped: looked at again at the next start
  }
  return outcome;
}

}  // namespace nodehook
