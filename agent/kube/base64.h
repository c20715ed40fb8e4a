// Standard base64 (RFC 4648, '+' '/', '=' padding) decoding for kubeconfig *-data fields.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "agent/base/status.h"

namespace nodehook {

// Whitespace (line breaks in pasted certificates) is ignored; padding is optional.
// Any other character outside the alphabet, or a dangling sixth bit group, is kInvalid.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace nodehook
