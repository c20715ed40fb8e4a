#include "agent/finalizers/singleton_finalizer.h"

#include "agent/finalizers/finalizer_edit.h"

namespace nodehook {

SingletonFinalizer::SingletonFinalizer(KubeClient& client) : client_(client), name_(kSingletonFinalizer) {}

Status SingletonFinalizer::Claim(const WatchedResource& resource, const KubeObject& object, const ObjectFacts& facts) {
  return ClaimFinalizer(client_, resource, object, facts, name_);
}

Status SingletonFinalizer::Release(const WatchedResource& resource, const KubeObject& object,
                                   const ObjectFacts& facts) {
  return ReleaseFinalizer(client_, resource, object, facts, name_);
}

}  // namespace nodehook
