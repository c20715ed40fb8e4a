// Sockets, request reading and scripted layers (token, faults, FIFO script) of FakeApiServer.
#include "test/fakes/fake_api_server.h"

#include "test/fakes/loopback_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace nodehook {
namespace fake_api_internal {

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string Chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" + message +
         R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

}  // namespace fake_api_internal

namespace {

using namespace fake_api_internal;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

FakeResponse StatusResponse(int status, int retry_after_seconds, const std::string& message) {
  FakeResponse r;
  r.status = status;
  r.chunked = false;
  r.chunks = {StatusJson(status, Reason(status), message)};
  if (retry_after_seconds > 0) r.headers.emplace_back("Retry-After", std::to_string(retry_after_seconds));
  return r;
}

// Reads one request (head plus Content-Length body) from `fd`, keeping extra bytes in `buffer`.
bool ReadRequest(int fd, std::string* buffer, RecordedRequest* req) {
  char block[4096];
  size_t head_end;
  while ((head_end = buffer->find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, block, sizeof block, 0);
    if (n <= 0) return false;
    buffer->append(block, static_cast<size_t>(n));
  }
  std::string head = buffer->substr(0, head_end);
  buffer->erase(0, head_end + 4);
  size_t line_end = head.find("\r\n");
  std::string request_line = head.substr(0, line_end);
  size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
  if (sp1 == std::string::npos || sp2 <= sp1) return false;
  req->method = request_line.substr(0, sp1);
  req->target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t content_length = 0;
  for (size_t pos = line_end; pos != std::string::npos && pos < head.size();) {
    size_t next = head.find("\r\n", pos + 2);
    std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    pos = next;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = Lower(line.substr(0, colon));
    size_t value_start = std::min(line.find_first_not_of(' ', colon + 1), line.size());
    std::string value = line.substr(value_start);
    if (name == "content-length") content_length = std::strtoul(value.c_str(), nullptr, 10);
    req->headers.emplace_back(name, value);
  }
  while (buffer->size() < content_length) {
    ssize_t n = ::recv(fd, block, sizeof block, 0);
    if (n <= 0) return false;
    buffer->append(block, static_cast<size_t>(n));
  }
  req->body = buffer->substr(0, content_length);
  buffer->erase(0, content_length);
  return true;
}

bool Matches(FakeFault::Target target, bool watch) {
  return target == FakeFault::Target::kAny || (target == FakeFault::Target::kWatch) == watch;
}

}  // namespace

std::string RecordedRequest::Header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return "";
}

bool RecordedRequest::is_watch() const {
  size_t q = target.find('?');
  if (q == std::string::npos) return false;
  std::string query = "&" + target.substr(q + 1) + "&";
  return query.find("&watch=1&") != std::string::npos || query.find("&watch=true&") != std::string::npos;
}

FakeApiServer::FakeApiServer() { Listen(); }

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  // No new connection threads start once the accept loop has ended.
  for (auto& t : connection_threads_) t.join();
}

void FakeApiServer::Listen() {
  listen_fd_ = ListenOnLoopback(port_, "FakeApiServer: cannot listen on 127.0.0.1");  // port_ 0 the first time
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

void FakeApiServer::GoOffline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++offline_generation_;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
}

void FakeApiServer::GoOnline() {
  if (listen_fd_ < 0) Listen();
}

void FakeApiServer::Enqueue(FakeResponse response) {
  std::lock_guard<std::mutex> lock(mu_);
  script_.push_back(std::move(response));
}

void FakeApiServer::InjectFault(FakeFault fault, int times) {
  std::lock_guard<std::mutex> lock(mu_);
  faults_.emplace_back(fault, times);
}

void FakeApiServer::RequireToken(std::string token) {
  std::lock_guard<std::mutex> lock(mu_);
  required_token_ = std::move(token);
}

std::vector<RecordedRequest> FakeApiServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

bool FakeApiServer::WaitForRequests(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

void FakeApiServer::AcceptLoop() {
  while (true) {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;  // shut down
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.insert(fd);
    connection_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void FakeApiServer::Serve(int fd) {
  std::string buffer;
  RecordedRequest req;
  while (ReadRequest(fd, &buffer, &req)) {
    FakeResponse response;
    FakeFault fault;
    bool has_fault = false;
    bool keep_open;
    if (!TakeScripted(req, &response, &fault, &has_fault)) {
      keep_open = ServeFromMemory(fd, req, WatchFault::kNone);
    } else if (has_fault) {
      keep_open = ServeFault(fd, req, fault);
    } else {
      keep_open = Respond(fd, response);
    }
    if (!keep_open) break;
    req = RecordedRequest{};
  }
  std::lock_guard<std::mutex> lock(mu_);
  open_fds_.erase(fd);
  ::close(fd);
}

bool FakeApiServer::TakeScripted(const RecordedRequest& req, FakeResponse* response, FakeFault* fault,
                                 bool* has_fault) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.push_back(req);
  cv_.notify_all();
  if (!required_token_.empty() && req.Header("authorization") != "Bearer " + required_token_) {
    *response = StatusResponse(401, 0, "Unauthorized");
    return true;
  }
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (!Matches(it->first.target, req.is_watch())) continue;
    *fault = it->first;
    *has_fault = true;
    if (--it->second <= 0) faults_.erase(it);
    return true;
  }
  if (!script_.empty()) {
    *response = std::move(script_.front());
    script_.erase(script_.begin());
    return true;
  }
  if (collections_.count(req.target.substr(0, req.target.find('?')))) return false;
  *response = StatusResponse(500, 0, "fake api server: no scripted response for " + req.method + " " + req.target);
  return true;
}

bool FakeApiServer::ServeFault(int fd, const RecordedRequest& req, const FakeFault& fault) {
  switch (fault.kind) {
    case FakeFault::Kind::kHttpStatus:
      return Respond(fd, StatusResponse(fault.status, fault.retry_after_seconds, "injected fault"));
    case FakeFault::Kind::kStallBeforeHeaders:
      HoldOpen(fd);
      return false;
    case FakeFault::Kind::kStallAfterHeaders:
      if (SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")) {
        HoldOpen(fd);
      }
      return false;
    case FakeFault::Kind::kGoneInStream: {
      FakeResponse gone;
      gone.chunks = {R"({"type":"ERROR","object":)" +
                     StatusJson(410, "Expired", "too old resource version: injected fault") + "}\n"};
      return Respond(fd, gone);
    }
    case FakeFault::Kind::kCutMidEvent: return ServeFromMemory(fd, req, WatchFault::kCutMidEvent);
    case FakeFault::Kind::kGarbageLine: return ServeFromMemory(fd, req, WatchFault::kGarbageFirst);
    case FakeFault::Kind::kNoInitialEventsEnd: return ServeFromMemory(fd, req, WatchFault::kNoInitialEventsEnd);
  }
  return false;
}

bool FakeApiServer::ClientHungUp(int fd) const {
  pollfd p{fd, static_cast<short>(POLLRDHUP), 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

void FakeApiServer::HoldOpen(int fd) {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t generation = offline_generation_;
  // Hanging up is only seen by looking at the socket, hence the short wait slices.
  while (!stopping_ && generation == offline_generation_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    lock.unlock();
    bool gone = ClientHungUp(fd);
    lock.lock();
    if (gone) return;
  }
}

bool FakeApiServer::Respond(int fd, const FakeResponse& r) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
  if (!r.chunked) {
    std::string body;
    for (const auto& c : r.chunks) body += c;
    return SendAll(fd, head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body) &&
           r.ending == FakeResponse::Ending::kComplete;
  }
  if (!SendAll(fd, head + "Transfer-Encoding: chunked\r\n\r\n")) return false;
  for (const auto& chunk : r.chunks) {
    if (chunk.empty()) continue;  // an empty chunk would end the body
    if (r.delay_between_chunks.count() > 0) std::this_thread::sleep_for(r.delay_between_chunks);
    if (!SendAll(fd, Chunk(chunk))) return false;
  }
  switch (r.ending) {
    case FakeResponse::Ending::kComplete: return SendAll(fd, "0\r\n\r\n");
    case FakeResponse::Ending::kDropConnection: return false;
    case FakeResponse::Ending::kStall: HoldOpen(fd); return false;
  }
  return false;
}

}  // namespace nodehook
