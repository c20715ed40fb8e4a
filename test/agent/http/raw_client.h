// RawClient: a blocking TCP client for talking to LocalServer byte by byte, so tests can play
// slow, silent or malformed clients, over IPv4 or IPv6, from a chosen loopback source address
// (127.0.0.2 is another peer than 127.0.0.1). Single-threaded test helper.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

namespace nodehook {

class RawClient {
 public:
  // `host` is an IPv4 or IPv6 literal; `from`, when set, the source address to bind first.
  explicit RawClient(int port, const std::string& host = "127.0.0.1", const std::string& from = "") {
    sockaddr_storage to{};
    socklen_t len = Fill(host, port, &to);
    fd_ = ::socket(to.ss_family, SOCK_STREAM, 0);
    if (!from.empty()) {
      sockaddr_storage source{};
      socklen_t source_len = Fill(from, 0, &source);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&source), source_len) != 0) return;
    }
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), len) == 0;
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

  // Whether the server has already closed or answered this connection, without waiting.
  bool HeardFromServer() {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

 private:
  static socklen_t Fill(const std::string& host, int port, sockaddr_storage* out) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
    if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<uint16_t>(port));
      return sizeof(sockaddr_in6);
    }
    auto* v4 = reinterpret_cast<sockaddr_in*>(out);
    v4->sin_family = AF_INET;
    ::inet_pton(AF_INET, host.c_str(), &v4->sin_addr);
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return sizeof(sockaddr_in);
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

// One request over a fresh connection; returns the whole response text.
inline std::string HttpCall(int port, const std::string& method, const std::string& target,
                               const std::string& headers = "", const std::string& host = "127.0.0.1") {
  RawClient c(port, host);
  c.Send(method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n" + headers + "\r\n");
  return c.ReadUntilClosed();
}

inline std::string HttpGet(int port, const std::string& target, const std::string& host = "127.0.0.1") {
  return HttpCall(port, "GET", target, "", host);
}

inline std::string BodyOf(const std::string& response) {
  size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

inline int StatusOf(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(response.substr(9, 3)) : 0;
}

}  // namespace nodehook
