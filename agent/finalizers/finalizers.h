// Per-node finalizers (opt-in per watched resource, for multi-step deletion). Each agent owns one
// finalizer on the object, named after its node, and removes only its own once its delete hook
// finished. Every patch carries a JSON-patch "test" of the exact list it changes, so two agents
// editing the list at once can never drop each other's entry: the loser gets 422/409 and retries
// with the fresh object. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/watch/object_cache.h"

namespace nodehook {

inline constexpr const char* kFinalizerPrefix = "nodehook.io/";

// "nodehook.io/<node>", or "nodehook.io/node-<hash>" when the node name is not a valid name part
// of a qualified name (at most 63 characters of [A-Za-z0-9-_.], alphanumeric at both ends), or
// when it is "singleton" (kSingletonFinalizer belongs to no node).
std::string FinalizerName(const std::string& node_name);
// A nodehook.io/ finalizer: a node's, or the singleton resources' (kSingletonFinalizer).
bool IsNodehookFinalizer(const std::string& finalizer);
// The node a finalizer spells out ("nodehook.io/<node>", as FinalizerName writes it), or "" when
// it is hashed (only a roster that saw the node can tell whose it is) or no node's.
std::string PlainNodeName(const std::string& finalizer);

Result<std::vector<std::string>> ReadFinalizers(const std::string& object_json);

// JSON patches (application/json-patch+json) that add or remove `finalizer` given the object's
// current finalizers, each guarded by a test of that list (of the resourceVersion when there is
// no list yet: a test of an absent member is not portable).
std::string AddFinalizerPatch(const std::vector<std::string>& current, const std::string& resource_version,
                              const std::string& finalizer);
// Empty when `finalizer` is not in `current`.
std::string RemoveFinalizerPatch(const std::vector<std::string>& current, const std::string& finalizer);

// The uids of cached objects that are being deleted (and not yet gone) and carry `finalizer`:
// what a node's departure must make the agent look at again.
std::vector<std::string> UidsDeletingWith(const ObjectCache& cache, const std::string& finalizer);

}  // namespace nodehook
