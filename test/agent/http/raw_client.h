// RawClient: a blocking TCP client on 127.0.0.1 for talking to LocalServer byte by byte, so
// tests can play slow, silent or malformed clients. Single-threaded test helper.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace nodehook {

class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }

  bool Send(const std::string& data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }

  // Everything the server sends until it closes the connection; stops early (returning what
  // arrived) if `limit` passes first. The limit is a safety net, not a synchronisation.
  std::string ReadUntilClosed(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + limit;
    char block[4096];
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return out;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return out;
      ssize_t n = ::recv(fd_, block, sizeof block, 0);
      if (n <= 0) {
        closed_ = true;
        return out;
      }
      out.append(block, static_cast<size_t>(n));
    }
  }

  bool closed_by_server() const { return closed_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

// One GET over a fresh connection; returns the whole response text.
inline std::string HttpGet(int port, const std::string& target) {
  RawClient c(port);
  c.Send("GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
  return c.ReadUntilClosed();
}

inline std::string BodyOf(const std::string& response) {
  size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

}  // namespace nodehook
