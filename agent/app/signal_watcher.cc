#include "agent/app/signal_watcher.h"

#include <pthread.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "agent/base/log.h"

namespace nodehook {
namespace {

const char* SignalName(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

}  // namespace

SignalWatcher::SignalWatcher() : state_(std::make_shared<State>()) {
  sigemptyset(&state_->signals);
  sigaddset(&state_->signals, SIGINT);
  sigaddset(&state_->signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &state_->signals, nullptr);
  std::thread([state = state_] { Watch(*state); }).detach();
}

void SignalWatcher::OnSecondSignal(std::function<void()> action) {
  MutexLock lock(&state_->mu);
  state_->at_once = std::move(action);
}

void SignalWatcher::Watch(State& state) {
  int sig = 0;
  sigwait(&state.signals, &sig);
  Log(LogLevel::kInfo, "signal received",
      {{"signal", SignalName(sig)}, {"next", "stop watching and taking work, let running hooks finish"}});
  state.stop.Cancel();
  sigwait(&state.signals, &sig);
  const int code = 128 + sig;
  Log(LogLevel::kWarn, "second signal received",
      {{"signal", SignalName(sig)}, {"next", "SIGKILL every running hook's process group, exit " + std::to_string(code)}});
  {
    MutexLock lock(&state.mu);
    if (state.at_once) state.at_once();
  }
  std::_Exit(code);
}

}  // namespace nodehook
