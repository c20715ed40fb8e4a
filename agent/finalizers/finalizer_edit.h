// The guarded edits of one finalizer on an object, shared by the per-node FinalizerKeeper and the
// cluster-wide SingletonFinalizer. Every patch is a JSON patch that tests the exact list it
// replaces (finalizers.h). When another agent changed the list first (422 from the failed test,
// or 409), the object is re-read and the patch rebuilt from the fresh list, a few times; that
// expected race is logged at info, not as an error.
// Free functions; thread-safe when the client is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/object/object_facts.h"

namespace nodehook {

// A concurrent edit of the finalizer list: 409, or the 422 of a failed JSON-patch "test" (every
// finalizer patch begins with one).
bool IsConcurrentFinalizerChange(const Status& st);

// The next patch for the object's current finalizers; "" = nothing to do; an error stops.
using FinalizerPatchFor =
    std::function<Result<std::string>(const std::vector<std::string>& current, const KubeObject& object)>;

// Patches, re-reading the object after each concurrent change. kNotFound: the object is gone.
// The first attempt patches the list `facts` hold; each retry re-reads the object.
[[nodiscard]] Status EditFinalizers(KubeClient& client, const WatchedResource& resource, const KubeObject& object,
                                    const ObjectFacts& facts, const FinalizerPatchFor& patch_for);

// Ok when `finalizer` is on the object (now or already). kConflict when the fresh object is
// being deleted (no finalizer may be added then) or the list kept changing. Logs a failure.
[[nodiscard]] Status ClaimFinalizer(KubeClient& client, const WatchedResource& resource, const KubeObject& object,
                                    const ObjectFacts& facts, const std::string& finalizer);

// More JSON-patch operations for the removal's patch, given the object version it applies to
// (e.g. `,{"op":"remove",...}`, with the leading comma); "" = none.
using AlsoOnRelease = std::function<std::string(const KubeObject& object)>;

// Ok when `finalizer` is off the object (now or already), or the object is gone. Logs a removal
// and a failure. `also`, when set, adds operations to the patch that removes the finalizer.
[[nodiscard]] Status ReleaseFinalizer(KubeClient& client, const WatchedResource& resource, const KubeObject& object,
                                      const ObjectFacts& facts, const std::string& finalizer,
                                      const AlsoOnRelease& also = nullptr);

}  // namespace nodehook
