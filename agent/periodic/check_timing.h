// CheckTiming: when an object's periodic check is due. Pure functions, so every rule is tested
// with plain numbers:
//  - the first check of an object on a node comes a stable offset into its interval, derived from
//    (node, uid): a fleet's nodes and a node's objects spread over the interval instead of all
//    starting together, and the spread is the same after a restart;
//  - each later check comes one interval after the previous one started, stretched or shrunk by
//    a random share of up to jitter_percent, so nodes that happen to align drift apart;
//  - a due time stored before a restart is kept; one that passed while the agent was down runs
//    once, at a stable offset within min(interval, kOverdueSpread) of the start, so a restart
//    after an outage does not fire every overdue check at once, and skips none.
#pragma once

#include <string>

#include "agent/base/clock.h"

namespace nodehook {

// How widely checks that fell due while the agent was down are spread after it starts.
inline constexpr Duration kOverdueSpread{60'000};

// A deterministic offset in [0, span) for (node, uid); 0 when span <= 0.
Duration StableOffset(const std::string& node, const std::string& uid, Duration span);

// The first check of an object this node has never checked.
TimePoint FirstCheckDue(TimePoint now, const std::string& node, const std::string& uid, Duration interval);

// The check after one that started at `start`; `unit_random` is uniform in [0, 1).
TimePoint NextCheckDue(TimePoint start, Duration interval, int jitter_percent, double unit_random);

// A stored due time, read back after a start at `now`.
TimePoint ResumedCheckDue(TimePoint stored, TimePoint now, const std::string& node, const std::string& uid,
                          Duration interval);

}  // namespace nodehook
