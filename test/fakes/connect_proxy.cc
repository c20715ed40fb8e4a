#include "test/fakes/connect_proxy.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace nodehook {

ConnectProxy::ConnectProxy() : listener_(std::make_unique<LoopbackListener>([this](LoopbackListener& listener, int fd) { Serve(listener, fd); })) {}

ConnectProxy::~ConnectProxy() { listener_.reset(); }

std::vector<std::string> ConnectProxy::request_lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return request_lines_;
}

std::vector<std::string> ConnectProxy::authorizations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return authorizations_;
}

void ConnectProxy::Serve(LoopbackListener& listener, int fd) {
  std::string head;
  char c;
  // Byte by byte, so nothing after the head (the TLS ClientHello) is consumed here.
  while (head.size() < 8192 && head.find("\r\n\r\n") == std::string::npos) {
    if (::recv(fd, &c, 1, 0) != 1) return;
    head.push_back(c);
  }
  std::string line = head.substr(0, head.find("\r\n"));
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  std::string auth;
  size_t at = lower.find("\r\nproxy-authorization:");
  if (at != std::string::npos) {
    size_t start = head.find_first_not_of(' ', at + 22);
    auth = head.substr(start, head.find("\r\n", start) - start);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    request_lines_.push_back(line);
    authorizations_.push_back(auth);
  }
  PumpSide client = SocketSide(fd);
  size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  std::string target = sp1 == std::string::npos || sp2 <= sp1 ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t colon = target.rfind(':');
  if (line.rfind("CONNECT ", 0) != 0 || colon == std::string::npos) {
    std::string refusal = "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    client.write(refusal.data(), refusal.size());
    return;
  }
  int upstream = ConnectTcp(target.substr(0, colon), std::atoi(target.c_str() + colon + 1));
  if (upstream < 0) {
    std::string refusal = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    client.write(refusal.data(), refusal.size());
    return;
  }
  listener.Track(upstream);
  std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
  if (client.write(ok.data(), ok.size())) Pump(client, SocketSide(upstream));
  listener.Untrack(upstream);
  ::close(upstream);
}

}  // namespace nodehook
