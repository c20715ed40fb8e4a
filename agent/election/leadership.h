// Leadership: whether this agent may run cluster-singleton hooks right now (see
// leader_election.h for how it is decided). The reconciler asks before every singleton hook
// and runs the hook under the term's token, which is cancelled when the term ends, so a hook
// still running then is stopped (SIGTERM, then SIGKILL after the runner's grace).
// Implementations are thread-safe.
#pragma once

#include <memory>

#include "agent/base/cancel.h"

namespace nodehook {

class Leadership {
 public:
  virtual ~Leadership() = default;
  // The current term's token when a singleton hook may start now; null when it may not.
  virtual std::shared_ptr<const CancelToken> TermIfMayStart() const = 0;
};

}  // namespace nodehook
