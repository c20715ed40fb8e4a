// RunElectedTerms: the loop of a component that works only while elected (a rollout's
// coordinator, a ready condition's writer): it takes part in `elector`'s election until `stop`,
// and each time a term starts runs `term` on the calling thread, handing it a test of whether the
// term still runs (false once it ends or `stop` comes). The election runs on a thread of its own
// and releases the Lease when stopped.
// Blocks until `stop`; `elector` must outlive the call and have no other on-change callback.
#pragma once

#include <functional>

#include "agent/base/cancel.h"
#include "agent/election/leader_election.h"

namespace nodehook {

using ElectedTerm = std::function<void(const std::function<bool()>& leading)>;

void RunElectedTerms(LeaderElector& elector, const CancelToken& stop, const ElectedTerm& term);

}  // namespace nodehook
