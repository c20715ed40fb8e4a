#include "agent/rollout/node/rollout_gate.h"

#include <algorithm>
#include <functional>
#include <random>

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/events/kube_event_recorder.h"  // NoteText

namespace nodehook {
namespace {

constexpr size_t kResultMessageBytes = 200;

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
      board_(board),
      monotonic_(monotonic),
      server_(server),
      options_(std::move(options)),
      rng_(static_cast<std::minstd_rand::result_type>(std::random_device{}() ^ std::hash<std::string>{}(options_.node))),
      lease_(resource, client, board, monotonic, server,
             NodeLeaseWriterOptions{options_.node, options_.namespace_name, options_.presence, options_.poll}),
      slot_(resource, client, board, monotonic, server,
            SlotKeeperOptions{options_.node, options_.namespace_name, options_.deadline_file}),
      asks_(rid_, options_.node, policy_, board, monotonic, options_.fleet_size),
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
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (renewer_.joinable()) renewer_.join();
}

Status RolloutGate::Register() {
  MutexLock lock(&mu_);
  Status registered = lease_.Register();
  if (registered.ok()) asks_.Written();
  return registered;
}

void RolloutGate::NoteGrant(const RolloutLease& slot) {
  if (slot.holder != options_.node) return;
  // Not under the gate's lock, which is held across API writes: the watch's thread never waits
  // for one. Read at the next Enter.
  MutexLock lock(&notices_mu_);
  notices_.push_back(Notice{slot.uid, slot.state, slot.resource_version});
}

void RolloutGate::ReadNotices() {
  std::vector<Notice> notices;
  {
    MutexLock lock(&notices_mu_);
    notices.swap(notices_);
  }
  const std::optional<HeldSlot>& held = slot_.held();
  for (const Notice& n : notices) {
    if (held && held->uid == n.uid && held->state == n.state) continue;  // its own take, seen back
    asks_.NoteGrant(n.uid, n.state, n.version);
  }
}

BoardView RolloutGate::OwnView() const {
  BoardView view = board_.View();
  const std::optional<HeldSlot>& held = slot_.held();
  // What this node wrote is newer than what the watch has brought back. A slot its watch saw
  // leave (released, granted to another node, deleted) is not this node's.
  view.nodes[options_.node] = lease_.results();
  view.labels[options_.node] = lease_.Presence().labels;
  view.slots.erase(std::remove_if(view.slots.begin(), view.slots.end(),
                                  [&](const SlotView& s) {
                                    return (held && s.slot == held->index) ||
                                           board_.Deleted(SlotLeaseName(rid_, s.slot));
                                  }),
                   view.slots.end());
  if (held && !held->lost) {
    view.slots.push_back(
        SlotView{held->index, options_.node, held->uid, held->state, held->phase, true, held->resource_version});
  }
  return view;
}

std::optional<Duration> RolloutGate::Enter(const ObjectMeta& object, const std::string& state,
                                           const ObjectFacts* facts, bool started) {
  MutexLock lock(&mu_);
  if (!board_.listed()) return options_.poll;  // its own slots are not known yet
  slot_.ForgetPastFence();
  ReadNotices();
  RolloutObject target{object.uid, state, facts && facts->rollout_paused, facts ? facts->rollout_resume : ""};
  if (facts && !resource_.node_selector_path.empty()) target.selector = RolloutSelector(facts->selector);
  target.started = started;
  const int64_t now_ms = server_.NowMs();
  WindowNow window = options_.windows ? options_.windows(now_ms) : WindowNow{};
  bool held = options_.held && options_.held();
  const BoardView view = OwnView();
  if (auto mine = slot_.Own(view, object.uid)) {
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
    lease_.Withdraw(object.uid);
    return Wait(object, stop, now_ms);
  }
  RolloutAdmission queued;
  queued.wait = WaitReason::kQueued;
  const NodeRequest request = RequestOf(object, target);
  const AskAgain again = asks_.Again(view, object.uid, state);
  auto asked = lease_.requests().find(object.uid);
  if (auto due = asks_.Due(object.uid, request, asked == lease_.requests().end() ? nullptr : &asked->second, again)) {
    queued.detail = "asks in " + std::to_string(due->count()) + "ms, at this node's place among the fleet's asks";
    NoteWait(object, queued);
    return *due;
  }
  queued.detail = Ask(object, target, again != AskAgain::kNo);
  return Wait(object, queued, now_ms);
}

NodeRequest RolloutGate::RequestOf(const ObjectMeta& object, const RolloutObject& target) {
  return NodeRequest{target.state, object.namespace_name + "/" + object.name, target.resume_state, target.selector,
                     target.started};
}

std::string RolloutGate::Ask(const ObjectMeta& object, const RolloutObject& target, bool again) {
  NodeRequest request = RequestOf(object, target);
  const std::map<std::string, NodeRequest>& requests = lease_.requests();
  auto it = requests.find(object.uid);
  if (it != requests.end() && it->second == request && !again) return "asked the rollout's coordinator for a slot";
  if (it == requests.end() && requests.size() >= kMaxNodeRequests) {
    return "this node has asked for " + std::to_string(requests.size()) + " objects already; asks when one is granted";
  }
  lease_.Request(object.uid, request);
  asks_.Asking(object.uid);
  // The asks that come due soon go in the same write: objects that changed together are asked
  // for in one write, not one each.
  for (auto& [uid, soon] : asks_.TakeDueSoon(kMaxNodeRequests - std::min(kMaxNodeRequests, requests.size()))) {
    lease_.Request(uid, soon);
  }
  Status written = lease_.Write();
  asks_.Written();  // a failed write is the writer's to retry, backing off (NodeLeaseWriter::Renew)
  return written.ok() ? "asked the rollout's coordinator for a slot"
                      : "the ask was not written (" + written.ToString() + "): written again at the next renewal";
}

std::optional<Duration> RolloutGate::Wait(const ObjectMeta& object, const RolloutAdmission& a, int64_t now_ms) {
  NoteWait(object, a);
  if (a.wait == WaitReason::kOutsideWindow && a.until_ms > now_ms) {
    return std::min<Duration>(std::max<Duration>(Duration(a.until_ms - now_ms), options_.poll),
                              std::chrono::minutes(1));
  }
  return Jittered(options_.poll);
}

std::optional<Duration> RolloutGate::TakeOwn(const ObjectMeta& object, const std::string& state,
                                             const HeldSlot& mine, const RolloutAdmission& a) {
  const std::optional<HeldSlot>& held = slot_.held();
  if (!held || held->state != state) {
    // Granted by the coordinator; held before a restart; or held while the object changed (a fix
    // after its old state failed): the slot goes on for the new state, so the fleet does not
    // wait for work nobody will finish. Written as this node's own from the version judged: a
    // slot another node holds since is refused by the API server, never taken from it.
    const char* how = held ? "newer state" : mine.state == state ? "granted" : "granted, newer state";
    Status taken = slot_.Take(HeldSlot{a.slot, object, object.uid, state, NodeStep::kRunning, a.slot_version,
                                       monotonic_.Now(), false, mine.state == state && mine.canary});
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
    Log(LogLevel::kInfo, "rollout slot taken",
        {{"object", object.Key()}, {"uid", object.uid}, {"slot", a.slot}, {"state", StateText(state)},
         {"own", how}, {"next", "run the hook inside the slot"}});
  }
  lease_.Unrequest(object.uid);  // left out of the node Lease's next write
  asks_.Taken(object.uid);
  if (waiting_.erase(object.uid) > 0) CountWaits();
  return std::nullopt;
}

void RolloutGate::Gone(const ObjectMeta& object) {
  MutexLock lock(&mu_);
  // A slot known only from the board (held before a restart) is not renewed by this process: it
  // frees itself within its lease, so no board is read here for every deleted object.
  if (slot_.held() && slot_.held()->uid == object.uid) GiveUpSlot(*slot_.held(), "object deleted");
  if (waiting_.erase(object.uid) > 0) CountWaits();
  // Its result is of no use to anyone now. Not worth a write of its own (each reaches every
  // agent): the node Lease's next write, for a result or a renewal, leaves it out.
  lease_.ForgetResult(object.uid);
  asks_.Forget(object.uid);
  // A request is written away at once: the coordinator would grant a slot nobody takes.
  lease_.Withdraw(object.uid);
}

void RolloutGate::GiveUpSlot(const HeldSlot& mine, const std::string& why) {
  lease_.Withdraw(mine.uid);  // else the coordinator, reading the ask, grants it again
  const std::string next = slot_.Release(mine);
  Log(LogLevel::kInfo, "rollout slot given up",
      {{"uid", mine.uid}, {"slot", mine.index}, {"reason", why}, {"next", next}});
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

bool RolloutGate::ShowStep(const ObjectMeta& object, NodeStep step, const std::string& detail, Duration hold) {
  MutexLock lock(&mu_);
  return slot_.ShowStep(object, step, detail, hold);
}

HookSpec RolloutGate::Prepare(const HookSpec& hook) const {
  if (options_.fence.empty()) return hook;
  HookSpec fenced = hook;
  fenced.argv = options_.fence;
  fenced.argv.insert(fenced.argv.end(), hook.argv.begin(), hook.argv.end());
  return fenced;
}

bool RolloutGate::LostSlot(const ObjectMeta& object) const {
  MutexLock lock(&mu_);
  return slot_.Lost(object.uid);
}

void RolloutGate::Verifying(const ObjectMeta& object, const std::string& state) {
  MutexLock lock(&mu_);
  slot_.Verifying(object.uid, state);
}

std::optional<Duration> RolloutGate::Succeeded(const ResourceRef& /*resource*/, const ObjectMeta& object,
                                               const std::string& state, const std::string& message) {
  MutexLock lock(&mu_);
  lease_.Unrequest(object.uid);
  Status written =
      lease_.PutResult(object.uid, NodeResult{state, false, server_.NowMs(), NoteText(message, kResultMessageBytes)});
  std::string next;
  if (slot_.held() && slot_.held()->uid == object.uid) next = slot_.Finish();
  if (!written.ok()) next += "; result not written (" + written.ToString() + "): written again at the next renewal";
  Log(LogLevel::kInfo, "rollout node done",
      {{"object", object.Key()}, {"uid", object.uid}, {"state", StateText(state)}, {"next", next}});
  return std::nullopt;
}

void RolloutGate::Failed(const ResourceRef& /*resource*/, const ObjectMeta& object, const std::string& state,
                         int retries, bool permanent, const std::string& message) {
  MutexLock lock(&mu_);
  const std::optional<HeldSlot>& held = slot_.held();
  if (!held || held->uid != object.uid) return;  // not inside the gate: not this policy's failure
  if (!permanent && retries < policy_.failure_after_retries) return;  // keeps its slot for the retry
  NodeResult result{state, true, server_.NowMs(), NoteText(message, kResultMessageBytes)};
  // The coordinator said whether it granted the slot to a canary; the halt is its to post.
  result.canary = held->canary && held->state == state;
  lease_.Unrequest(object.uid);
  Status written = lease_.PutResult(object.uid, result);
  const std::string next = slot_.Release(*held);
  Log(LogLevel::kWarn, "rollout node failed",
      {{"object", object.Key()}, {"uid", object.uid}, {"state", StateText(state)}, {"retries", retries},
       {"canary", result.canary ? "true" : "false"}, {"result", written.ok() ? "written" : written.ToString()},
       {"next", next}});
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

void RolloutGate::RenewDue() {
  MutexLock lock(&mu_);
  lease_.Renew();
  slot_.Renew();
}

void RolloutGate::RenewLoop() {
  const auto period = std::chrono::duration_cast<std::chrono::milliseconds>(policy_.slot_lease) / 6;
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      mu_.WaitWith([&](std::unique_lock<std::mutex>& held) {
        cv_.wait_for(held, std::max(period, std::chrono::milliseconds(200)));
      });
      if (stopping_) return;
    }
    RenewDue();
  }
}

}  // namespace nodehook
