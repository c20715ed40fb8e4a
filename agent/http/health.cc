#include "agent/http/health.h"

namespace nodehook {
namespace {

std::string StateSuffix(const WatchHealth& r) { return r.state.empty() ? "" : " (state " + r.state + ")"; }

long long SecondsBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration_cast<std::chrono::seconds>(to - from).count();
}

}  // namespace

HealthReport CheckLiveness(const std::vector<WatchHealth>& resources, TimePoint now, const HealthBounds& bounds) {
  HealthReport report;
  for (const WatchHealth& r : resources) {
    long long silent = SecondsBetween(r.last_activity, now);
    bool stale = now - r.last_activity > bounds.stale_after;
    std::string line = r.id;
    if (stale && r.consecutive_failures > 0) {
      report.ok = false;
      line += " stale: no activity for " + std::to_string(silent) + "s and " +
              std::to_string(r.consecutive_failures) + " reconnects failed";
    } else if (stale) {
      line += " ok: quiet for " + std::to_string(silent) + "s, but the connection is not failing";
    } else {
      line += " ok: last activity " + std::to_string(silent) + "s ago";
      if (r.consecutive_failures > 0) line += ", " + std::to_string(r.consecutive_failures) + " failures since";
    }
    report.body += line + StateSuffix(r) + "\n";
  }
  if (resources.empty()) report.body = "ok: no resources watched\n";
  return report;
}

HealthReport CheckReadiness(const std::vector<WatchHealth>& resources, const std::vector<std::string>& problems) {
  HealthReport report;
  std::string failing;
  for (const std::string& problem : problems) failing += "not ready: " + problem + "\n";
  for (const WatchHealth& r : resources) {
    if (r.synced) {
      report.body += r.id + " ok: synced" + StateSuffix(r) + "\n";
    } else {
      report.ok = false;
      report.body += r.id + " not synced: first list not complete" + StateSuffix(r) + "\n";
    }
  }
  if (resources.empty()) report.body = "ok: no resources watched\n";
  if (!problems.empty()) {
    report.ok = false;
    report.body = failing + report.body;
  }
  return report;
}

}  // namespace nodehook
