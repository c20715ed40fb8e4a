#include "agent/base/kube_names.h"

#include <algorithm>
#include <cctype>

namespace nodehook {
namespace {

bool Alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool LowerAlnum(char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); }

}  // namespace

bool IsQualifiedNamePart(std::string_view s) {
  return !s.empty() && s.size() <= 63 && Alnum(s.front()) && Alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return Alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsDnsSubdomain(std::string_view s) {
  return !s.empty() && s.size() <= 253 && LowerAlnum(s.front()) && LowerAlnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) { return LowerAlnum(c) || c == '-' || c == '.'; }) &&
         s.find("..") == std::string_view::npos;
}

bool IsLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedNamePart(key);
  return IsDnsSubdomain(key.substr(0, slash)) && IsQualifiedNamePart(key.substr(slash + 1));
}

}  // namespace nodehook
