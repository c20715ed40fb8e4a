// What a hook publishes for its own node under "node" in its result file (issue 29):
//   {"labels":      {KEY: VALUE, ...},
//    "annotations": {KEY: VALUE, ...},
//    "conditions":  [{"type": TYPE, "status": "True|False|Unknown", "reason": R, "message": M}, ...],
//    "taints":      [{"key": KEY, "value": V, "effect": "NoSchedule|PreferNoSchedule|NoExecute"}, ...]}
// Each kind given replaces what the object published of that kind before; a kind not given is
// kept; an empty map or list withdraws it. Every key (label and annotation keys, condition types,
// taint keys) must be under one of the resource's prefixes ("node_outputs": {"prefixes"}).
// A resource's outputs on the Node are the union of its objects' (UnionOf).
// The kinds and their names: output_kind.h; code that treats every kind alike walks them with
// ForEachKind.
// Pure functions; thread-safe.
#pragma once

#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "agent/base/status.h"
#include "agent/outputs/output_kind.h"

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

  // Each kind's field, in kAllOutputKinds' order: the one list of them ForEachKind walks.
  auto Fields() { return std::tie(labels, annotations, conditions, taints); }
  auto Fields() const { return std::tie(labels, annotations, conditions, taints); }

  bool operator==(const PublishedOutputs& o) const { return Fields() == o.Fields(); }
  bool operator!=(const PublishedOutputs& o) const { return !(*this == o); }
  // Nothing published: no kind given, or every kind given empty.
  bool Empty() const;
};

namespace outputs_internal {
template <typename A, typename B, typename F, size_t... I>
void EachKind(A a, B b, F& f, std::index_sequence<I...>) {
  (f(kAllOutputKinds[I], std::get<I>(a), std::get<I>(b)), ...);
}
}  // namespace outputs_internal

// Calls f(kind, a's field, b's field) for every kind in kAllOutputKinds' order; a field is the
// std::optional of that kind's map or list (const when its PublishedOutputs is), so `f` is
// generic or overloaded on the field types.
template <typename A, typename B, typename F>
void ForEachKind(A& a, B& b, F&& f) {
  constexpr size_t kKinds = std::size(kAllOutputKinds);
  static_assert(std::tuple_size_v<decltype(a.Fields())> == kKinds, "a field per OutputKind");
  outputs_internal::EachKind(a.Fields(), b.Fields(), f, std::make_index_sequence<kKinds>());
}
// The same over one PublishedOutputs: f(kind, field).
template <typename Outputs, typename F>
void ForEachKind(Outputs& outputs, F&& f) {
  ForEachKind(outputs, outputs, [&f](OutputKind kind, auto& field, auto&) { f(kind, field); });
}

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
