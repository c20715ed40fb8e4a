// AgentHarness: one real Agent (real cpprest transport, RestKubeClient, SQLite store) against a
// FakeApiServer serving widgets from memory, with a FakeRunner in place of hook processes.
// Short timeouts (1 s watches, 2 s stall window, 50-400 ms reconnect backoff) keep each fault
// test to a few seconds of real time. Single test thread; the agent runs on its own thread.
#pragma once

#include <fstream>
#include <map>
#include <thread>
#include <tuple>

#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/credentials/file_source.h"
#include "agent/pipeline/agent.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_api_server.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {

inline constexpr const char* kWidgets = "/apis/example.com/v1/widgets";

class AgentHarness {
 public:
  AgentHarness() {
    server.ServeCollection(kWidgets);
    std::ofstream(dir.File("token")) << "token-1";
    server.RequireToken("token-1");
    store = std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value();
    TransportConfig transport;
    transport.server = server.url();
    auto token = RotatingTokenSource(dir.File("token"), "token-1", SystemClock::Instance());
    transport.bearer_token = token.current;
    transport.reload_bearer_token = token.reload;
    transport.idle_timeout_seconds = 2;  // the stall window
    client = std::make_unique<RestKubeClient>(NewCpprestTransport(transport));

    config.node_name = "node-a";
    config.state_file = dir.File("state.db");
    WatchedResource widgets;
    widgets.ref = {"example.com", "v1", "widgets", "", ""};
    for (const char* reason : {kReasonCreate, kReasonUpdate, kReasonDelete}) {
      widgets.hooks[reason] = HookSpec{{std::string("/hooks/") + reason}, std::chrono::seconds(5)};
    }
    config.resources.push_back(widgets);
    config.tuning.workers = 1;  // FIFO handling: Settle() relies on it
    config.tuning.watch_timeout_seconds = 1;
    config.tuning.reconnect_initial_ms = 50;
    config.tuning.reconnect_max_ms = 400;
    config.tuning.retry_base_seconds = 1;
    config.tuning.hook_work_dir = dir.File("scratch");
  }

  ~AgentHarness() { Stop(); }

  void Start() { Start(runner, SystemClock::Instance()); }
  // With another runner and clock (both must outlive the harness).
  void Start(ActionRunner& hooks, Clock& clock) {
    agent = std::make_unique<Agent>(config, *client, *store, *store, hooks, clock);
    thread = std::thread([this] { agent->Run(*stop); });
  }
  // Stops the agent, as a shutdown does; Start() runs a new one on the same state file.
  void Stop() {
    stop->Cancel();
    if (thread.joinable()) thread.join();
    agent.reset();
    stop = std::make_unique<CancelToken>();
  }

  void Put(const std::string& name, int size) {
    server.PutObject(kWidgets, R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name +
                                   R"(","namespace":"ns","uid":"uid-)" + name + R"("},"spec":{"size":)" +
                                   std::to_string(size) + "}}");
  }
  void Delete(const std::string& name) { server.DeleteObject(kWidgets, "ns", name); }

  // How often the hook ran for `name` and `reason`.
  size_t Runs(const std::string& name, const std::string& reason) const {
    return CountRuns(runner.calls(), name, reason);
  }

  bool WaitForRun(const std::string& name, const std::string& reason, size_t count = 1) {
    return runner.WaitFor(
        [&](const std::vector<ActionRequest>& calls) { return CountRuns(calls, name, reason) >= count; },
        std::chrono::seconds(30));
  }

  // Once a fresh object's create ran, everything queued before it was handled (one worker, FIFO).
  bool Settle() {
    std::string name = "sentinel-" + std::to_string(++sentinels_);
    Put(name, 0);
    return WaitForRun(name, kReasonCreate);
  }

  size_t WatchRequests() const {
    size_t n = 0;
    for (const auto& r : server.requests()) n += r.is_watch() ? 1 : 0;
    return n;
  }

  // Waits until the client opened another watch after `seen` earlier ones.
  bool WaitForWatchAfter(size_t seen) {
    for (int i = 0; i < 600 && WatchRequests() <= seen; ++i) {
      server.WaitForRequests(server.requests().size() + 1, std::chrono::milliseconds(50));
    }
    return WatchRequests() > seen;
  }

  // Polls the agent's own health view until its first list is complete. A hook may run before
  // that: the list's objects reach the queue (and a worker) before the watcher marks itself synced.
  bool WaitForSynced() {
    for (int i = 0; i < 600; ++i) {
      if (agent->HealthSnapshot()[0].synced) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a condition, with a deadline
    }
    return false;
  }

  // Polls the agent's own health view until its watch has failed `n` times in a row.
  bool WaitForFailures(int n) {
    for (int i = 0; i < 600; ++i) {
      if (agent->HealthSnapshot()[0].consecutive_failures >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a condition, with a deadline
    }
    return false;
  }

  FakeApiServer server;
  TempDir dir;
  FakeRunner runner;
  std::unique_ptr<SqliteStateStore> store;
  std::unique_ptr<RestKubeClient> client;
  Config config;
  std::unique_ptr<Agent> agent;
  std::unique_ptr<CancelToken> stop = std::make_unique<CancelToken>();
  std::thread thread;

 private:
  static size_t CountRuns(const std::vector<ActionRequest>& calls, const std::string& name,
                          const std::string& reason) {
    size_t n = 0;
    for (const auto& call : calls) {
      if (FakeRunner::Env(call, "NODEHOOK_NAME") == name && FakeRunner::Env(call, "NODEHOOK_REASON") == reason) ++n;
    }
    return n;
  }

  int sentinels_ = 0;
};

}  // namespace nodehook
