// Text from hooks and objects shown on a terminal: control characters are escaped, so a hook's
// output cannot move the cursor, recolour, retitle or clear the reader's terminal.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nodehook {

// `text` with every byte or character a terminal would act on written as an escape:
//  - C0 controls and DEL as \xNN (e.g. ESC as \x1b), except newline and tab, which keep
//    multi-line output readable;
//  - C1 controls (U+0080..U+009F, 8-bit CSI among them) and bidirectional overrides and
//    isolates (U+202A..U+202E, U+2066..U+2069) as \uNNNN;
//  - bytes that are not valid UTF-8 as \xNN.
// Everything else, including valid UTF-8, is copied as is.
std::string EscapeForTerminal(std::string_view text);

// At most `limit` bytes of `text` (plus the marker): the start and the end with " … " between,
// cut on UTF-8 character boundaries. For messages whose end says most (a hook's last words).
std::string Abbreviate(std::string_view text, size_t limit);

// At most `limit` bytes of `text`, its end cut off and marked "...", on a UTF-8 character
// boundary. For fields with a size limit of their own (Kubernetes Event fields).
std::string CutToLimit(std::string_view text, size_t limit);

// The first `shown` of `names`, comma-separated, then " and N more" for the rest:
// "node-a, node-b, node-c and 25 more".
std::string FirstNames(const std::vector<std::string>& names, size_t shown);

}  // namespace nodehook
