// What a hook publishes for its own node under "node" in its result file (issue 29):
//   {"labels":      {KEY: VALUE, ...},
//    "annotations": {KEY: VALUE, ...},
//    "conditions":  [{"type": TYPE, "status": "True|False|Unknown", "reason": R, "message": M}, ...],
//    "taints":      [{"key": KEY, "value": V, "effect": "NoSchedule|PreferNoSchedule|NoExecute"}, ...]}
// Each kind given replaces what the object published of that kind before; a kind not given is
// kept; an empty map or list withdraws it. Every key (label and annotation keys, condition types,
// taint keys) must be under one of the resource's prefixes ("node_outputs": {"prefixes"}).
// A resource's outputs on the Node are the union of its objects' (UnionOf).
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

struct OutputCondition {
  std::string type, status, reason, message;
  bool operator==(const OutputCondition& o) const {
    return type == o.type && status == o.status && reason == o.reason && message == o.message;
  }
};

struct OutputTaint {
  std::string key, value, effect;
  bool operator==(const OutputTaint& o) const { return key == o.key && value == o.value && effect == o.effect; }
  bool SameSlot(const OutputTaint& o) const { return key == o.key && effect == o.effect; }  // a Node holds one
};

struct PublishedOutputs {
  std::optional<std::map<std::string, std::string>> labels;
  std::optional<std::map<std::string, std::string>> annotations;
  std::optional<std::vector<OutputCondition>> conditions;  // one per type
  std::optional<std::vector<OutputTaint>> taints;          // one per key and effect

  bool operator==(const PublishedOutputs& o) const {
    return labels == o.labels && annotations == o.annotations && conditions == o.conditions && taints == o.taints;
  }
  bool operator!=(const PublishedOutputs& o) const { return !(*this == o); }
  // Nothing published: no kind given, or every kind given empty.
  bool Empty() const;
};

// Entries of one kind an object may publish, and the bytes of one annotation value.
inline constexpr size_t kMaxOutputsPerKind = 64;
inline constexpr size_t kMaxOutputAnnotationBytes = 4096;

// Parses a "node" value (JSON text): its shape and the syntax of every key and value. The error
// names the first problem, e.g. `labels["example.com/x"]: expected a label value (...)`.
Result<PublishedOutputs> ParsePublishedOutputs(const std::string& json);

// The first key not under one of `prefixes`, as an error naming it and the prefixes; else Ok.
Status CheckPrefixes(const PublishedOutputs& outputs, const std::vector<std::string>& prefixes);

// `later`'s kinds replace `earlier`'s.
PublishedOutputs MergeOutputs(PublishedOutputs earlier, const PublishedOutputs& later);

// The stored form (the result file's form, with the kinds given); "" when nothing is published.
std::string OutputsJson(const PublishedOutputs& outputs);

// A labels or annotations map as a JSON object, and one taint as the Node holds it:
// {"key", "value" (when set), "effect"}. Shared by the stored form and the writer's requests.
std::string StringMapJson(const std::map<std::string, std::string>& entries);
std::string TaintJson(const OutputTaint& taint);

// One object's outputs, by "namespace/name".
struct ObjectOutputs {
  std::string object;
  PublishedOutputs outputs;
};

// Every kind set: the union of `objects`' outputs, keeping only keys under `prefixes` (the config
// may have changed since they were published). Where two objects publish one key (a label, a
// condition type, a taint's key and effect) differently, the first in `objects` wins and
// `conflicts` gets a line naming both.
PublishedOutputs UnionOf(const std::vector<ObjectOutputs>& objects, const std::vector<std::string>& prefixes,
                         std::vector<std::string>* conflicts);

}  // namespace nodehook
