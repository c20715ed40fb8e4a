// Finalizer domains: the resources on which this node may hold a finalizer, and which one (its
// own per-node finalizer, or the singleton resources' nodehook.io/singleton). The node records
// them in its state file (note kFinalizerDomainsNote) before it claims anything, so that after a
// config change it still knows what it may have left on objects of a resource it no longer
// serves in that mode (finalizer_retirement.h). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

inline constexpr const char* kFinalizerDomainsNote = "finalizer_domains";

enum class FinalizerKind { kNode, kSingleton };

struct FinalizerDomain {
  ResourceRef resource;  // group, version, plural and namespace scope ("" = all); no selectors
  FinalizerKind kind = FinalizerKind::kNode;

  // "node" or "singleton".
  std::string KindName() const;
  // Whether an object of `object_resource` in `object_namespace` is in this domain. The version
  // does not matter: a finalizer is on the object whatever version it is read through.
  bool Covers(const ResourceRef& object_resource, const std::string& object_namespace) const;
  // Same kind, group, plural and namespace scope (the version aside).
  bool SameAs(const FinalizerDomain& other) const;
};

// What `config` serves: a kNode domain per finalizer-mode resource, a kSingleton one per
// singleton resource.
std::vector<FinalizerDomain> DomainsServed(const Config& config);

// `recorded` minus what `serving` still covers: the domains to release.
std::vector<FinalizerDomain> RetiredDomains(const std::vector<FinalizerDomain>& recorded,
                                            const std::vector<FinalizerDomain>& serving);

// `a` plus the domains of `b` that `a` lacks.
std::vector<FinalizerDomain> UnionOf(std::vector<FinalizerDomain> a, const std::vector<FinalizerDomain>& b);

// Whether some domain of `serving` of `kind` covers an object of `resource` in `object_namespace`.
bool StillServed(const std::vector<FinalizerDomain>& serving, FinalizerKind kind, const ResourceRef& resource,
                 const std::string& object_namespace);

// The note's JSON: [{"group","version","plural","namespace","kind"}, ...].
std::string EncodeDomains(const std::vector<FinalizerDomain>& domains);
// kInvalid for text that EncodeDomains did not write.
Result<std::vector<FinalizerDomain>> DecodeDomains(const std::string& text);

}  // namespace nodehook
