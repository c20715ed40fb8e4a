// LoopbackListener: accepts TCP connections on 127.0.0.1 (a free port) and serves each on its
// own thread with the given handler, which owns nothing: the listener closes every connection
// when it is destroyed, which ends any handler blocked on it, then joins all threads.
// Also Pump(), which copies bytes both ways between two connections until either side closes.
// Thread-safe. Test helper for the TLS front and the CONNECT proxy.
#pragma once

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace nodehook {

// A socket listening on 127.0.0.1:`port` (0: a free one, the kernel's choice), with SO_REUSEADDR
// so a port given up can be taken again at once; sets `port` to the one bound. Aborts the test
// binary, naming `who`, if it cannot listen.
int ListenOnLoopback(int& port, const char* who);

class LoopbackListener {
 public:
  // Binds and starts accepting; aborts the test binary if it cannot bind.
  explicit LoopbackListener(std::function<void(LoopbackListener& self, int fd)> handler);
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return port_; }

  // Tracks a descriptor the handler opened (e.g. to a backend) so destruction shuts it down too;
  // Untrack before closing it.
  void Track(int fd);
  void Untrack(int fd);

 private:
  void AcceptLoop();

  std::function<void(LoopbackListener&, int)> handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  std::mutex mu_;
  bool stopping_ = false;            // guarded by mu_
  std::set<int> fds_;                // guarded by mu_
  std::vector<std::thread> threads_;  // guarded by mu_
};

// One side of a Pump: `read` returns bytes read (0 = closed, <0 = error), `write` sends all of
// them, `buffered` says whether bytes are ready without polling (TLS records already decrypted).
struct PumpSide {
  int fd;
  std::function<ssize_t(char* data, size_t size)> read;
  std::function<bool(const char* data, size_t size)> write;
  std::function<bool()> buffered = [] { return false; };
};

// Copies a -> b and b -> a until one side closes or fails.
void Pump(const PumpSide& a, const PumpSide& b);

// A PumpSide for a plain socket.
PumpSide SocketSide(int fd);

// Connects to 127.0.0.1:port (or host:port); -1 on failure.
int ConnectTcp(const std::string& host, int port);

}  // namespace nodehook
