// Where a cluster-singleton resource's progress lives so that the next leader sees it: the
// annotation nodehook.io/singleton-handled on the object, holding the digest of the essence the
// leader last handled (the same digest the state store keeps as a handler's target). A new
// leader finding the digest equal to the current essence's adopts the object without running
// its hook; an object whose last known state carries the annotation was handled by some leader,
// so its deletion runs the delete hook even on an agent that never handled it itself.
// One merge patch per handled create/update; nothing for non-singleton resources.
// Pure functions; thread-safe.
#pragma once

#include <string>

namespace nodehook {

// The annotation's value, "" when absent or unreadable.
std::string SingletonHandledDigest(const std::string& object_json);

// An application/merge-patch+json body setting the annotation to `digest`.
std::string SingletonHandledPatch(const std::string& digest);

}  // namespace nodehook
