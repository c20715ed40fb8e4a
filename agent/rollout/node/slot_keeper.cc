#include "agent/rollout/node/slot_keeper.h"

#include <algorithm>

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/election/lease_deadline_file.h"
#include "agent/events/kube_event_recorder.h"  // NoteText
#include "agent/kube/client/lease_client.h"

namespace nodehook {
namespace {

constexpr size_t kDetailBytes = 200;

Duration Seconds(std::chrono::seconds s) { return std::chrono::duration_cast<Duration>(s); }

}  // namespace

SlotKeeper::SlotKeeper(const WatchedResource& resource, KubeClient& client, const BoardReader& board,
                       Clock& monotonic, const ServerClock& server, SlotKeeperOptions options)
    : resource_(resource),
      policy_(*resource.rollout),
      rid_(RolloutIdOf(resource.ref)),
      client_(client),
      board_(board),
      monotonic_(monotonic),
      server_(server),
      options_(std::move(options)),
      slots_held_(DefaultMetrics().GetGauge("rollout_slots_held", "1 while this node holds a rollout slot",
                                            {{"resource", resource.ref.Id()}})) {}

Duration SlotKeeper::Lease() const { return Seconds(policy_.slot_lease); }

std::optional<HeldSlot> SlotKeeper::Own(const BoardView& view, const std::string& uid) const {
  if (slot_) return slot_->uid == uid ? slot_ : std::nullopt;
  // Granted by the coordinator, or held before a restart: the board says so.
  for (const auto& s : view.slots) {
    if (s.live && s.holder == options_.node && s.uid == uid) {
      return HeldSlot{s.slot,         ObjectMeta{}, s.uid, s.state, s.phase, s.resource_version, monotonic_.Now(), false,
                      board_.Lease(SlotLeaseName(rid_, s.slot)).canary};
    }
  }
  return std::nullopt;
}

void SlotKeeper::ForgetPastFence() {
  // Not renewed in time: others may see it expire. Taken back if nobody took it, else asked for
  // again like any other.
  if (slot_ && PastFence(*slot_)) Forget();
}

void SlotKeeper::Forget() {
  slot_.reset();
  slots_held_.Set(0);
}

Status SlotKeeper::Take(HeldSlot taking) {
  Status taken = WriteOwn(taking, options_.node, static_cast<int>(policy_.slot_lease.count()));
  if (!taken.ok()) return taken;
  slot_ = taking;
  slots_held_.Set(1);
  MoveFence(taking.renewed_at + Lease() * 2 / 3);
  return taken;
}

std::string SlotKeeper::Release(HeldSlot mine) {
  Status released = WriteOwn(mine, "", 1);
  Forget();
  MoveFence(TimePoint{});
  return released.ok() ? "slot released" : "slot expires unrenewed (" + released.ToString() + ")";
}

std::string SlotKeeper::Finish() {
  HeldSlot done = *slot_;
  MoveFence(TimePoint{});
  if (policy_.soak.count() == 0) {
    Status released = WriteOwn(done, "", 1);
    Forget();
    return released.ok() ? "slot released" : "slot not released (" + released.ToString() + "): it expires unrenewed";
  }
  done.phase = NodeStep::kSoaking;
  Status soaking = WriteOwn(done, options_.node, static_cast<int>(policy_.soak.count()));
  slot_ = done;
  slot_->renewed_at = monotonic_.Now();  // the soak ends soak seconds from here
  return soaking.ok() ? "soak for " + SecondsText(Seconds(policy_.soak)) + " in slot " + std::to_string(done.index)
                      : "soak not written (" + soaking.ToString() + "): the slot expires unrenewed";
}

bool SlotKeeper::ShowStep(const ObjectMeta& object, NodeStep phase, const std::string& detail, Duration hold) {
  if (!slot_ || slot_->uid != object.uid) return false;
  if (slot_->phase == NodeStep::kSoaking) return true;
  const std::string shown = NoteText(detail, kDetailBytes);
  // A hold is written once: a later call for the same step asks for the same end (the step's
  // deadline, less the time spent), which the slot has already; writing it again would only cost
  // every watcher of the rollout's Leases an event.
  const bool held = slot_->hold == hold || (slot_->hold > Duration::zero() && hold > Duration::zero());
  if (slot_->phase == phase && slot_->detail == shown && held) return true;
  HeldSlot next = *slot_;
  next.phase = phase;
  next.detail = shown;
  next.hold = hold;
  const Duration lasts = hold > Duration::zero() ? hold + Lease() : Lease();
  Status written = WriteOwn(next, options_.node,
                            static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(lasts).count()));
  if (!written.ok()) {
    Log(LogLevel::kInfo, "rollout step not shown",
        {{"uid", object.uid}, {"slot", next.index}, {"step", NodeStepName(phase)}, {"error", written.ToString()},
         {"next", "shown at the next renewal"}});
    return false;
  }
  // No hook runs while the node reboots; else the fence follows the write as a renewal's does.
  MoveFence(hold > Duration::zero() ? TimePoint{} : next.renewed_at + Lease() * 2 / 3);
  *slot_ = next;
  return true;
}

void SlotKeeper::Verifying(const std::string& uid, const std::string& state) {
  if (!slot_ || slot_->uid != uid || slot_->state != state) return;
  HeldSlot next = *slot_;
  next.phase = NodeStep::kVerifying;
  next.detail.clear();
  next.hold = Duration{0};
  if (WriteOwn(next, options_.node, static_cast<int>(policy_.slot_lease.count())).ok()) *slot_ = next;
}

bool SlotKeeper::Lost(const std::string& uid) const {
  if (!slot_ || slot_->uid != uid || slot_->phase == NodeStep::kSoaking) return false;
  // Past the fence's deadline the fence stops the hook: that is the slot ending, not the hook
  // failing, even when this agent (stopped, or cut off) has not yet seen its renewal fail.
  return PastFence(*slot_);
}

bool SlotKeeper::PastFence(const HeldSlot& slot) const {
  return slot.lost || (slot.phase != NodeStep::kSoaking && slot.phase != NodeStep::kRebooting &&
                       monotonic_.Now() - slot.renewed_at >= Lease() * 2 / 3);
}

void SlotKeeper::MarkLost(const std::string& why) {
  slot_->lost = true;
  MoveFence(TimePoint{});
  Log(LogLevel::kWarn, "rollout slot lost",
      {{"uid", slot_->uid}, {"slot", slot_->index}, {"error", why},
       {"next", "the fence stops the hook; ask for a slot again"}});
}

void SlotKeeper::Renew() {
  if (!slot_) return;
  const TimePoint now = monotonic_.Now();
  if (slot_->phase == NodeStep::kSoaking) {
    if (now - slot_->renewed_at >= Seconds(policy_.soak)) Forget();  // it frees itself: its duration was the soak
    return;
  }
  // Held through a reboot: not renewed; the node steps fail the node before the hold ends.
  if (slot_->phase == NodeStep::kRebooting) return;
  if (PastFence(*slot_)) {
    // Too late to renew: the fence has stopped (or is stopping) the hook, and others may see the
    // slot expire. A renewal now would make that stop look like the hook's own failure.
    if (!slot_->lost) MarkLost("not renewed before the fence's deadline");
    return;
  }
  if (now - slot_->renewed_at < Lease() / 3) return;
  HeldSlot renewed = *slot_;
  Status st = WriteOwn(renewed, options_.node, static_cast<int>(policy_.slot_lease.count()));
  if (PastFence(*slot_)) {
    // The write took until past the fence's deadline (a connection that hung, then came back):
    // the fence has stopped the hook, and others may have held the slot meanwhile, so what the
    // write says now (even a slot granted to this node again) does not make that stop the hook's
    // own failure.
    MarkLost("renewal answered after the fence's deadline");
    return;
  }
  if (st.ok()) {
    *slot_ = renewed;
    MoveFence(renewed.renewed_at + Lease() * 2 / 3);
    return;
  }
  if (st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound) MarkLost(st.ToString());
}

Status SlotKeeper::WriteOwn(HeldSlot& slot, const std::string& holder, int duration_seconds) {
  Status st = Write(slot, holder, duration_seconds);
  if (st.code() != StatusCode::kConflict && st.code() != StatusCode::kNotFound) return st;
  // Written by someone else since (an annotation, a label, the lost answer to this node's own
  // last write), or deleted by hand. It is still this node's slot while it names this node and
  // this object; deleted, the others keep it as held for a lease (rollout_board.h), so it is
  // created again. Taken by another node: the slot is lost.
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, SlotLeaseName(rid_, slot.index)};
  auto now = client_.Get(ref);
  if (now.ok()) {
    auto lease = ParseRolloutLease(now->json);
    if (!lease.ok() || lease->holder != options_.node || lease->uid != slot.uid) return st;
    slot.resource_version = now->meta.resource_version;
  } else if (now.status().code() == StatusCode::kNotFound) {
    if (holder.empty()) return Status::Ok();  // a release: gone already is released
    slot.resource_version.clear();
  } else {
    return st;
  }
  return Write(slot, holder, duration_seconds);
}

Status SlotKeeper::Write(HeldSlot& slot, const std::string& holder, int duration_seconds) {
  RolloutLease lease;
  lease.name = SlotLeaseName(rid_, slot.index);
  lease.kind = "slot";
  lease.holder = holder;
  lease.lease_duration_seconds = std::max(duration_seconds, 1);
  lease.renew_time = MicroTime(FromMillis(server_.NowMs()));  // kubectl ages it by this clock
  lease.resource_version = slot.resource_version;
  lease.resource = resource_.ref.Id();
  lease.scope = resource_.ref.namespace_name;
  lease.slot = slot.index;
  lease.uid = slot.uid;
  lease.state = slot.state;
  lease.phase = slot.phase;
  lease.detail = slot.detail;
  lease.canary = slot.canary;
  TimePoint started = monotonic_.Now();  // before the request: the others' view starts later
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, lease.name};
  std::string body = RolloutLeaseJson(options_.namespace_name, rid_, lease);
  if (slot.resource_version.empty()) {
    Status created = client_.Create(ref.resource, ref.namespace_name, body);
    if (!created.ok()) return created;
    auto stored = client_.Get(ref);
    if (!stored.ok()) return stored.status();
    slot.resource_version = stored->meta.resource_version;
  } else {
    auto stored = client_.Replace(ref, body);
    if (!stored.ok()) return stored.status();
    slot.resource_version = stored->meta.resource_version;
  }
  slot.renewed_at = started;
  return Status::Ok();
}

void SlotKeeper::MoveFence(TimePoint deadline) {
  if (options_.deadline_file.empty()) return;
  Status written = WriteLeaseDeadline(options_.deadline_file, ToMillis(deadline));
  if (!written.ok()) {
    Log(LogLevel::kError, "rollout fence not written",
        {{"file", options_.deadline_file}, {"error", written.ToString()},
         {"next", "gated hooks stop at the old deadline, at the latest"}});
  }
}

}  // namespace nodehook
