#include "agent/rollout/rules/board_view.h"

#include "agent/base/utc_time.h"

namespace nodehook {

bool SlotLive(const RolloutLease& slot, std::optional<Duration> age) {
  return !slot.holder.empty() && age.has_value() && *age < std::chrono::seconds(slot.lease_duration_seconds);
}

void PutOnBoard(const RolloutLease& lease, std::optional<Duration> age, BoardView* board) {
  if (lease.kind == "slot") {
    board->slots.push_back(SlotView{lease.slot, lease.holder, lease.uid, lease.state, lease.phase,
                                    SlotLive(lease, age), lease.resource_version, lease.detail});
  } else if (!lease.holder.empty()) {
    board->nodes[lease.holder] = lease.results;
    board->labels[lease.holder] = lease.labels;
    if (!lease.requests.empty()) board->requests[lease.holder] = lease.requests;
  }
}

std::optional<Duration> AgeByServerClock(const RolloutLease& lease, int64_t server_now_ms) {
  Result<TimePoint> renewed = ParseRfc3339(lease.renew_time);
  if (!renewed.ok()) return std::nullopt;
  return Duration(server_now_ms - ToMillis(*renewed));
}

BoardView BoardFromLeases(const std::vector<RolloutLease>& leases, int64_t server_now_ms) {
  BoardView board;
  for (const RolloutLease& lease : leases) PutOnBoard(lease, AgeByServerClock(lease, server_now_ms), &board);
  return board;
}

}  // namespace nodehook
