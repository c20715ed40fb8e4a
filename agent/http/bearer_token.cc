#include "agent/http/bearer_token.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace nodehook {
namespace {

std::string TrimSpace(const std::string& s) {
  const char* space = " \t\r\n";
  size_t begin = s.find_first_not_of(space);
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(space) - begin + 1);
}

}  // namespace

Result<std::string> BearerTokenFile::Read() const {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return InvalidError("admin_token_file " + path_ + ": cannot read: " + std::strerror(errno));
  std::string raw(kMaxLength + 1, '\0');
  in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
  raw.resize(static_cast<size_t>(in.gcount()));
  if (raw.size() > kMaxLength) {
    return InvalidError("admin_token_file " + path_ + ": longer than " + std::to_string(kMaxLength) +
                        " bytes; expected one token");
  }
  std::string token = TrimSpace(raw);
  if (token.size() < kMinLength || token.find_first_of(" \t\r\n") != std::string::npos) {
    return InvalidError("admin_token_file " + path_ + ": expected one token of at least " +
                        std::to_string(kMinLength) + " characters without spaces (e.g. `openssl rand -hex 32`)");
  }
  return token;
}

bool BearerTokenFile::Allows(const std::string& authorization_header) const {
  static const std::string kScheme = "Bearer ";
  if (authorization_header.compare(0, kScheme.size(), kScheme) != 0) return false;
  Result<std::string> token = Read();
  return token.ok() && ConstantTimeEquals(TrimSpace(authorization_header.substr(kScheme.size())), *token);
}

bool ConstantTimeEquals(const std::string& given, const std::string& expected) {
  unsigned diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(expected[i]);
  }
  return diff == 0;
}

}  // namespace nodehook
