// FakeApiServer: a scriptable HTTP/1.1 API server on 127.0.0.1 for running the real transport,
// client and agent against injected faults. Three layers answer each request, first match wins:
//   1. RequireToken(): a request without "Authorization: Bearer <token>" gets 401.
//   2. InjectFault(): the next request the fault targets (list, watch or any) gets the fault.
//   3. Enqueue(): scripted responses, FIFO, for any request.
//   4. ServeCollection(): an in-memory resource (list with resourceVersion, limit/continue, and
//      watch streams with replay from a resourceVersion, bookmarks and 410 after compaction;
//      sendInitialEvents=true sends the state as ADDED events, then the BOOKMARK annotated
//      k8s.io/initial-events-end, then changes, as a streaming list does),
//      changed by the test through PutObject()/DeleteObject().
// Anything else gets a 500 naming the request.
// GoOffline()/GoOnline() close the port (refusing connections) and reopen the SAME port with
// the same data: an API server restart. Server-side watch timeouts (timeoutSeconds) are honoured
// in real time. Namespaced collection paths and label selectors are not interpreted.
// Thread-safe: tests script and inspect from their thread while connection threads serve.
// (fake_api_server.cc: sockets and layers 1-3; fake_api_server_objects.cc: layer 4.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nodehook {

struct FakeResponse {
  enum class Ending {
    kComplete,        // terminating chunk (or full Content-Length body); connection kept alive
    kDropConnection,  // close the socket right after the last listed chunk
    kStall,           // send nothing more; hold the socket until the client leaves or the server stops
  };

  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> chunks;  // each written as one HTTP chunk
  bool chunked = true;              // false: one body with Content-Length
  Ending ending = Ending::kComplete;
  std::chrono::milliseconds delay_between_chunks{0};  // a slow server, not test synchronisation
};

struct FakeFault {
  enum class Kind {
    kHttpStatus,          // `status` with a metav1.Status body, plus Retry-After when > 0
    kGoneInStream,        // watch: 200, one ERROR event with code 410, end of stream
    kCutMidEvent,         // watch: served normally, but the first event sent is cut in half and
                          // the connection dropped (replayed or live: change an object to trigger it)
    kStallBeforeHeaders,  // nothing at all is sent; the connection is held open
    kStallAfterHeaders,   // watch: 200 headers, then nothing, whatever changes
    kGarbageLine,         // watch: 200, a line that is not JSON, then served normally
    kNoInitialEventsEnd,  // streaming list (sendInitialEvents): the initial ADDED events, then a
                          // clean end of stream without the initial-events-end bookmark
  };
  enum class Target { kAny, kList, kWatch };

  Kind kind = Kind::kHttpStatus;
  Target target = Target::kAny;
  int status = 500;
  int retry_after_seconds = 0;

  static FakeFault Http(int status, int retry_after_seconds = 0, Target target = Target::kAny) {
    FakeFault f;
    f.status = status;
    f.retry_after_seconds = retry_after_seconds;
    f.target = target;
    return f;
  }
  static FakeFault OnWatch(Kind kind) {
    FakeFault f;
    f.kind = kind;
    f.target = Target::kWatch;
    return f;
  }
};

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  // The value of header `name` (lower-case), or "" when absent.
  std::string Header(const std::string& name) const;
  bool is_watch() const;
};

class FakeApiServer {
 public:
  FakeApiServer();   // binds and starts serving; aborts the test binary if it cannot bind
  ~FakeApiServer();  // closes every connection (ending stalls and watches) and joins all threads
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // --- scripting -----------------------------------------------------------------------------
  void Enqueue(FakeResponse response);
  // The next `times` requests matching fault.target get the fault.
  void InjectFault(FakeFault fault, int times = 1);
  // Requests must carry "Authorization: Bearer <token>" or get 401; "" accepts any.
  void RequireToken(std::string token);

  // --- availability --------------------------------------------------------------------------
  // Closes the listening socket and every connection: clients get "connection refused".
  void GoOffline();
  // Listens on the same port again (objects and history kept). Aborts if the port was taken.
  void GoOnline();

  // --- in-memory resource (fake_api_server_objects.cc) ----------------------------------------
  // Serves `collection_path` (e.g. "/apis/example.com/v1/widgets") from memory.
  void ServeCollection(const std::string& collection_path);
  // Creates or replaces the object (JSON with metadata.name, and namespace/uid as wanted) and
  // gives it the next resourceVersion, which is returned. Open watches get ADDED or MODIFIED.
  std::string PutObject(const std::string& collection_path, const std::string& object_json);
  // Removes namespace/name; open watches get DELETED with the last state at a new
  // resourceVersion. False when there was no such object.
  bool DeleteObject(const std::string& collection_path, const std::string& namespace_name,
                    const std::string& name);
  // Every open watch that allowed bookmarks gets a BOOKMARK at the current resourceVersion.
  void SendBookmarks();
  // Forgets history: watches (and continue tokens) from an older resourceVersion get 410.
  void CompactHistory();
  std::string resource_version() const;
  // Watches currently streaming from memory (a client that hung up is no longer counted).
  int open_watches() const;
  bool WaitForOpenWatches(int n, std::chrono::milliseconds timeout) const;

  // --- inspection ----------------------------------------------------------------------------
  std::vector<RecordedRequest> requests() const;
  // True once `n` requests have arrived; false if `timeout` passes first.
  bool WaitForRequests(size_t n, std::chrono::milliseconds timeout) const;

 private:
  struct StoredObject {
    uint64_t rv;
    std::string json;  // with metadata.resourceVersion set
  };
  struct StoredEvent {
    uint64_t rv;
    std::string collection;
    std::string type;
    std::string object_json;
  };
  struct Collection {
    std::map<std::string, StoredObject> objects;  // key "namespace/name"
  };

  void Listen();
  void AcceptLoop();
  void Serve(int fd);
  bool Respond(int fd, const FakeResponse& response);  // false: connection must close
  // What to do with a request (layers 1-3); false when it falls through to layer 4.
  bool TakeScripted(const RecordedRequest& req, FakeResponse* response, FakeFault* fault, bool* has_fault);
  bool ServeFault(int fd, const RecordedRequest& req, const FakeFault& fault);
  // How a watch served from memory misbehaves (FakeFault kinds that need the collection).
  enum class WatchFault { kNone, kCutMidEvent, kGarbageFirst, kNoInitialEventsEnd };
  bool ServeFromMemory(int fd, const RecordedRequest& req, WatchFault fault);
  bool ServeList(int fd, const std::string& collection, const std::string& query);
  bool ServeWatch(int fd, const std::string& collection, const std::string& query, WatchFault fault);
  // Holds the connection until the client hangs up, the server stops or goes offline.
  void HoldOpen(int fd);
  bool ClientHungUp(int fd) const;

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stopping_ = false;                        // guarded by mu_
  uint64_t offline_generation_ = 0;              // guarded by mu_; bumped by GoOffline()
  std::vector<FakeResponse> script_;             // guarded by mu_; front is next
  std::vector<std::pair<FakeFault, int>> faults_;  // guarded by mu_; (fault, times left)
  std::string required_token_;                   // guarded by mu_
  std::vector<RecordedRequest> requests_;        // guarded by mu_
  std::set<int> open_fds_;                       // guarded by mu_
  std::vector<std::thread> connection_threads_;  // guarded by mu_

  // In-memory resources; all guarded by mu_.
  std::map<std::string, Collection> collections_;
  std::vector<StoredEvent> history_;  // append-only
  uint64_t last_rv_ = 100;
  uint64_t compacted_rv_ = 0;
  uint64_t bookmark_generation_ = 0;
  int open_watches_ = 0;
};

}  // namespace nodehook
