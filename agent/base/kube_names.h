// Kubernetes name syntax, the one copy of each rule: a qualified name's name part (a label name,
// the part of a finalizer after its prefix), a DNS subdomain (a label key's prefix), and a
// label key (a qualified name: an optional DNS-subdomain prefix and "/", then a name part).
// Pure; thread-safe.
#pragma once

#include <string_view>

namespace nodehook {

// At most 63 characters of [A-Za-z0-9-_.], alphanumeric at both ends.
bool IsQualifiedNamePart(std::string_view s);
// At most 253 characters of [a-z0-9-.], alphanumeric at both ends, no "..".
bool IsDnsSubdomain(std::string_view s);
// [DNS subdomain "/"] qualified name part: a label key (or any qualified name).
bool IsLabelKey(std::string_view key);

}  // namespace nodehook
