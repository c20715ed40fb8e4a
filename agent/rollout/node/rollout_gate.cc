#include "agent/rollout/rollout_gate.h"

#include "agent/object/essence.h"

#include <algorithm>
#include <functional>
#include <random>

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/election/lease_deadline_file.h"
#include "agent/events/kube_event_recorder.h"  // NoteText
#include "agent/kube/client/lease_client.h"
#include "agent/rollout/node_results.h"

namespace nodehook {
namespace {

// A node Lease is never judged by expiry; the duration only has to be valid.
constexpr int kNodeLeaseSeconds = 86400;
constexpr size_t kResultMessageBytes = 200;

Duration Seconds(std::chrono::seconds s) { return std::chrono::duration_cast<Duration>(s); }

std::string StateText(const std::string& state) { return state.substr(0, 12); }

// The wait after the n-th take refused in a row for a lasting reason: the poll, doubled each
// time, at most a minute.
Duration RefusedBackoff(Duration poll, int refusals) {
  Duration wait = poll;
  for (int i = 1; i < refusals && wait < std::chrono::minutes(1); ++i) wait *= 2;
  return std::min<Duration>(wait, std::chrono::minutes(1));
}

}  // namespace

RolloutGate::RolloutGate(const WatchedResource& resource, KubeClient& client, const BoardReader& board, Clock& monotonic,
                         const ServerClock& server, RolloutGateOptions options)
    : resource_(resource),
      policy_(*resource.rollout),
      rid_(RolloutIdOf(resource.ref)),
      client_(client),
      board_(board),
      monotonic_(monotonic),
      server_(server),
      options_(std::move(options)),
      rng_(static_cast<std::minstd_rand::result_type>(std::random_device{}() ^ std::hash<std::string>{}(options_.node))),
      slots_held_(DefaultMetrics().GetGauge("rollout_slots_held", "1 while this node holds a rollout slot",
                                            {{"resource", resource.ref.Id()}})),
      halted_(DefaultMetrics().GetGauge("rollout_halted_objects", "Objects whose current state's rollout is halted",
                                        {{"resource", resource.ref.Id()}})) {
  for (WaitReason r : {WaitReason::kBusy, WaitReason::kPaused, WaitReason::kHeld, WaitReason::kHalted,
                       WaitReason::kOutsideWindow, WaitReason::kCanariesPending, WaitReason::kNoFreeSlot,
                       WaitReason::kQueued}) {
    waiting_gauges_[r] = &DefaultMetrics().GetGauge("rollout_waiting_objects",
                                                    "Objects waiting at this node's rollout gate, by reason",
                                                    {{"resource", resource.ref.Id()}, {"reason", WaitReasonName(r)}});
  }
  if (!options_.fence.empty()) renewer_ = std::thread([this] { RenewLoop(); });
}

RolloutGate::~RolloutGate() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
}

Status RolloutGate::Register() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name = NodeLeaseName(rid_, options_.node);
  RolloutLease seen = board_.Lease(name);
  std::string policy = SharedPolicyJson(resource_);
  const std::string hashed = HashedNodeLeaseName("rollout", rid_, options_.node);
  if (seen.kind.empty() && hashed != name) {
    // Written under the hashed name by an earlier version: its results move to the new name,
    // then the old Lease goes (two Leases of one holder would both count on the board).
    RolloutLease old = board_.Lease(hashed);
    if (old.kind == "node" && old.holder == options_.node && !board_.Deleted(hashed)) {
      for (auto& [uid, result] : old.results) results_.emplace(uid, result);
      Status moved = WriteResult("", NodeResult{});
      if (!moved.ok()) return moved;
      Status deleted = client_.Delete(ObjectRef{KubeLeaseClient::LeasesResource(), options_.namespace_name, hashed});
      Log(LogLevel::kInfo, "rollout node lease renamed",
          {{"resource", resource_.ref.Id()}, {"from", hashed}, {"to", name}, {"results", results_.size()},
           {"next", deleted.ok() || deleted.code() == StatusCode::kNotFound
                        ? std::string("old Lease deleted")
                        : "old Lease left (" + deleted.ToString() + "): it expires unrenewed"}});
      return Status::Ok();
    }
  }
  if (!seen.kind.empty()) {
    // Results written before a restart stay: they are what the fleet knows of this node.
    for (auto& [uid, result] : seen.results) results_.emplace(uid, result);
    node_version_ = seen.resource_version;  // "" when deleted since: created again
    owner_written_ = seen.owner_uid;
    labels_written_ = seen.labels;
    const NodePresence presence = Presence();
    if (!board_.Deleted(name) && seen.policy_json == policy && seen.holder == options_.node &&
        seen.owner_uid == presence.uid && seen.labels == presence.labels) {
      return Status::Ok();
    }
  }
  return WriteResult("", NodeResult{});
}

BoardView RolloutGate::OwnView() const {
  BoardView view = board_.View();
  // What this node wrote is newer than what the watch has brought back. A slot its watch saw
  // leave (released, granted to another node, deleted) is not this node's.
  view.nodes[options_.node] = results_;
  view.labels[options_.node] = Presence().labels;
  view.slots.erase(std::remove_if(view.slots.begin(), view.slots.end(),
                                  [&](const SlotView& s) {
                                    return (slot_ && s.slot == slot_->index) ||
                                           board_.Deleted(SlotLeaseName(rid_, s.slot));
                                  }),
                   view.slots.end());
  if (slot_ && !slot_->lost) {
    view.slots.push_back(
        SlotView{slot_->index, options_.node, slot_->uid, slot_->state, slot_->phase, true, slot_->resource_version});
  }
  return view;
}

std::optional<Duration> RolloutGate::Enter(const ObjectMeta& object, const std::string& state,
                                           const ObjectFacts* facts, bool started) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!board_.listed()) return options_.poll;  // its own slots are not known yet
  if (slot_ && PastFence(*slot_)) {
    // Not renewed in time: others may see it expire. Only the board's view counts from here on:
    // taken back if nobody took it, else asked for again like any other.
    slot_.reset();
    slots_held_.Set(0);
  }
  RolloutObject target{object.uid, state, facts && facts->rollout_paused, facts ? facts->rollout_resume : ""};
  if (facts && !resource_.node_selector_path.empty()) target.selector = RolloutSelector(facts->selector);
  target.started = started;
  selectors_[object.uid] = target.selector;
  const int64_t now_ms = server_.NowMs();
  WindowNow window = options_.windows ? options_.windows(now_ms) : WindowNow{};
  bool held = options_.held && options_.held();
  const BoardView view = OwnView();
  if (auto mine = OwnSlot(view, object.uid)) {
    // Its own slot for the object (held here, granted by the coordinator, or held before a
    // restart): the rules need nothing beyond this node to judge it.
    RolloutAdmission a = Judge(policy_, view, target, options_.node, held, window, now_ms);
    if (a.enter) return TakeOwn(object, state, *mine, a);
    if (a.give_up_own) GiveUpSlot(*mine, "rollout " + std::string(WaitReasonName(a.wait)));
    return Wait(object, a, now_ms);
  }
  RolloutAdmission stop = started ? RolloutAdmission{} : NodeStopped(policy_, target, held, window);
  if (stop.wait != WaitReason::kNone) {
    // Not asked for while it could not start: a grant now would hold a slot nobody uses.
    Withdraw(object.uid);
    return Wait(object, stop, now_ms);
  }
  RolloutAdmission queued;
  queued.wait = WaitReason::kQueued;
  if (auto due = AskDue(object.uid, RequestOf(object, target))) {
    queued.detail = "asks in " + std::to_string(due->count()) + "ms, at this node's place among the fleet's asks";
    NoteWait(object, queued);
    return *due;
  }
  queued.detail = Ask(object, target, GrantLapsed(view, object.uid, state));
  return Wait(object, queued, now_ms);
}

bool RolloutGate::GrantLapsed(const BoardView& view, const std::string& uid, const std::string& state) {
  for (const auto& s : view.slots) {
    if (s.live || s.holder != options_.node || s.uid != uid || s.state != state) continue;
    auto seen = lapsed_.find(uid);
    if (seen != lapsed_.end() && seen->second == s.resource_version) return false;  // asked again already
    lapsed_[uid] = s.resource_version;
    return true;
  }
  return false;
}

double AskPlace(const std::string& rid, const std::string& node) {
  // A 64-bit hash in 16 hex digits: its top 53 bits over 2^53.
  const uint64_t key = std::stoull(EssenceDigest(rid + "/" + node), nullptr, 16);
  return static_cast<double>(key >> 11) / static_cast<double>(uint64_t{1} << 53);
}

NodeRequest RolloutGate::RequestOf(const ObjectMeta& object, const RolloutObject& target) {
  return NodeRequest{target.state, object.namespace_name + "/" + object.name, target.resume_state, target.selector,
                     target.started};
}

std::optional<Duration> RolloutGate::AskDue(const std::string& uid, const NodeRequest& request) {
  auto asked = requests_.find(uid);
  if (asked != requests_.end() && asked->second.state == request.state) return std::nullopt;
  const int fleet = options_.fleet_size ? options_.fleet_size() : 0;
  if (fleet <= 1) return std::nullopt;
  const TimePoint now = monotonic_.Now();
  auto due = ask_due_.find(uid);
  if (due == ask_due_.end() || due->second.request.state != request.state) {
    const double asks_per_second = kAsksPerGrant * std::max(policy_.max_grants_per_second, 0.1);
    const Duration spread = std::min<Duration>(
        Duration(static_cast<int64_t>(1000.0 * static_cast<double>(fleet) / asks_per_second)), kAskSpreadMax);
    const auto after =
        static_cast<int64_t>(AskPlace(rid_, options_.node) * static_cast<double>(spread.count()));
    due = ask_due_.insert_or_assign(uid, AskAt{request, now + Duration(after)}).first;
  }
  if (now >= due->second.at) return std::nullopt;  // Ask takes it out
  return due->second.at - now;
}

std::string RolloutGate::Ask(const ObjectMeta& object, const RolloutObject& target, bool again) {
  NodeRequest request = RequestOf(object, target);
  ask_due_.erase(object.uid);
  auto it = requests_.find(object.uid);
  if (it != requests_.end() && it->second == request && !again) return "asked the rollout's coordinator for a slot";
  if (it == requests_.end() && requests_.size() >= kMaxNodeRequests) {
    return "this node has asked for " + std::to_string(requests_.size()) + " objects already; asks when one is granted";
  }
  requests_[object.uid] = request;
  // The asks that come due soon go in the same write: objects that changed together are asked
  // for in one write, not one each.
  const TimePoint soon = monotonic_.Now() + kAskBatch;
  for (auto due = ask_due_.begin(); due != ask_due_.end() && requests_.size() < kMaxNodeRequests;) {
    if (due->second.at > soon) {
      ++due;
      continue;
    }
    requests_[due->first] = due->second.request;
    due = ask_due_.erase(due);
  }
  Status written = WriteResult("", NodeResult{});
  return written.ok() ? "asked the rollout's coordinator for a slot"
                      : "the ask was not written (" + written.ToString() + "): written again at the next renewal";
}

void RolloutGate::Withdraw(const std::string& uid) {
  requests_.erase(uid);
  if (requests_written_.count(uid) > 0) (void)WriteResult("", NodeResult{});
}

std::optional<Duration> RolloutGate::Wait(const ObjectMeta& object, const RolloutAdmission& a, int64_t now_ms) {
  NoteWait(object, a);
  if (a.wait == WaitReason::kOutsideWindow && a.until_ms > now_ms) {
    return std::min<Duration>(std::max<Duration>(Duration(a.until_ms - now_ms), options_.poll),
                              std::chrono::minutes(1));
  }
  return Jittered(options_.poll);
}

std::optional<Duration> RolloutGate::TakeOwn(const ObjectMeta& object, const std::string& state, const Slot& mine,
                                             const RolloutAdmission& a) {
  if (!slot_ || slot_->state != state) {
    // Granted by the coordinator; held before a restart; or held while the object changed (a fix
    // after its old state failed): the slot goes on for the new state, so the fleet does not
    // wait for work nobody will finish. Written as this node's own from the version judged: a
    // slot another node holds since is refused by the API server, never taken from it.
    const char* how = slot_ ? "newer state" : mine.state == state ? "granted" : "granted, newer state";
    Slot taking{a.slot, object, object.uid, state, SlotPhase::kRunning, a.slot_version, monotonic_.Now(), false,
                mine.state == state && mine.canary};
    const int seconds = static_cast<int>(policy_.slot_lease.count());
    Status taken = WriteOwnSlot(taking, options_.node, seconds);
    if (!taken.ok()) {
      // Refused for a lasting reason (403, 422, the server away): each refusal doubles the wait.
      const bool raced = taken.code() == StatusCode::kConflict || taken.code() == StatusCode::kNotFound;
      take_refusals_ = raced ? 0 : take_refusals_ + 1;
      Duration again = raced ? Jittered(options_.poll / 8) : Jittered(RefusedBackoff(options_.poll, take_refusals_));
      Log(LogLevel::kInfo, "rollout slot not taken",
          {{"object", object.Key()}, {"uid", object.uid}, {"slot", a.slot}, {"error", taken.ToString()},
           {"next", "ask again in " + SecondsText(again)}});
      return again;
    }
    take_refusals_ = 0;
    slot_ = taking;
    MoveFence(taking.renewed_at + Seconds(policy_.slot_lease) * 2 / 3);
    Log(LogLevel::kInfo, "rollout slot taken",
        {{"object", object.Key()}, {"uid", object.uid}, {"slot", a.slot}, {"state", StateText(state)},
         {"own", how}, {"next", "run the hook inside the slot"}});
  }
  slots_held_.Set(1);
  requests_.erase(object.uid);  // left out of the node Lease's next write
  if (waiting_.erase(object.uid) > 0) CountWaits();
  return std::nullopt;
}

void RolloutGate::Gone(const ObjectMeta& object) {
  std::lock_guard<std::mutex> lock(mu_);
  // A slot known only from the board (held before a restart) is not renewed by this process: it
  // frees itself within its lease, so no board is read here for every deleted object.
  if (slot_ && slot_->uid == object.uid) GiveUpSlot(*slot_, "object deleted");
  if (waiting_.erase(object.uid) > 0) CountWaits();
  // Its result is of no use to anyone now. Not worth a write of its own (each reaches every
  // agent): the node Lease's next write, for a result or a renewal, leaves it out.
  results_.erase(object.uid);
  selectors_.erase(object.uid);
  ask_due_.erase(object.uid);
  lapsed_.erase(object.uid);
  // A request is written away at once: the coordinator would grant a slot nobody takes.
  Withdraw(object.uid);
}

std::optional<RolloutGate::Slot> RolloutGate::OwnSlot(const BoardView& view, const std::string& uid) const {
  if (slot_) return slot_->uid == uid ? slot_ : std::nullopt;
  // Granted by the coordinator, or held before a restart: the board says so.
  for (const auto& s : view.slots) {
    if (s.live && s.holder == options_.node && s.uid == uid) {
      return Slot{s.slot,         ObjectMeta{}, s.uid, s.state, s.phase, s.resource_version, monotonic_.Now(), false,
                  board_.Lease(SlotLeaseName(rid_, s.slot)).canary};
    }
  }
  return std::nullopt;
}

void RolloutGate::GiveUpSlot(Slot mine, const std::string& why) {
  Withdraw(mine.uid);  // else the coordinator, reading the ask, grants it again
  Status released = WriteOwnSlot(mine, "", 1);
  slot_.reset();
  slots_held_.Set(0);
  MoveFence(TimePoint{});
  Log(LogLevel::kInfo, "rollout slot given up",
      {{"uid", mine.uid}, {"slot", mine.index}, {"reason", why},
       {"next", released.ok() ? "slot released" : "slot expires unrenewed (" + released.ToString() + ")"}});
}

GateEntry RolloutGate::Admit(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) {
  std::optional<Duration> wait = Enter(object, state, facts, false);
  return wait ? GateEntry::Wait(*wait) : GateEntry::Inside();
}

GateEntry RolloutGate::GoOn(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) {
  std::optional<Duration> wait = Enter(object, state, facts, true);
  return wait ? GateEntry::Wait(*wait) : GateEntry::Inside();
}

std::optional<Duration> RolloutGate::AfterHook(const ObjectMeta& object, const std::string& /*state*/,
                                               bool reboot_asked) {
  if (reboot_asked) {
    Log(LogLevel::kWarn, "reboot not configured",
        {{"resource", resource_.ref.Id()}, {"object", object.Key()}, {"uid", object.uid},
         {"next", "go on without a reboot (set rollout.reboot to reboot the node)"}});
  }
  return std::nullopt;
}

namespace {
SlotPhase PhaseOfStep(NodeStep step) {
  switch (step) {
    case NodeStep::kCordoning: return SlotPhase::kCordoning;
    case NodeStep::kDraining: return SlotPhase::kDraining;
    case NodeStep::kRunning: return SlotPhase::kRunning;
    case NodeStep::kRebooting: return SlotPhase::kRebooting;
    case NodeStep::kVerifying: return SlotPhase::kVerifying;
    case NodeStep::kUncordoning: return SlotPhase::kUncordoning;
  }
  return SlotPhase::kRunning;
}
}  // namespace

bool RolloutGate::ShowStep(const ObjectMeta& object, NodeStep step, const std::string& detail, Duration hold) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!slot_ || slot_->uid != object.uid) return false;
  if (slot_->phase == SlotPhase::kSoaking) return true;
  const SlotPhase phase = PhaseOfStep(step);
  const std::string shown = NoteText(detail, kResultMessageBytes);
  // A hold is written once: a later call for the same step asks for the same end (the step's
  // deadline, less the time spent), which the slot has already; writing it again would only cost
  // every watcher of the rollout's Leases an event.
  const bool held = slot_->hold == hold || (slot_->hold > Duration::zero() && hold > Duration::zero());
  if (slot_->phase == phase && slot_->detail == shown && held) return true;
  Slot next = *slot_;
  next.phase = phase;
  next.detail = shown;
  next.hold = hold;
  const Duration lease = Seconds(policy_.slot_lease);
  const int seconds = static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(hold > Duration::zero() ? hold + lease : lease).count());
  Status written = WriteOwnSlot(next, options_.node, seconds);
  if (!written.ok()) {
    Log(LogLevel::kInfo, "rollout step not shown",
        {{"uid", object.uid}, {"slot", next.index}, {"step", SlotPhaseName(phase)}, {"error", written.ToString()},
         {"next", "shown at the next renewal"}});
    return false;
  }
  // No hook runs while the node reboots; else the fence follows the write as a renewal's does.
  MoveFence(hold > Duration::zero() ? TimePoint{} : next.renewed_at + lease * 2 / 3);
  *slot_ = next;
  return true;
}

HookSpec RolloutGate::Prepare(const HookSpec& hook) const {
  if (options_.fence.empty()) return hook;
  HookSpec fenced = hook;
  fenced.argv = options_.fence;
  fenced.argv.insert(fenced.argv.end(), hook.argv.begin(), hook.argv.end());
  return fenced;
}

bool RolloutGate::LostSlot(const ObjectMeta& object) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!slot_ || slot_->uid != object.uid || slot_->phase == SlotPhase::kSoaking) return false;
  // Past the fence's deadline the fence stops the hook: that is the slot ending, not the hook
  // failing, even when this agent (stopped, or cut off) has not yet seen its renewal fail.
  return PastFence(*slot_);
}

bool RolloutGate::PastFence(const Slot& slot) const {
  return slot.lost || (slot.phase != SlotPhase::kSoaking && slot.phase != SlotPhase::kRebooting &&
                       monotonic_.Now() - slot.renewed_at >= Seconds(policy_.slot_lease) * 2 / 3);
}

void RolloutGate::Verifying(const ObjectMeta& object, const std::string& state) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!slot_ || slot_->uid != object.uid || slot_->state != state) return;
  Slot next = *slot_;
  next.phase = SlotPhase::kVerifying;
  next.detail.clear();
  next.hold = Duration{0};
  if (WriteOwnSlot(next, options_.node, static_cast<int>(policy_.slot_lease.count())).ok()) *slot_ = next;
}

std::optional<Duration> RolloutGate::Succeeded(const ResourceRef& /*resource*/, const ObjectMeta& object,
                                               const std::string& state, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  requests_.erase(object.uid);
  Status written = WriteResult(object.uid, NodeResult{state, false, server_.NowMs(), NoteText(message, kResultMessageBytes)});
  std::string next;
  if (slot_ && slot_->uid == object.uid) {
    Slot done = *slot_;
    MoveFence(TimePoint{});
    if (policy_.soak.count() > 0) {
      done.phase = SlotPhase::kSoaking;
      Status soaking = WriteOwnSlot(done, options_.node, static_cast<int>(policy_.soak.count()));
      *slot_ = done;
      slot_->renewed_at = monotonic_.Now();  // the soak ends soak seconds from here
      next = soaking.ok() ? "soak for " + SecondsText(Seconds(policy_.soak)) + " in slot " + std::to_string(done.index)
                          : "soak not written (" + soaking.ToString() + "): the slot expires unrenewed";
    } else {
      Status released = WriteOwnSlot(done, "", 1);
      slot_.reset();
      slots_held_.Set(0);
      next = released.ok() ? "slot released" : "slot not released (" + released.ToString() + "): it expires unrenewed";
    }
  }
  if (!written.ok()) next += "; result not written (" + written.ToString() + "): written again at the next renewal";
  Log(LogLevel::kInfo, "rollout node done",
      {{"object", object.Key()}, {"uid", object.uid}, {"state", StateText(state)}, {"next", next}});
  return std::nullopt;
}

void RolloutGate::Failed(const ResourceRef& /*resource*/, const ObjectMeta& object, const std::string& state,
                         int retries, bool permanent, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!slot_ || slot_->uid != object.uid) return;  // not inside the gate: not this policy's failure
  if (!permanent && retries < policy_.failure_after_retries) return;  // keeps its slot for the retry
  NodeResult result{state, true, server_.NowMs(), NoteText(message, kResultMessageBytes)};
  // The coordinator said whether it granted the slot to a canary; the halt is its to post.
  result.canary = slot_->canary && slot_->state == state;
  requests_.erase(object.uid);
  Status written = WriteResult(object.uid, result);
  Slot failed = *slot_;
  Status released = WriteOwnSlot(failed, "", 1);
  slot_.reset();
  slots_held_.Set(0);
  MoveFence(TimePoint{});
  Log(LogLevel::kWarn, "rollout node failed",
      {{"object", object.Key()}, {"uid", object.uid}, {"state", StateText(state)}, {"retries", retries},
       {"canary", result.canary ? "true" : "false"}, {"result", written.ok() ? "written" : written.ToString()},
       {"next", released.ok() ? "slot released" : "slot expires unrenewed"}});
}

Duration RolloutGate::Jittered(Duration d) {
  // Nodes that began waiting at one event would otherwise ask again in lockstep, and all race
  // with writes for each slot that frees (n-1 conflicts). Spread out, the first to ask takes it
  // and the others mostly see it taken on their boards before they ask.
  std::uniform_real_distribution<double> spread(0.75, 1.25);
  return std::chrono::duration_cast<Duration>(d * spread(rng_));
}

void RolloutGate::NoteWait(const ObjectMeta& object, const RolloutAdmission& a) {
  auto [it, fresh] = waiting_.emplace(object.uid, a.wait);
  if (!fresh && it->second == a.wait) return;  // said already
  it->second = a.wait;
  CountWaits();
  Log(LogLevel::kInfo, "rollout waiting",
      {{"object", object.Key()}, {"uid", object.uid}, {"reason", WaitReasonName(a.wait)}, {"detail", a.detail},
       {"next", a.until_ms > 0 ? "ask again when the window opens" : "ask again in about " + SecondsText(options_.poll)}});
}

void RolloutGate::CountWaits() {
  std::map<WaitReason, int> counts;
  for (const auto& [uid, reason] : waiting_) ++counts[reason];
  for (auto& [reason, gauge] : waiting_gauges_) gauge->Set(counts[reason]);
  halted_.Set(counts[WaitReason::kHalted]);
}

Status RolloutGate::WriteOwnSlot(Slot& slot, const std::string& holder, int duration_seconds) {
  Status st = WriteSlot(slot, holder, duration_seconds);
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
  return WriteSlot(slot, holder, duration_seconds);
}

Status RolloutGate::WriteSlot(Slot& slot, const std::string& holder, int duration_seconds) {
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

Status RolloutGate::WriteResult(const std::string& uid, const NodeResult& result) {
  if (!uid.empty()) results_[uid] = result;
  RolloutLease lease;
  lease.name = NodeLeaseName(rid_, options_.node);
  lease.kind = "node";
  lease.holder = options_.node;
  lease.lease_duration_seconds = kNodeLeaseSeconds;
  lease.renew_time = MicroTime(FromMillis(server_.NowMs()));  // kubectl ages it by this clock
  lease.resource = resource_.ref.Id();
  lease.scope = resource_.ref.namespace_name;
  lease.policy_json = SharedPolicyJson(resource_);
  lease.results = results_;
  lease.requests = requests_;
  const NodePresence presence = Presence();
  if (presence.gone) {
    // Deleted with its Node by the garbage collector, or about to be: written again, it would
    // count this node in the fleet for ever.
    results_dirty_ = true;
    return Status(StatusCode::kNotFound, "node " + options_.node + " is deleted: it has left the fleet");
  }
  lease.owner_uid = presence.uid;
  lease.labels = presence.labels;
  lease.results_json = NoteResultsBudget();
  Status st = WriteNodeLease(lease);
  if (st.ok()) {
    requests_written_ = requests_;
    owner_written_ = presence.uid;
    labels_written_ = presence.labels;
    results_dirty_ = false;
    results_refusals_ = 0;
    return st;
  }
  // Tried again at the renewal rounds, backing off: a refusal that lasts (403, 422) must not
  // become a write of the whole Lease every few seconds for ever.
  results_dirty_ = true;
  results_refusals_ = std::min(results_refusals_ + 1, 16);
  results_retry_at_ = monotonic_.Now() + std::min<Duration>(options_.poll * (1 << std::min(results_refusals_, 8)),
                                                            std::chrono::minutes(5));
  return st;
}

std::string RolloutGate::NoteResultsBudget() {
  EncodedResults encoded = EncodeNodeResults(results_);
  if (encoded.left_out == results_left_out_) return std::move(encoded.json);
  results_left_out_ = encoded.left_out;
  Log(encoded.left_out > 0 ? LogLevel::kError : LogLevel::kInfo, "rollout results over budget",
      {{"resource", resource_.ref.Id()}, {"objects", results_.size()}, {"left_out", encoded.left_out},
       {"next", encoded.left_out > 0 ? "the oldest done results are left out of this node's Lease: rollouts of those "
                                       "objects wait for this node until it handles them again"
                                     : "every result fits again"}});
  return std::move(encoded.json);
}

Status RolloutGate::WriteNodeLease(RolloutLease& lease) {
  ObjectRef ref{KubeLeaseClient::LeasesResource(), options_.namespace_name, lease.name};
  for (int attempt = 0; attempt < 2; ++attempt) {
    lease.resource_version = node_version_;
    std::string body = RolloutLeaseJson(options_.namespace_name, rid_, lease);
    Status st;
    if (node_version_.empty()) {
      st = client_.Create(ref.resource, ref.namespace_name, body);
      if (st.ok() || st.code() == StatusCode::kConflict) {  // created now, or it was there
        auto stored = client_.Get(ref);
        if (!stored.ok()) return stored.status();
        node_version_ = stored->meta.resource_version;
        if (st.ok()) return st;
        continue;  // write ours over what was there
      }
    } else {
      auto stored = client_.Replace(ref, body);
      if (stored.ok()) {
        node_version_ = stored->meta.resource_version;
        return Status::Ok();
      }
      st = stored.status();
      if (st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound) {
        // Only this node writes its Lease: a stale version (an earlier write's answer was lost)
        // or a deleted Lease is taken as it is now, then written again.
        auto now = client_.Get(ref);
        node_version_ = now.ok() ? now->meta.resource_version : "";
        continue;
      }
    }
    return st;
  }
  return Status(StatusCode::kConflict, "node lease " + lease.name + " changed while it was written");
}

void RolloutGate::MoveFence(TimePoint deadline) {
  if (options_.deadline_file.empty()) return;
  Status written = WriteLeaseDeadline(options_.deadline_file, ToMillis(deadline));
  if (!written.ok()) {
    Log(LogLevel::kError, "rollout fence not written",
        {{"file", options_.deadline_file}, {"error", written.ToString()},
         {"next", "gated hooks stop at the old deadline, at the latest"}});
  }
}

RolloutObject RolloutGate::Target(const std::string& uid, const std::string& state) const {
  RolloutObject target{uid, state, false, ""};
  auto selector = selectors_.find(uid);
  if (selector != selectors_.end()) target.selector = selector->second;
  return target;
}

NodePresence RolloutGate::Presence() const { return options_.presence ? options_.presence() : NodePresence{}; }

void RolloutGate::NoteNodePresence() {
  const NodePresence presence = Presence();
  if (presence.gone != left_) {
    left_ = presence.gone;
    Log(LogLevel::kWarn, left_ ? "rollout node left" : "rollout node back",
        {{"resource", resource_.ref.Id()}, {"node", options_.node},
         {"next", left_ ? "its node Lease is not written again (the garbage collector deletes it with the Node); the "
                          "others stop counting this node"
                        : "write its node Lease again"}});
  }
  if (!presence.gone && !node_version_.empty() &&
      ((!presence.uid.empty() && presence.uid != owner_written_) || presence.labels != labels_written_)) {
    // The Node became known after the Lease was written (or was created anew): name it as owner.
    // Its labels changed: the others judge targeting and holds by them.
    results_dirty_ = true;
    results_retry_at_ = TimePoint{};
  }
}

void RolloutGate::RenewDue() {
  std::lock_guard<std::mutex> lock(mu_);
  NoteNodePresence();
  if (board_.Deleted(NodeLeaseName(rid_, options_.node))) {
    // Deleted by someone else: this node would drop out of the fleet. Written again as it was.
    node_version_.clear();
    results_dirty_ = true;
  }
  if (results_dirty_ && monotonic_.Now() >= results_retry_at_) (void)WriteResult("", NodeResult{});
  if (!slot_) return;
  const TimePoint now = monotonic_.Now();
  const Duration lease = Seconds(policy_.slot_lease);
  if (slot_->phase == SlotPhase::kSoaking) {
    if (now - slot_->renewed_at < Seconds(policy_.soak)) return;
    slot_.reset();  // the slot frees itself: its duration was the soak
    slots_held_.Set(0);
    return;
  }
  // Held through a reboot: not renewed; the node steps fail the node before the hold ends.
  if (slot_->phase == SlotPhase::kRebooting) return;
  if (PastFence(*slot_)) {
    // Too late to renew: the fence has stopped (or is stopping) the hook, and others may see the
    // slot expire. A renewal now would make that stop look like the hook's own failure.
    if (!slot_->lost) {
      slot_->lost = true;
      MoveFence(TimePoint{});
      Log(LogLevel::kWarn, "rollout slot lost",
          {{"uid", slot_->uid}, {"slot", slot_->index}, {"error", "not renewed before the fence's deadline"},
           {"next", "the fence stops the hook; ask for a slot again"}});
    }
    return;
  }
  if (now - slot_->renewed_at < lease / 3) return;
  Slot renewed = *slot_;
  Status st = WriteOwnSlot(renewed, options_.node, static_cast<int>(policy_.slot_lease.count()));
  if (PastFence(*slot_)) {
    // The write took until past the fence's deadline (a connection that hung, then came back):
    // the fence has stopped the hook, and others may have held the slot meanwhile, so what the
    // write says now (even a slot granted to this node again) does not make that stop the hook's
    // own failure.
    slot_->lost = true;
    MoveFence(TimePoint{});
    Log(LogLevel::kWarn, "rollout slot lost",
        {{"uid", slot_->uid}, {"slot", slot_->index}, {"error", "renewal answered after the fence's deadline"},
         {"next", "the fence stops the hook; ask for a slot again"}});
    return;
  }
  if (st.ok()) {
    *slot_ = renewed;
    MoveFence(renewed.renewed_at + lease * 2 / 3);
    return;
  }
  if (st.code() == StatusCode::kConflict || st.code() == StatusCode::kNotFound) {
    slot_->lost = true;
    MoveFence(TimePoint{});
    Log(LogLevel::kWarn, "rollout slot lost",
        {{"uid", slot_->uid}, {"slot", slot_->index}, {"error", st.ToString()},
         {"next", "the fence stops the hook; ask for a slot again"}});
  }
}

void RolloutGate::RenewLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  const auto period = std::chrono::duration_cast<std::chrono::milliseconds>(policy_.slot_lease) / 6;
  while (!stopping_) {
    cv_.wait_for(lock, std::max(period, std::chrono::milliseconds(200)));
    if (stopping_) break;
    lock.unlock();
    RenewDue();
    lock.lock();
  }
}

}  // namespace nodehook
