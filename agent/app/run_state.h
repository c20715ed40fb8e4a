// The state step of `nodehook run`: the state directory's checks, the lock (one writer per state
// file), the hook work directory, the store and the health of its writes, built in that order.
#pragma once

#include <memory>
#include <string>

#include "agent/base/cancel.h"
#include "agent/config/config.h"
#include "agent/state/observed_state_store.h"
#include "agent/state/store_health.h"
#include "storage/state_file.h"
#include "storage/state_lock.h"

namespace nodehook {

class Agent;

// Members go in reverse: the store's users first, the lock last.
struct RunState {
  RunState(StateLock taken, OpenedState opened_state, const Config& config);

  // Reports how the state was found at start (ReportStateAtStart) and, from now on, every change
  // of the store's health as an Event on the Node. `agent` must stay valid until DetachAgent().
  void AttachAgent(Agent& agent);
  void DetachAgent();

  StateLock lock;
  OpenedState opened;
  std::string state_file;
  // Every write's Status feeds it: metrics, readiness, Events, retry cadence.
  StoreHealth health;
  ObservedStateStore store;
};

// Checks the state directory, waits for the lock, resolves config->tuning.hook_work_dir, makes the
// state private, sweeps what hooks left behind and opens the store. Null after logging why; then
// `*exit_code` is 0 when `stop` ended the wait for the lock, else 1.
std::unique_ptr<RunState> OpenRunState(Config* config, const CancelToken& stop, int* exit_code);

}  // namespace nodehook
