// ObjectSpec: an object as kubectl spells it on the command line, `RESOURCE[.VERSION][.GROUP]/NAME`
// (widgets/w1, widgets.example.com/w1, widgets.v1.example.com/w1) plus -n NAMESPACE, and how it
// matches a resource id ("widgets.example.com/v1", ResourceRef::Id()) that an agent or a rollout
// Lease names. The plural is what matches; kinds and short names are not resolved (no
// discovery of names, only of a group's preferred version).
// Value types and pure functions; thread-safe.
#pragma once

#include <string>

#include "agent/base/status.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

struct ObjectSpec {
  std::string plural;          // "widgets"
  std::string group;           // "example.com"; "" when not given (any group, or the core group)
  bool group_given = false;    // RESOURCE.GROUP was spelled: only that group matches
  std::string version;         // "v1" when spelled RESOURCE.VERSION.GROUP; else ""
  std::string name;
  std::string namespace_name;  // -n; "" for cluster-scoped objects

  // "widgets.example.com/w1 -n team-a", for messages.
  std::string Describe() const;
};

// kInvalid with what was expected, e.g. for "w1" or "widgets/".
Result<ObjectSpec> ParseObjectSpec(const std::string& text, const std::string& namespace_name);

// Whether `resource_id` ("plural.group/version", "plural/version" for the core group) is the
// spec's resource; then `version` (if not null) gets the id's version.
bool MatchesResource(const ObjectSpec& spec, const std::string& resource_id, std::string* version);

// The spec with the group and version of `resource_id` (one MatchesResource accepted), so a bare
// "widgets/w1" reaches the object at /apis/GROUP/VERSION/...
ObjectSpec ResolvedSpec(const ObjectSpec& spec, const std::string& resource_id);

// The resource as a ResourceRef at `version`, in the spec's namespace.
ResourceRef SpecResource(const ObjectSpec& spec, const std::string& version);
ObjectRef SpecObject(const ObjectSpec& spec, const std::string& version);

}  // namespace nodehook
