#include "agent/outputs/node_condition.h"

#include "agent/base/printable.h"
#include "agent/http/objects_endpoint.h"

namespace nodehook {
namespace {

std::string Objects(size_t n) { return std::to_string(n) + (n == 1 ? " object" : " objects"); }

}  // namespace

NodeConditionValue DeriveNodeCondition(const ResourceScope& scope, const std::vector<SharedSnapshotObject>& objects,
                                       const ResourceProgress& progress) {
  const std::string& resource_id = scope.id();
  size_t failing = 0;
  const SnapshotObject* first = nullptr;
  const SnapshotHandler* first_handler = nullptr;
  for (const SharedSnapshotObject& object : objects) {
    if (!scope.Holds(object->resource, object->namespace_name())) continue;
    for (const SnapshotHandler& h : object->handlers) {
      if (!IsFailing(h)) continue;
      if (failing++ == 0) first = object.get(), first_handler = &h;
      break;
    }
  }
  if (failing > 0) {
    std::string message = Objects(failing) + " failing on this node; " + first->Key() + " " + std::string(first_handler->handler);
    if (!first_handler->last_message.empty()) message += ": " + first_handler->last_message;
    return {"False", "HooksFailing", CutToLimit(message, kNodeConditionMessageLimit)};
  }
  if (!progress.synced) return {"Unknown", "Starting", "the first list of " + resource_id + " is not complete"};
  if (progress.unsettled > 0) {
    return {"Unknown", "InProgress",
            Objects(progress.unsettled) + " of " + std::to_string(progress.objects) + " in progress on this node"};
  }
  // No count here: while everything is handled, objects coming and going change nothing.
  return {"True", "AllHandled", "every object of " + resource_id + " is handled on this node"};
}

}  // namespace nodehook
