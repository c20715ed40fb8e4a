#include "agent/http/connection_limits.h"

#include <map>

namespace nodehook {
namespace {

std::optional<size_t> OldestIdleOf(const std::vector<OpenConnectionView>& open, const std::string& peer) {
  for (size_t i = 0; i < open.size(); ++i) {
    if (open[i].idle && open[i].peer == peer) return i;
  }
  return std::nullopt;
}

}  // namespace

Admission AdmitConnection(const std::vector<OpenConnectionView>& open, const std::string& peer,
                          const ConnectionLimits& limits) {
  std::map<std::string, size_t> per_peer;
  for (const OpenConnectionView& c : open) ++per_peer[c.peer];
  Admission out;
  if (per_peer[peer] >= limits.max_per_peer) {
    out.evict = OldestIdleOf(open, peer);
    out.admit = out.evict.has_value();
    return out;
  }
  if (open.size() < limits.max_connections) return out;
  // The heaviest peer that has something to give up; ties go to the peer whose idle
  // connection is oldest.
  size_t heaviest = 0;
  for (const auto& [who, count] : per_peer) {
    std::optional<size_t> candidate = OldestIdleOf(open, who);
    if (!candidate) continue;
    if (!out.evict || count > heaviest || (count == heaviest && *candidate < *out.evict)) {
      heaviest = count;
      out.evict = candidate;
    }
  }
  out.admit = out.evict.has_value();
  return out;
}

}  // namespace nodehook
