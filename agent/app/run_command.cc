#include "agent/app/run_command.h"

#include <csignal>
#include <cstdlib>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "agent/actions/process_runner.h"
#include "agent/base/log.h"
#include "agent/core/agent.h"
#include "agent/kube/connection_config.h"
#include "agent/kube/rest_kube_client.h"
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

// Blocks SIGINT/SIGTERM in every thread and turns the first one into a cancellation;
// a second one exits at once, for a user who does not want to wait for running hooks.
class SignalWatcher {
 public:
  explicit SignalWatcher(CancelToken& stop) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this, &stop] {
      int sig = 0;
      sigwait(&signals_, &sig);
      Log(LogLevel::kInfo, "signal received",
          {{"signal", sig == SIGINT ? "SIGINT" : "SIGTERM"}, {"next", "stop watching, let running hooks finish"}});
      stop.Cancel();
      sigwait(&signals_, &sig);
      Log(LogLevel::kWarn, "second signal received", {{"next", "exit now"}});
      std::_Exit(130);
    });
    thread_.detach();
  }

 private:
  sigset_t signals_;
  std::thread thread_;
};

Result<TransportConfig> ConnectionFor(const Config& config) {
  Result<TransportConfig> transport =
      config.api.in_cluster ? LoadInClusterConfig() : LoadKubeconfig(config.api.kubeconfig);
  if (!transport.ok()) return transport;
  // cpprest's timeout restarts on every read, so it is our stall detector: a watch that sends
  // no byte (not even a bookmark) for this long is dropped and reopened.
  transport->idle_timeout_seconds = config.tuning.stall_seconds;
  return transport;
}

}  // namespace

int RunAgent(const Config& config) {
  LogLevel level = LogLevel::kInfo;
  ParseLogLevel(config.tuning.log_level, &level);
  SetLogLevel(level);

  auto connection = ConnectionFor(config);
  if (!connection.ok()) {
    Log(LogLevel::kError, "cannot configure the API connection",
        {{"error", connection.status().ToString()}, {"next", "exit 1"}});
    return 1;
  }
  auto store = SqliteStateStore::Open(config.state_file, config.node_name, StoreOptions{});
  if (!store.ok()) {
    Log(LogLevel::kError, "cannot open the state file",
        {{"state_file", config.state_file}, {"error", store.status().ToString()}, {"next", "exit 1"}});
    return 1;
  }
  RestKubeClient client(NewCpprestTransport(std::move(connection).value()));
  ProcessRunner runner;

  CancelToken stop;
  SignalWatcher signals(stop);
  Agent agent(config, client, **store, runner, SystemClock::Instance());
  agent.Run(stop);
  return 0;
}

}  // namespace nodehook
