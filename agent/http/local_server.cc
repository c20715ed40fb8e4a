#include "agent/http/local_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>

#include "agent/base/log.h"
#include "agent/http/request_parser.h"

namespace nodehook {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

struct LocalServer::Connection {
  int fd;
  SteadyTime deadline;
  std::string in;
  std::string out;
  size_t written = 0;
  bool answering = false;  // the response is queued; only writing remains
};

LocalServer::LocalServer(LocalServerOptions options) : options_(std::move(options)) {}

LocalServer::~LocalServer() { Stop(); }

void LocalServer::Handle(std::string path, LocalHandler handler, std::vector<std::string> methods) {
  routes_[std::move(path)] = Route{std::move(handler), std::move(methods)};
}

Status LocalServer::Start() {
  if (thread_.joinable()) return InternalError("local server already started");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options_.port));
  if (options_.port < 0 || options_.port > 65535 ||
      ::inet_pton(AF_INET, options_.bind_address.c_str(), &addr.sin_addr) != 1) {
    return InvalidError("local server: bad listen address " + options_.bind_address + ":" +
                        std::to_string(options_.port));
  }
  std::string where = options_.bind_address + ":" + std::to_string(options_.port);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError("local server " + where + ": " + Errno("socket"));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status st = UnavailableError("local server " + where + ": " + Errno("bind"));
    ::close(fd);
    return st;
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(fd);
    return UnavailableError("local server: " + Errno("pipe"));
  }
  SetNonBlocking(fd);
  listen_fd_ = fd;
  wake_read_fd_ = pipe_fds[0];
  wake_write_fd_ = pipe_fds[1];
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void LocalServer::Stop() {
  if (!thread_.joinable()) return;
  char byte = 1;
  while (::write(wake_write_fd_, &byte, 1) < 0 && errno == EINTR) {
  }
  thread_.join();
  for (int* fd : {&listen_fd_, &wake_read_fd_, &wake_write_fd_}) {
    ::close(*fd);
    *fd = -1;
  }
}

void LocalServer::Loop() {
  std::list<Connection> connections;
  std::vector<pollfd> fds;
  while (true) {
    SteadyTime now = std::chrono::steady_clock::now();
    // Drop connections whose time is up: a slow reader gets 408 if it can take it.
    for (auto it = connections.begin(); it != connections.end();) {
      if (now >= it->deadline) {
        if (!it->answering) {
          std::string body = "request not received within the read timeout\n";
          std::string msg = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
          (void)!::send(it->fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        ::close(it->fd);
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
    fds.clear();
    fds.push_back({wake_read_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    SteadyTime next_deadline = now + std::chrono::hours(1);
    for (const Connection& c : connections) {
      fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
      next_deadline = std::min(next_deadline, c.deadline);
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count() + 1;
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait));
    if (ready < 0 && errno != EINTR) {
      Log(LogLevel::kError, "local server poll failed", {{"error", std::strerror(errno)}, {"next", "stop serving"}});
      break;
    }
    if (ready <= 0) continue;
    if (fds[0].revents != 0) break;  // Stop()

    // Connections first (fds[2..] match `connections` in order), then new ones.
    size_t i = 2;
    for (auto it = connections.begin(); it != connections.end(); ++i) {
      short events = fds[i].revents;
      bool keep = true;
      if (events & (POLLERR | POLLNVAL)) keep = false;
      else if (events & (POLLIN | POLLHUP)) keep = it->answering ? WriteTo(*it) : ReadFrom(*it);
      else if (events & POLLOUT) keep = WriteTo(*it);
      if (keep) {
        ++it;
      } else {
        ::close(it->fd);
        it = connections.erase(it);
      }
    }
    if (fds[1].revents & POLLIN) {
      while (true) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        if (connections.size() >= options_.max_connections) {
          ::close(fd);  // shed load rather than queue it
          continue;
        }
        connections.push_back(Connection{fd, std::chrono::steady_clock::now() + options_.read_timeout, {}, {}});
      }
    }
  }
  for (Connection& c : connections) ::close(c.fd);
}

bool LocalServer::ReadFrom(Connection& c) {
  char block[4096];
  while (true) {
    ssize_t n = ::recv(c.fd, block, sizeof block, 0);
    if (n == 0) return false;  // the client gave up before finishing its request
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      break;
    }
    c.in.append(block, static_cast<size_t>(n));
    if (c.in.size() > options_.max_request_bytes) break;
  }
  LocalRequest req;
  switch (ParseHttpRequest(c.in, options_.max_request_bytes, &req)) {
    case ParseOutcome::kIncomplete: return true;
    case ParseOutcome::kComplete: Dispatch(c, req); break;
    case ParseOutcome::kMalformed: Answer(c, 400, "text/plain; charset=utf-8", "malformed request\n"); break;
    case ParseOutcome::kTooLarge: Answer(c, 413, "text/plain; charset=utf-8", "request too large\n"); break;
    case ParseOutcome::kNeedLength: Answer(c, 411, "text/plain; charset=utf-8", "send Content-Length\n"); break;
  }
  return WriteTo(c);
}

void LocalServer::Dispatch(Connection& c, const LocalRequest& req) {
  auto route = routes_.find(req.path);
  if (route == routes_.end()) {
    Answer(c, 404, "text/plain; charset=utf-8", "no such endpoint: " + req.path + "\n");
    return;
  }
  const auto& methods = route->second.methods;
  if (std::find(methods.begin(), methods.end(), req.method) == methods.end()) {
    std::string allow;
    for (const auto& m : methods) allow += (allow.empty() ? "" : ", ") + m;
    Answer(c, 405, "text/plain; charset=utf-8", req.method + " is not allowed on " + req.path + "\n",
           "Allow: " + allow + "\r\n");
    return;
  }
  LocalResponse resp;
  try {
    resp = route->second.handler(req);
  } catch (const std::exception& e) {
    Log(LogLevel::kError, "local endpoint failed", {{"path", req.path}, {"error", e.what()}, {"next", "answer 500"}});
    resp = LocalResponse{500, "text/plain; charset=utf-8", "internal error\n"};
  }
  Answer(c, resp.status, resp.content_type, resp.body);
}

void LocalServer::Answer(Connection& c, int status, const std::string& content_type, const std::string& body,
                         const std::string& extra_headers) {
  c.out = "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) + "\r\nContent-Type: " + content_type +
          "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" + extra_headers +
          "\r\n" + body;
  c.answering = true;
  // A client that does not read its answer is dropped after another read timeout.
  c.deadline = std::chrono::steady_clock::now() + options_.read_timeout;
}

bool LocalServer::WriteTo(Connection& c) {
  while (c.written < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    c.written += static_cast<size_t>(n);
  }
  ::shutdown(c.fd, SHUT_WR);  // the answer is complete; close() follows
  return false;
}

}  // namespace nodehook
