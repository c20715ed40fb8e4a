// Which stopping agent pods an uninstall need not wait for: those stuck on a dead node.
// A pod bound to a node is gone only once its kubelet confirms that its containers stopped; on a
// node whose kubelet is gone that never happens, and the stand-down (agent_stand_down.h) would
// wait until its timeout and release nothing.
//
// The rule: a pod is not waited for when it is terminating, its grace period (the pod's
// metadata.deletionTimestamp) ended more than kDeadNodeMargin ago by the API server's clock, and
// its Node is gone or its Ready condition is not True.
// Why its agent cannot act any more, case by case:
//   - Ready False: the kubelet runs and killed the containers when the grace period ended; it
//     has only not told the API server yet.
//   - Ready Unknown (no heartbeat): the node is down or cut off, and its agent cannot reach the
//     API server either; when the network comes back the kubelet sees the pod deleted and stops
//     the agent (SIGTERM: no new work).
//   - The Node is gone: the pod garbage collector force-deletes its pods anyway.
// What it gets wrong: a kubelet that died while its containers run (Ready Unknown) leaves an
// agent that may still reach the API server, and may put its node's finalizer back on an object
// that changes, until its kubelet returns and stops it. Kubernetes never assumes such a pod gone
// (the node lifecycle controller does not force-delete it; StatefulSets wait for a person),
// because two copies of a pod could corrupt data; here the cost is a finalizer that comes back,
// which a second release removes. The margin lets a kubelet that restarts confirm its pods.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/base/clock.h"

namespace nodehook {

inline constexpr Duration kDeadNodeMargin = std::chrono::seconds(30);

// metadata.deletionTimestamp of a pod's JSON, in milliseconds since the epoch; nullopt when it is
// not terminating or the timestamp is unreadable.
std::optional<int64_t> PodDeletionMs(const std::string& pod_json);

// Whether the Node of a pod past PodDeletionMs + kDeadNodeMargin at `now_ms` still matters.
bool PastGraceAndMargin(int64_t deletion_ms, int64_t now_ms);

// Why a pod past its grace and margin is not waited for, given its Node's JSON (nullopt: the Node
// is gone); "" while the Node is Ready (or reports no Ready condition): keep waiting.
std::string WhyNotWaitedFor(const std::optional<std::string>& node_json, int64_t deletion_ms, int64_t now_ms);

}  // namespace nodehook
