// SlotKeeper: this node's rollout slot, once the coordinator granted it. It takes the slot as its
// own with a write conditioned on the version the board showed, shows the node's step on it,
// renews it every third of slot_lease while the hook runs, and soaks or releases it at the end.
// Each write moves the fence's deadline (election/lease_deadline_file.h) to two thirds of a lease
// ahead, so `nodehook fence` stops a hook before others can see its slot expire; a slot not
// renewed by then is lost.
// Not thread-safe: RolloutGate owns it and calls it under its lock. Borrows the client, board and
// clocks, which must outlive it.
#pragma once

#include <optional>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/kube/client/kube_types.h"
#include "agent/rollout/board/rollout_board.h"

namespace nodehook {

// A slot as this node holds it (or finds it on the board, granted or held before a restart).
struct HeldSlot {
  int index = -1;
  ObjectMeta object;  // for logs
  std::string uid;
  std::string state;
  NodeStep phase = NodeStep::kRunning;
  std::string resource_version;
  TimePoint renewed_at;  // monotonic
  bool lost = false;
  bool canary = false;    // granted as a canary of its state
  std::string detail{};   // how far its step got
  Duration hold{0};       // kRebooting: held this long from renewed_at, not renewed
};

struct SlotKeeperOptions {
  std::string node;
  std::string namespace_name;  // where the Leases live
  std::string deadline_file;   // the fence's deadline; "" = no fence (tests)
};

class SlotKeeper {
 public:
  SlotKeeper(const WatchedResource& resource, KubeClient& client, const BoardReader& board, Clock& monotonic,
             const ServerClock& server, SlotKeeperOptions options);

  // The slot this process holds, if any.
  const std::optional<HeldSlot>& held() const { return slot_; }
  // This node's slot for the object: held here, or live on the board in its name.
  std::optional<HeldSlot> Own(const BoardView& view, const std::string& uid) const;
  // Forgets a held slot past the fence's deadline: from here on only the board's view counts.
  void ForgetPastFence();

  // Writes `taking` in this node's name; held from here on when it is written.
  Status Take(HeldSlot taking);
  // Releases `mine` (it frees at once) and forgets the held slot. Returns what happens next.
  std::string Release(HeldSlot mine);
  // After the hook succeeded: the slot soaks for the policy's soak (its duration), or is
  // released. Returns what happens next, for the log.
  std::string Finish();

  // Writes the step (and its detail) on the held slot for the object when it changed; see
  // RolloutSteps::ShowStep.
  bool ShowStep(const ObjectMeta& object, NodeStep phase, const std::string& detail, Duration hold);
  void Verifying(const std::string& uid, const std::string& state);
  // Whether the held slot for the object ended under its hook (the fence stops it).
  bool Lost(const std::string& uid) const;
  // One renewal round: renews the held slot when a third of its lease passed, ends a soak.
  void Renew();

 private:
  bool PastFence(const HeldSlot& slot) const;  // lost, or not renewed before the fence's deadline
  void Forget();
  void MarkLost(const std::string& why);
  Status Write(HeldSlot& slot, const std::string& holder, int duration_seconds);
  // Write, and once more over an outside edit or deletion while the Lease is still this node's.
  Status WriteOwn(HeldSlot& slot, const std::string& holder, int duration_seconds);
  void MoveFence(TimePoint deadline);
  Duration Lease() const;

  const WatchedResource& resource_;
  const RolloutPolicy& policy_;
  const std::string rid_;
  KubeClient& client_;
  const BoardReader& board_;
  Clock& monotonic_;
  const ServerClock& server_;
  const SlotKeeperOptions options_;
  std::optional<HeldSlot> slot_;
  Gauge& slots_held_;
};

}  // namespace nodehook
