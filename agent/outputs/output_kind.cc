#include "agent/outputs/output_kind.h"

#include <iterator>

namespace nodehook {
namespace {

// The name table: a row per kind, in kAllOutputKinds' order.
struct KindNames {
  OutputKind kind;
  const char* name;   // the kind: "labels"
  const char* entry;  // one entry of it: "label"
};

constexpr KindNames kNames[] = {
    {OutputKind::kLabels, "labels", "label"},
    {OutputKind::kAnnotations, "annotations", "annotation"},
    {OutputKind::kConditions, "conditions", "condition"},
    {OutputKind::kTaints, "taints", "taint"},
};

constexpr bool RowPerKind() {
  if (std::size(kNames) != std::size(kAllOutputKinds)) return false;
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i].kind != kAllOutputKinds[i]) return false;
  }
  return true;
}
static_assert(RowPerKind(), "kNames has a row per kind of kAllOutputKinds, in its order");

// A kind's row; an OutputKind outside the enum (a cast) gets the empty names.
const KindNames& RowOf(OutputKind kind) {
  static constexpr KindNames kNone{OutputKind::kLabels, "", ""};
  for (const KindNames& row : kNames) {
    if (row.kind == kind) return row;
  }
  return kNone;
}

}  // namespace

const char* OutputKindName(OutputKind kind) { return RowOf(kind).name; }

const char* OutputEntryName(OutputKind kind) { return RowOf(kind).entry; }

std::optional<OutputKind> OutputKindNamed(std::string_view name) {
  for (const KindNames& row : kNames) {
    if (name == row.name) return row.kind;
  }
  return std::nullopt;
}

std::string OutputKindNames() {
  std::string names;
  for (const KindNames& row : kNames) names += (names.empty() ? "" : ", ") + std::string(row.name);
  return names;
}

}  // namespace nodehook
