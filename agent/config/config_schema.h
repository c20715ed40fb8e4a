// A JSON Schema (draft-07) of the config file, for editors, linters and CI pipelines
// (`nodehook config-schema`). Built from the same tables the parser reads (the knob table,
// the resource and hook keys, the per-hook limits), so a knob added there appears here too.
// What a schema cannot say (retry_base <= retry_max, a selector's syntax, duplicate resources,
// the hook programs on the node) is left to `nodehook check-config --offline`.
// Pure function; thread-safe.
#pragma once

#include <string>

namespace nodehook {

// The schema, pretty-printed, ending in a newline.
std::string ConfigSchemaJson();

}  // namespace nodehook
