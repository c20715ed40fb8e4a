#include "test/fakes/loopback_listener.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace nodehook {

int ListenOnLoopback(int& port, const char* who) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror(who);
    std::abort();
  }
  port = ntohs(addr.sin_port);
  return fd;
}

LoopbackListener::LoopbackListener(std::function<void(LoopbackListener& self, int fd)> handler) : handler_(std::move(handler)) {
  listen_fd_ = ListenOnLoopback(port_, "LoopbackListener");
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

LoopbackListener::~LoopbackListener() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

void LoopbackListener::Track(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_.insert(fd);
  if (stopping_) ::shutdown(fd, SHUT_RDWR);
}

void LoopbackListener::Untrack(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  fds_.erase(fd);
}

void LoopbackListener::AcceptLoop() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mu_);
    if (fd < 0 || stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    fds_.insert(fd);
    threads_.emplace_back([this, fd] {
      handler_(*this, fd);
      std::lock_guard<std::mutex> inner(mu_);
      fds_.erase(fd);
      ::close(fd);
    });
  }
}

PumpSide SocketSide(int fd) {
  PumpSide side;
  side.fd = fd;
  side.read = [fd](char* data, size_t size) { return ::recv(fd, data, size, 0); };
  side.write = [fd](const char* data, size_t size) {
    while (size > 0) {
      ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  };
  return side;
}

void Pump(const PumpSide& a, const PumpSide& b) {
  char buffer[16 * 1024];
  while (true) {
    pollfd fds[2] = {{a.fd, POLLIN, 0}, {b.fd, POLLIN, 0}};
    bool a_ready = a.buffered(), b_ready = b.buffered();
    if (!a_ready && !b_ready && ::poll(fds, 2, -1) < 0) return;
    a_ready = a_ready || fds[0].revents != 0;
    b_ready = b_ready || fds[1].revents != 0;
    if (a_ready) {
      ssize_t n = a.read(buffer, sizeof buffer);
      if (n <= 0 || !b.write(buffer, static_cast<size_t>(n))) return;
    }
    if (b_ready) {
      ssize_t n = b.read(buffer, sizeof buffer);
      if (n <= 0 || !a.write(buffer, static_cast<size_t>(n))) return;
    }
  }
}

int ConnectTcp(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd >= 0 && ::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace nodehook
