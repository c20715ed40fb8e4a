// Standard base64 (RFC 4648, '+' '/', '=' padding) for kubeconfig *-data fields (decoding) and
// the cluster's CA in an exec plugin's KUBERNETES_EXEC_INFO (encoding).
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "agent/base/status.h"

namespace nodehook {

// Whitespace (line breaks in pasted certificates) is ignored; padding is optional.
// Any other character outside the alphabet, or a dangling sixth bit group, is kInvalid.
Result<std::string> Base64Decode(std::string_view text);

// Padded, without line breaks.
std::string Base64Encode(std::string_view bytes);

}  // namespace nodehook
