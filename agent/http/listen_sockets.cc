#include "agent/http/listen_sockets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nodehook {
namespace {

struct Candidate {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

Candidate Wildcard6(int port) {
  Candidate c;
  auto* a = reinterpret_cast<sockaddr_in6*>(&c.addr);
  a->sin6_family = AF_INET6;
  a->sin6_addr = in6addr_any;
  a->sin6_port = htons(static_cast<uint16_t>(port));
  c.len = sizeof(sockaddr_in6);
  return c;
}

Candidate Wildcard4(int port) {
  Candidate c;
  auto* a = reinterpret_cast<sockaddr_in*>(&c.addr);
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_ANY);
  a->sin_port = htons(static_cast<uint16_t>(port));
  c.len = sizeof(sockaddr_in);
  return c;
}

void SetPort(Candidate& c, int port) {
  if (c.addr.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&c.addr)->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in*>(&c.addr)->sin_port = htons(static_cast<uint16_t>(port));
  }
}

std::string Describe(const Candidate& c, int port) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (c.addr.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&c.addr)->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(port);
  }
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&c.addr)->sin_addr, text, sizeof text);
  return std::string(text) + ":" + std::to_string(port);
}

bool IsLoopback(const Candidate& c) {
  if (c.addr.ss_family == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&c.addr)->sin6_addr);
  }
  return (ntohl(reinterpret_cast<const sockaddr_in*>(&c.addr)->sin_addr.s_addr) >> 24) == 127;
}

bool IsWildcard6(const Candidate& c) {
  return c.addr.ss_family == AF_INET6 &&
         IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&c.addr)->sin6_addr);
}

// The address family is missing from this kernel or host: another candidate may still work.
bool FamilyMissing(int error) { return error == EAFNOSUPPORT || error == EADDRNOTAVAIL || error == EPROTONOSUPPORT; }

Result<std::vector<Candidate>> Resolve(const HostPort& where) {
  if (where.host.empty()) return std::vector<Candidate>{Wildcard6(where.port), Wildcard4(where.port)};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(where.port);
  int rc = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return InvalidError("cannot resolve \"" + where.host + "\" to listen on: " + ::gai_strerror(rc));
  }
  std::vector<Candidate> out;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    Candidate c;
    std::memcpy(&c.addr, ai->ai_addr, ai->ai_addrlen);
    c.len = ai->ai_addrlen;
    out.push_back(c);
  }
  ::freeaddrinfo(found);
  if (out.empty()) return InvalidError("\"" + where.host + "\" has no IPv4 or IPv6 address to listen on");
  return out;
}

// One socket bound and listening; -1 with errno set on failure. `dual_stack` reports whether a
// wildcard IPv6 socket also takes IPv4.
int BindOne(const Candidate& c, bool* dual_stack) {
  int fd = ::socket(c.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  *dual_stack = false;
  if (c.addr.ss_family == AF_INET6) {
    int v6only = IsWildcard6(c) ? 0 : 1;
    bool set = ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) == 0;
    *dual_stack = IsWildcard6(c) && set;
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&c.addr), c.len) != 0 || ::listen(fd, 128) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

Result<ListenSockets> OpenListenSockets(const HostPort& where) {
  if (where.port < 0 || where.port > 65535) return InvalidError("port " + std::to_string(where.port) + " is out of range");
  auto candidates = Resolve(where);
  if (!candidates.ok()) return candidates.status();
  ListenSockets out;
  out.port = where.port;
  std::string last_error;
  bool took_all_ipv4 = false;  // a dual-stack [::] already serves 0.0.0.0
  for (Candidate& c : *candidates) {
    if (took_all_ipv4 && c.addr.ss_family == AF_INET) continue;
    SetPort(c, out.port);
    bool dual_stack = false;
    int fd = BindOne(c, &dual_stack);
    if (fd < 0) {
      int error = errno;
      last_error = Describe(c, out.port) + ": " + std::strerror(error);
      if (FamilyMissing(error)) continue;
      for (int open : out.fds) ::close(open);
      return UnavailableError("cannot listen on " + last_error);
    }
    if (out.port == 0) out.port = BoundPort(fd);
    took_all_ipv4 = took_all_ipv4 || dual_stack;
    out.fds.push_back(fd);
    out.bound.push_back(Describe(c, out.port) + (dual_stack ? " (dual-stack)" : ""));
    out.loopback_only = out.loopback_only && IsLoopback(c);
  }
  if (out.fds.empty()) return UnavailableError("cannot listen on " + last_error);
  return out;
}

}  // namespace nodehook
