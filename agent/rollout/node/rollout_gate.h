// RolloutGate: the RolloutSteps (reconcile/rollout_steps.h) of a resource with a rollout policy,
// on one node. Its board (board/rollout_board.h) holds only the Leases labelled for this node: its node
// Lease and the slots that name it. Before a gated hook the node checks what it alone knows (the
// object paused, the node held, the windows closed); then, unless it holds a slot for the object,
// it asks the rollout's coordinator (coordinator/rollout_coordinator.h) by writing the object state into its
// node Lease's requests, and waits. The coordinator grants a slot by writing it in this node's
// name; the node takes it as its own with a write conditioned on the version it saw. While its
// hook or verify runs, a renewer thread renews the slot every third of slot_lease and moves the
// fence's deadline (election/lease_deadline_file.h) to two thirds of it ahead; `nodehook fence`
// stops the hook when that passes, even while the agent is stopped, so a hook never outlives the
// slot that others see expire. Then:
//   success  the node's result "done" goes to its node Lease, and the slot soaks: its duration
//            becomes the soak and it is no longer renewed, so it frees itself (or is released at
//            once without a soak);
//   failure  after failure_after_retries attempts (or a permanent one) the node's result
//            "failed" (marked a canary's when its grant said so) goes to its node Lease and the
//            slot is released; the coordinator judges the halt from the results and posts it.
// API writes per node per gated change: 1 request, 1 take of the granted slot, 1 result, 1 soak
// or release (+1 phase write with a verify), and a renewal every slot_lease/3 while the hook
// runs; 0 for reading. Each reaches two watches: this node's and the coordinator's.
// The gate decides; its two collaborators write: the node Lease (node_lease_writer.h: requests,
// results) and the slot (slot_keeper.h: take, steps, renewals, soak or release, the fence).
// Thread-safe: one lock over the gate and both collaborators. Borrows the client, board, clocks
// and events, which must outlive it.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/server_clock.h"
#include "agent/reconcile/rollout_steps.h"
#include "agent/rollout/board/rollout_board.h"
#include "agent/rollout/node/node_asks.h"
#include "agent/rollout/node/node_lease_writer.h"
#include "agent/rollout/node/slot_keeper.h"
#include "agent/rollout/rules/rollout_judge.h"

namespace nodehook {

struct RolloutGateOptions {
  std::string node;
  std::string namespace_name;  // where the Leases live (tuning.lease_namespace)
  std::string deadline_file;   // the fence's deadline for this resource's gated hooks
  std::vector<std::string> fence;  // argv put in front of gated hooks; {} = none (tests)
  std::function<bool()> held;      // this Node carries the policy's hold label
  // Where known, the node Lease is owned by the Node, so the garbage collector deletes it with the
  // Node: a node that left stops counting for canaries, completion and percentages. A node whose
  // Node is gone writes its Lease no more. Empty: no owner (tests).
  std::function<NodePresence()> presence;
  std::function<WindowNow(int64_t now_ms)> windows;  // whether a window is open; empty: always
  Duration poll{2000};             // how soon a waiting object asks again (±25%, per ask)
  // How many nodes the rollout has, as its coordinator last said (coordinator/rollout_coordination.h); 0 or
  // empty: not known. First asks are spread out by it (node_asks.h).
  std::function<int()> fleet_size;
};

class RolloutGate final : public RolloutSteps {
 public:
  // `monotonic` times renewals and the fence (CLOCK_MONOTONIC in production).
  RolloutGate(const WatchedResource& resource, KubeClient& client, const BoardReader& board, Clock& monotonic,
              const ServerClock& server, RolloutGateOptions options);
  ~RolloutGate() override;

  // Creates (or updates) this node's Lease, so every agent counts this node; called once the
  // board is listed. Not ok: logged by the caller and tried again.
  Status Register();

  const std::vector<std::string>& Reasons() const override { return policy_.reasons; }
  // nullopt once this node holds a slot for `state`; else when to look again. `started`: the
  // node's work on the state started and goes on (RolloutObject::started).
  std::optional<Duration> Enter(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts,
                                bool started = false);
  GateEntry Admit(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) override;
  GateEntry GoOn(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) override;
  HookSpec Prepare(const HookSpec& hook) const override;
  bool LostSlot(const ObjectMeta& object) const override;
  // No node steps here (NodeSteps, nodework/, adds them): a reboot asked for is logged, not done.
  std::optional<Duration> AfterHook(const ObjectMeta& object, const std::string& state, bool reboot_asked) override;
  const HookSpec* Verify() const override { return policy_.verify ? &*policy_.verify : nullptr; }
  void Verifying(const ObjectMeta& object, const std::string& state) override;
  // Writes the step (and its detail) on the slot when it changed; a `hold` writes the slot's
  // duration as that, and the renewer leaves it alone until a new Enter takes it again. A step
  // already shown with a hold is not written again for a shorter one (the same deadline).
  bool ShowStep(const ObjectMeta& object, NodeStep step, const std::string& detail, Duration hold) override;
  std::optional<Duration> Succeeded(const ResourceRef& resource, const ObjectMeta& object, const std::string& state,
                                    const std::string& message) override;
  void Failed(const ResourceRef& resource, const ObjectMeta& object, const std::string& state, int retries,
              bool permanent, const std::string& message) override;
  void Gone(const ObjectMeta& object) override;

  // A slot its board now shows in this node's name (the board's notice, from the watch's thread):
  // remembered, so a grant that goes before the node's worker comes to it is asked for again.
  void NoteGrant(const RolloutLease& slot) EXCLUDES(notices_mu_);

  // Runs one renewal round now (the renewer thread calls it; tests call it directly).
  void RenewDue();

 private:
  // The board with this node's own knowledge laid over it; slots its watch saw leave are not its.
  BoardView OwnView() const REQUIRES(mu_);
  // The slot it holds, or was granted, for the object: taken as its own; nullopt when inside.
  std::optional<Duration> TakeOwn(const ObjectMeta& object, const std::string& state, const HeldSlot& mine,
                                  const RolloutAdmission& admission) REQUIRES(mu_);
  // Puts the object state in this node's requests (written at once when new, or `again`); says how it went.
  std::string Ask(const ObjectMeta& object, const RolloutObject& target, bool again) REQUIRES(mu_);
  static NodeRequest RequestOf(const ObjectMeta& object, const RolloutObject& target);
  std::optional<Duration> Wait(const ObjectMeta& object, const RolloutAdmission& admission, int64_t now_ms)
      REQUIRES(mu_);
  // Released, and forgotten here; its request withdrawn first, else the coordinator grants it again.
  void GiveUpSlot(const HeldSlot& mine, const std::string& why) REQUIRES(mu_);
  void CountWaits() REQUIRES(mu_);  // the waiting and halted gauges from waiting_
  void NoteWait(const ObjectMeta& object, const RolloutAdmission& admission) REQUIRES(mu_);
  Duration Jittered(Duration d) REQUIRES(mu_);
  void RenewLoop() EXCLUDES(mu_);
  void ReadNotices() REQUIRES(mu_) EXCLUDES(notices_mu_);  // the notices so far, to asks_

  const WatchedResource& resource_;
  const RolloutPolicy& policy_;
  const std::string rid_;
  const BoardReader& board_;
  Clock& monotonic_;
  const ServerClock& server_;
  const RolloutGateOptions options_;

  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::minstd_rand rng_ GUARDED_BY(mu_);  // spreads out the waits
  NodeLeaseWriter lease_ GUARDED_BY(mu_);
  SlotKeeper slot_ GUARDED_BY(mu_);
  std::map<std::string, WaitReason> waiting_ GUARDED_BY(mu_);  // objects waiting, by uid
  NodeAsks asks_ GUARDED_BY(mu_);
  struct Notice {
    std::string uid, state, version;
  };
  Mutex notices_mu_;  // taken alone, or inside mu_
  std::vector<Notice> notices_ GUARDED_BY(notices_mu_);
  int take_refusals_ GUARDED_BY(mu_) = 0;  // takes refused in a row, not by a race
  std::map<WaitReason, Gauge*> waiting_gauges_;
  Gauge& halted_;
  std::thread renewer_;
};

}  // namespace nodehook
