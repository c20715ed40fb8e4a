// "HOST:PORT" listen addresses, shared by config validation and the HTTP listeners. Pure
// functions; thread-safe.
//
//   ":8090"         every interface (IPv6 dual-stack where the kernel allows, else IPv4)
//   "0.0.0.0:8090"  every IPv4 interface;  "[::]:8090" every IPv6 interface (and IPv4 if dual-stack)
//   "[::1]:8090", "127.0.0.1:8090", "localhost:8090", "node.example:8090" (resolved at start)
#pragma once

#include <string>

#include "agent/base/status.h"

namespace nodehook {

struct HostPort {
  std::string host;  // brackets removed; "" for every interface
  int port = 0;      // 0: the kernel picks a free port
};

// `knob` names the setting in error messages, e.g. "health_address".
Result<HostPort> ParseHostPort(const std::string& knob, const std::string& address);

// True when `host` can only mean this machine: "localhost", 127.0.0.0/8, ::1, ::ffff:127.x.
// A name other than "localhost" is not trusted to stay loopback (DNS and /etc/hosts change).
bool IsLoopbackHost(const std::string& host);

}  // namespace nodehook
