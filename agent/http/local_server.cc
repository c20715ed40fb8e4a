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

#include "agent/base/log.h"
#include "agent/base/thread_name.h"
#include "agent/http/listen_sockets.h"
#include "agent/http/request_parser.h"

namespace nodehook {
namespace {

constexpr char kWakeStop = 's';

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

LocalResponse Text(int status, std::string body) {
  LocalResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// The client's IP without the port; an IPv4 client of a dual-stack socket counts as IPv4.
std::string PeerOf(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, text, sizeof text);
    return text;
  }
  const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    ::inet_ntop(AF_INET, &v6.s6_addr[12], text, sizeof text);
  } else {
    ::inet_ntop(AF_INET6, &v6, text, sizeof text);
  }
  return text;
}

}  // namespace

struct LocalServer::Connection {
  int fd;
  std::string peer;
  TimePoint deadline;
  std::string in;
  std::string out;
  size_t written = 0;
  bool answering = false;  // the response is queued; only writing remains
};

LocalServer::LocalServer(LocalServerOptions options)
    : options_(std::move(options)), clock_(options_.clock ? *options_.clock : SystemClock::Instance()) {}

LocalServer::~LocalServer() { Stop(); }

void LocalServer::Handle(std::string path, LocalHandler handler, std::vector<std::string> methods) {
  routes_[std::move(path)] = Route{std::move(handler), std::move(methods)};
}

Status LocalServer::Start() {
  if (thread_.joinable()) return InternalError("local server already started");
  auto sockets = OpenListenSockets(HostPort{options_.bind_address, options_.port});
  if (!sockets.ok()) return Status(sockets.status().code(), "local server: " + sockets.status().message());
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    for (int fd : sockets->fds) ::close(fd);
    return UnavailableError(std::string("local server: pipe: ") + std::strerror(errno));
  }
  listen_fds_ = sockets->fds;
  listening_ = sockets->bound;
  loopback_only_ = sockets->loopback_only;
  port_ = sockets->port;
  wake_read_fd_ = pipe_fds[0];
  wake_write_fd_ = pipe_fds[1];
  stopping_ = false;
  thread_ = NamedThread("nh-http", [this] { Loop(); });
  return Status::Ok();
}

void LocalServer::Wake(char why) {
  while (::write(wake_write_fd_, &why, 1) < 0 && errno == EINTR) {
  }
}

void LocalServer::Poke() {
  if (thread_.joinable()) Wake('p');
}

void LocalServer::Stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  Wake(kWakeStop);
  thread_.join();
  for (int fd : listen_fds_) ::close(fd);
  listen_fds_.clear();
  ::close(wake_read_fd_);
  ::close(wake_write_fd_);
  wake_read_fd_ = wake_write_fd_ = -1;
}

void LocalServer::ExpireDeadlines(std::vector<Connection>& connections) {
  TimePoint now = clock_.Now();
  auto expired = [&](Connection& c) {
    if (now < c.deadline) return false;
    if (!c.answering) {  // a slow reader gets 408 if it can take it
      std::string body = "request not received within the read timeout\n";
      std::string msg = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body;
      (void)!::send(c.fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    ::close(c.fd);
    return true;
  };
  connections.erase(std::remove_if(connections.begin(), connections.end(), expired), connections.end());
}

void LocalServer::Loop() {
  std::vector<Connection> connections;
  std::vector<pollfd> fds;
  const size_t first_connection = 1 + listen_fds_.size();
  while (true) {
    ExpireDeadlines(connections);
    fds.clear();
    fds.push_back({wake_read_fd_, POLLIN, 0});
    for (int fd : listen_fds_) fds.push_back({fd, POLLIN, 0});
    TimePoint now = clock_.Now();
    TimePoint next_deadline = now + std::chrono::hours(1);
    for (const Connection& c : connections) {
      fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
      next_deadline = std::min(next_deadline, c.deadline);
    }
    auto wait = std::max<long long>(0, (next_deadline - now).count()) + 1;
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait));
    if (ready < 0 && errno != EINTR) {
      Log(LogLevel::kError, "local server poll failed", {{"error", std::strerror(errno)}, {"next", "stop serving"}});
      break;
    }
    if (ready <= 0) continue;
    if (fds[0].revents != 0) {
      char drain[64];
      while (::read(wake_read_fd_, drain, sizeof drain) > 0) {
      }
      if (stopping_) break;
    }
    // Connections first (fds[first_connection..] match `connections` in order), then new ones.
    std::vector<Connection> kept;
    kept.reserve(connections.size());
    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      short events = fds[first_connection + i].revents;
      bool keep = true;
      if (events & (POLLERR | POLLNVAL)) keep = false;
      else if (events & (POLLIN | POLLHUP)) keep = c.answering ? WriteTo(c) : ReadFrom(c);
      else if (events & POLLOUT) keep = WriteTo(c);
      if (keep) {
        kept.push_back(std::move(c));
      } else {
        ::close(c.fd);
      }
    }
    connections.swap(kept);
    for (size_t i = 0; i < listen_fds_.size(); ++i) {
      if (fds[1 + i].revents & POLLIN) AcceptFrom(listen_fds_[i], connections);
    }
  }
  for (Connection& c : connections) ::close(c.fd);
}

void LocalServer::AcceptFrom(int listen_fd, std::vector<Connection>& connections) {
  while (true) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    Connection c{fd, PeerOf(addr), clock_.Now() + options_.read_timeout, {}, {}};
    std::vector<OpenConnectionView> views;
    views.reserve(connections.size());
    for (const Connection& open : connections) views.push_back({open.peer, !open.answering});
    Admission admission = AdmitConnection(views, c.peer, options_.limits);
    if (admission.evict) {
      ::close(connections[*admission.evict].fd);
      connections.erase(connections.begin() + static_cast<long>(*admission.evict));
      if (options_.evicted) options_.evicted->Increment();
    }
    if (!admission.admit) {
      ::close(fd);  // everything is busy answering: shed load rather than queue it
      continue;
    }
    // A probe usually sent its request together with the connect: serve it now, so that a
    // burst of connections accepted behind it cannot evict it as idle.
    if (ReadFrom(c)) {
      connections.push_back(std::move(c));
    } else {
      ::close(c.fd);
    }
  }
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
    case ParseOutcome::kComplete: Answer(c, Dispatch(req)); break;
    case ParseOutcome::kMalformed: Answer(c, Text(400, "malformed request\n")); break;
    case ParseOutcome::kTooLarge: Answer(c, Text(413, "request too large\n")); break;
    case ParseOutcome::kNeedLength: Answer(c, Text(411, "send Content-Length\n")); break;
  }
  return WriteTo(c);
}

LocalResponse LocalServer::Dispatch(const LocalRequest& req) {
  auto route = routes_.find(req.path);
  // Else the longest subtree route ("/v1/objects/") the path lies below.
  for (auto it = routes_.begin(); it != routes_.end(); ++it) {
    const std::string& key = it->first;
    bool below = key.back() == '/' && req.path.size() > key.size() && req.path.compare(0, key.size(), key) == 0;
    if (below && (route == routes_.end() || route->first.size() < key.size())) route = it;
  }
  if (route == routes_.end()) return Text(404, "no such endpoint: " + req.path + "\n");
  const auto& methods = route->second.methods;
  if (std::find(methods.begin(), methods.end(), req.method) == methods.end()) {
    std::string allow;
    for (const auto& m : methods) allow += (allow.empty() ? "" : ", ") + m;
    LocalResponse resp = Text(405, req.method + " is not allowed on " + req.path + "\n");
    resp.headers.emplace_back("Allow", allow);
    return resp;
  }
  try {
    return route->second.handler(req);
  } catch (const std::exception& e) {
    Log(LogLevel::kError, "local endpoint failed", {{"path", req.path}, {"error", e.what()}, {"next", "answer 500"}});
    return Text(500, "internal error\n");
  }
}

void LocalServer::Answer(Connection& c, const LocalResponse& response) {
  c.out = "HTTP/1.1 " + std::to_string(response.status) + " " + ReasonPhrase(response.status) +
          "\r\nContent-Type: " + response.content_type + "\r\nContent-Length: " + std::to_string(response.body.size()) +
          "\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) c.out += name + ": " + value + "\r\n";
  c.out += "\r\n" + response.body;
  c.answering = true;
  // A client that does not read its answer is dropped after another read timeout.
  c.deadline = clock_.Now() + options_.read_timeout;
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
