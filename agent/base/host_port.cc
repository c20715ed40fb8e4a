#include "agent/base/host_port.h"

#include <arpa/inet.h>

#include <cstring>

namespace nodehook {

Result<HostPort> ParseHostPort(const std::string& knob, const std::string& address) {
  std::string expected = knob + " \"" + address + "\": expected HOST:PORT, e.g. :8090, 0.0.0.0:8090, [::]:8090 or localhost:8090";
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return InvalidError(expected);
  HostPort out;
  out.host = address.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
    if (out.host.empty()) return InvalidError(expected);
  } else if (out.host.find(':') != std::string::npos) {
    return InvalidError(knob + " \"" + address + "\": an IPv6 address needs brackets, e.g. [::1]:8090");
  }
  std::string digits = address.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidError(knob + " \"" + address + "\": expected a port number 0-65535 after the last colon");
  }
  out.port = std::stoi(digits);
  if (out.port > 65535) return InvalidError(knob + " \"" + address + "\": port " + digits + " is above 65535");
  return out;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

}  // namespace nodehook
