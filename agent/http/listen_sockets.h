// Opens the listening sockets for one HOST:PORT (agent/base/host_port.h):
//   ""             [::] dual-stack (IPv4 arrives as ::ffff:a.b.c.d), or 0.0.0.0 when the kernel
//                  has no IPv6 at all;
//   "::"           [::], dual-stack where the kernel allows (IPV6_V6ONLY=0 is asked for);
//   literals       that one address;
//   names          every address getaddrinfo returns (localhost: 127.0.0.1 and ::1 when listed);
//                  an address family the kernel lacks is skipped as long as one address binds.
// With port 0 the kernel picks a port for the first socket, and the others reuse it.
// Pure apart from the sockets it returns; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/base/host_port.h"
#include "agent/base/status.h"

namespace nodehook {

struct ListenSockets {
  std::vector<int> fds;             // non-blocking, close-on-exec, listening; the caller closes them
  int port = 0;                     // the bound port
  std::vector<std::string> bound;   // for logs, e.g. "[::]:8090 (dual-stack)", "127.0.0.1:8091"
  bool loopback_only = true;        // every bound address is 127.0.0.0/8 or ::1
};

// kInvalid when the host cannot be resolved; kUnavailable when nothing could be bound (the
// port is taken, no permission), naming the address and the system error.
Result<ListenSockets> OpenListenSockets(const HostPort& where);

}  // namespace nodehook
