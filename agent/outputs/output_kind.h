// OutputKind: the kinds of output a hook may publish for its node (published_outputs.h), and the
// one name each goes by wherever it is shown or kept: the key under "node" in the result file and
// in the state file's stored form, the start of an error's path (`labels["a.com/x"]: ...`), the
// recorder's "kinds" log value. One entry of a kind has a name too, for a union's conflict lines
// ("label a.com/x: ..."). A new kind is one value here, its row in output_kind.cc, its field in
// PublishedOutputs (and how to read, write and union it, in published_outputs.cc), and its work
// on the Node (node_outputs_writer). Keep the names: result files and state files hold them.
// Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nodehook {

enum class OutputKind { kLabels, kAnnotations, kConditions, kTaints };

// Every kind, in the order the stored form and the error texts list them.
inline constexpr OutputKind kAllOutputKinds[] = {OutputKind::kLabels, OutputKind::kAnnotations,
                                                 OutputKind::kConditions, OutputKind::kTaints};

const char* OutputKindName(OutputKind kind);   // "labels"
const char* OutputEntryName(OutputKind kind);  // one entry of it: "label"
// The kind of that name; nullopt for any other name ("" and "label" included).
std::optional<OutputKind> OutputKindNamed(std::string_view name);
// Every kind's name in kAllOutputKinds' order: "labels, annotations, conditions, taints".
std::string OutputKindNames();

}  // namespace nodehook
