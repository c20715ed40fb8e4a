#include "agent/finalizers/singleton_finalizer.h"

#include "agent/finalizers/finalizer_edit.h"

namespace nodehook {

SingletonFinalizer::SingletonFinalizer(KubeClient& client) : client_(client), name_(kSingletonFinalizer) {}

Status SingletonFinalizer::Claim(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) {
  return ClaimFinalizer(client_, resource, object, facts, name_);
}

Status SingletonFinalizer::Release(const WatchedResource& resource, const KubeObject& object,
                                   const ObjectFacts& facts) {
  // The handled annotation goes in the same patch: the object's last state (what its DELETED
  // event carries) then shows no leader handled it, so no later leader runs its delete again.
  return ReleaseFinalizer(client_, resource, object, facts, name_, [&](const KubeObject& o) -> std::string {
    // The version the facts describe, or a fresh one read after a concurrent change.
    bool annotated = o.meta.resource_version == object.meta.resource_version
                         ? !facts.singleton_digest.empty()
                         : !ReadFacts(o.json, FactsSpec{})->singleton_digest.empty();
    // The path of kSingletonHandledAnnotation, its "/" escaped as "~1".
    return annotated ? R"(,{"op":"remove","path":"/metadata/annotations/nodehook.io~1singleton-handled"})" : "";
  });
}

}  // namespace nodehook
