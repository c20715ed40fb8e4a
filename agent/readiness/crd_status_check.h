// Whether a resource's objects can keep a ready_condition: its CustomResourceDefinition must
// serve the resource's version with a status subresource (the writer patches
// <plural>/<name>/status) whose schema keeps status.conditions (a structural schema prunes what
// it does not declare, and the condition would vanish without an error). Read once at start by
// whoever writes the condition (an agent with tuning.cross_node_writes "agents", or the steward).
// Stateless; thread-safe.
#pragma once

#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

// The name of the resource's CRD: "<plural>.<group>".
std::string CrdName(const ResourceRef& ref);

// Ok, or kInvalid naming the CRD and what it lacks; the client's error (kForbidden,
// kUnavailable, ...) when it cannot be read.
Status CheckReadyConditionCrd(KubeClient& client, const WatchedResource& resource);

// Every resource of `config` with a ready_condition, checked; a CRD that cannot be read for a
// passing reason (the server away, 429) is read again every `retry` until `stop`, logged once.
// kInvalid, kForbidden: the config is refused (the message names the CRD); kCancelled: stopped.
Status CheckReadyConditionCrds(KubeClient& client, const Config& config, const CancelToken& stop, Clock& clock,
                               Duration retry = std::chrono::seconds(2));

// The same on a CRD already read (its JSON).
Status CheckCrdKeepsConditions(const std::string& crd_json, const WatchedResource& resource);

}  // namespace nodehook
