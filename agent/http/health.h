// Liveness and readiness as pure functions over a snapshot of the watched resources, so the
// rules are tested without sockets or threads. Thread-safe (no state).
//
// /healthz fails only when a resource has been silent (no byte, event or bookmark) for longer
// than `stale_after` AND its reconnection attempts keep failing. A quiet cluster stays healthy:
// bookmarks (about once a minute) count as activity, and a silent stream that the stall detector
// cut and then reopened successfully has no failures. Restarting the agent cannot fix an API
// server that is down either, but kubelet restarting us after a long outage is harmless, and a
// wedged agent is the case this is here to catch.
// /readyz passes once every resource completed its first list, and while nothing else named in
// `problems` keeps the agent from doing its work (e.g. a state file that does not take writes:
// readiness fails, liveness does not, since a restart would not free the disk).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "agent/base/clock.h"

namespace nodehook {

// What one watched resource reports about itself.
struct WatchHealth {
  std::string id;                // e.g. "widgets.example.com/v1"
  bool synced = false;           // the first list completed
  TimePoint last_activity;       // last byte, event or bookmark; start it at the watcher's start time
  int consecutive_failures = 0;  // list/watch attempts failed in a row; 0 after any success
  std::string state;             // e.g. "watching", for the report only
};

struct HealthBounds {
  // A little above twice the API server's ~60 s bookmark interval: one lost bookmark is normal.
  Duration stale_after = std::chrono::seconds(150);
};

struct HealthReport {
  bool ok = true;
  std::string body;  // one line per resource: its id, then what is wrong or "ok"
  int http_status() const { return ok ? 200 : 503; }
};

// Liveness. Lines read e.g.
//   "widgets.example.com/v1 stale: no activity for 312s and 7 reconnects failed (state listing)"
HealthReport CheckLiveness(const std::vector<WatchHealth>& resources, TimePoint now, const HealthBounds& bounds);

// Readiness. Lines read e.g. "widgets.example.com/v1 not synced: first list not complete (state listing)";
// each of `problems` is one more line (first) and makes the report fail.
HealthReport CheckReadiness(const std::vector<WatchHealth>& resources, const std::vector<std::string>& problems = {});

}  // namespace nodehook
