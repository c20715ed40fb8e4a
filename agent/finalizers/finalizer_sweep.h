// Removes chosen finalizers from every object of one resource: the uninstall's release (every
// nodehook.io/ finalizer) and the retirement of finalizers a node no longer serves (its own, or
// the singleton's). Runs no delete hook; other finalizers are kept.
//
// Each patch is a JSON patch that tests the exact finalizer list it changes (RemoveFinalizerPatch),
// so a finalizer added or removed meanwhile by anyone is never lost; on a conflict the object is
// read again and the patch recomputed. An object that vanished meanwhile counts as done. The
// resource's selectors are ignored: every object in its namespace scope is looked at.
// Free function; thread-safe when the client is.
#pragma once

#include <functional>
#include <string>

#include "agent/base/status.h"
#include "agent/kube/client/kube_client.h"

namespace nodehook {

struct SweepCounts {
  int objects = 0;           // objects looked at
  int released_objects = 0;  // objects that lost at least one finalizer
  int finalizers = 0;        // finalizers removed
  int failures = 0;          // objects that could not be read or patched (each reported)
};

struct SweepReport {
  // One object lost `removed` finalizers. May be null.
  std::function<void(const ObjectMeta& object, int removed)> released;
  // One object could not be "read" or "release"d (`what`), and why. May be null.
  std::function<void(const ObjectMeta& object, const std::string& what, const std::string& why)> failed;
};

// Which finalizers to remove.
using FinalizerChoice = std::function<bool(const ObjectMeta& object, const std::string& finalizer)>;

// The error is the list's own (a 403, a 404 for a resource no longer served, unavailable):
// nothing more could be looked at. Objects that failed on their own count in `failures`.
Result<SweepCounts> SweepFinalizers(KubeClient& client, ResourceRef resource, const FinalizerChoice& choose,
                                    const SweepReport& report = {});

}  // namespace nodehook
