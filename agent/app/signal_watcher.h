// SignalWatcher: how `nodehook run` reacts to SIGINT and SIGTERM.
//  - It blocks both in the calling thread (create it before any other thread, which inherits
//    the mask), so only its own thread ever receives them, through sigwait().
//  - The first signal cancels stop(): the agent stops watching and taking work, and running
//    hooks get the shutdown grace (see agent/pipeline/shutdown_grace.h).
//  - A second signal runs the OnSecondSignal() action (SIGKILL every hook's process group) and
//    exits 128 + the signal at once.
// Its state is shared with the signal thread, which is never joined, so a late signal during
// exit never touches freed memory. Thread-safe.
#pragma once

#include <signal.h>

#include <functional>
#include <memory>

#include "agent/base/cancel.h"
#include "agent/base/mutex.h"

namespace nodehook {

class SignalWatcher {
 public:
  SignalWatcher();

  const CancelToken& stop() const { return state_->stop; }

  // What a second signal does before exiting; nullptr for nothing.
  void OnSecondSignal(std::function<void()> action);

 private:
  struct State {
    sigset_t signals;
    CancelToken stop;
    Mutex mu;
    std::function<void()> at_once GUARDED_BY(mu);
  };
  static void Watch(State& state);

  std::shared_ptr<State> state_;
};

}  // namespace nodehook
