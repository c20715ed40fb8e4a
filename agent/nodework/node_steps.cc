#include "agent/nodework/node_steps.h"

#include <rapidjson/stringbuffer.h>

#include "agent/base/duration_math.h"
#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/base/printable.h"
#include "agent/nodework/node_cordon.h"

namespace nodehook {

namespace {

// A Node's annotations share 256 KiB with everyone else's: the why of a failure is kept short.
constexpr size_t kMarkReasonLimit = 256;

// Steps under way that hold the node (its cordon may be taken): the work goes on, whatever stops
// new work, until it finishes, fails, or is ended.
bool Holding(NodeStep step) { return step >= NodeStep::kCordoning && step <= NodeStep::kUncordoning; }

// Before the hook's success: an operator's stop (kRolloutStopNodes) ends them. Past it, the
// work finishes (a reboot under way, the verify, the uncordon).
bool Stoppable(NodeStep step) { return step >= NodeStep::kCordoning && step <= NodeStep::kRunning; }

}  // namespace

NodeSteps::NodeSteps(const WatchedResource& resource, RolloutSteps& gate, NodeApi& api, StateStore& store,
                     ActionRunner& runner, Clock& clock, EventRecorder& events, NodeStepsOptions options)
    : resource_(resource),
      policy_(*resource.rollout),
      gate_(gate),
      api_(api),
      store_(store),
      runner_(runner),
      clock_(clock),
      events_(events),
      options_(std::move(options)) {}

std::string NodeSteps::MarkKey(const std::string& uid) const { return CordonMarkKey(options_.rid, uid); }

std::string NodeSteps::MarkValue(const ObjectMeta& object, const std::string& state, const std::string& failed) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  PutString(w, "object", object.Key());
  PutString(w, "uid", object.uid);
  PutString(w, "state", state);
  if (!failed.empty()) PutString(w, "failed", CutToLimit(failed, kMarkReasonLimit));
  w.EndObject();
  return buffer.GetString();
}

int64_t NodeSteps::NowMs() const { return ToMillis(clock_.Now()); }

NodeStep StepOf(const NodeStepsRecord& rec) { return NodeStepNamed(rec.step).value_or(NodeStep::kWaiting); }

Status NodeSteps::Save(NodeStepsRecord& rec, NodeStep step) {
  if (StepOf(rec) != step) {
    rec.step_started_ms = NowMs();
    rec.step_spent_ms = 0;
    rec.step_seen_ms = rec.step_started_ms;
    rec.step_wait_ms = 0;
  }
  rec.step = NodeStepName(step);
  return store_.PutNodeSteps(rec);
}

Duration NodeSteps::Look(NodeStepsRecord& rec) {
  const int64_t now = NowMs();
  if (rec.step_seen_ms > 0 && now > rec.step_seen_ms) {
    const int64_t late = options_.poll.count();
    rec.step_spent_ms += std::min(now - rec.step_seen_ms, rec.step_wait_ms + late);
  }
  rec.step_seen_ms = now;
  return Duration(rec.step_spent_ms);
}

GateEntry NodeSteps::WaitFor(NodeStepsRecord& rec, Duration wait) {
  rec.step_wait_ms = wait.count();
  (void)store_.PutNodeSteps(rec);
  return GateEntry::Wait(wait);
}

GateEntry NodeSteps::Admit(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) {
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok()) {
    Log(LogLevel::kError, "node steps unreadable",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", loaded.status().ToString()},
         {"next", "look again in " + SecondsText(options_.poll)}});
    return GateEntry::Wait(options_.poll);
  }
  std::optional<NodeStepsRecord> found = *loaded;
  if (found && StepOf(*found) == NodeStep::kSoaking) {
    // Done, and soaking in its slot (the gate's) with the node still cordoned: the uncordon is
    // due before the soak ends, so it happens inside the slot. A newer state of the object waits
    // for that too (the slot is busy soaking), then starts over.
    const Duration left = SoakLeft(*found);
    if (found->state == state) {
      return left > Duration::zero() ? GateEntry::Wait(left) : GateEntry::Inside(ResumeAt::kFinish);
    }
    if (left > Duration::zero()) return GateEntry::Wait(left);
    if (!EndSteps(*found, object, "the object changed while the node soaked an older state")) {
      return GateEntry::Wait(options_.poll);
    }
    found.reset();
  }
  const bool same_state = found && found->state == state;
  const bool stop = facts && facts->rollout_stop_nodes && same_state && Stoppable(StepOf(*found));
  // Work under way goes on through pauses, holds, halts and windows; anything else starts anew.
  GateEntry entry = same_state && Holding(StepOf(*found)) && !stop ? gate_.GoOn(object, state, facts)
                                                                : gate_.Admit(object, state, facts);
  if (entry.kind != GateEntry::Kind::kInside) {
    // Steps that can no longer go on end here, their cordon given back: the operator stopped the
    // nodes, or the object changed and its newer state may not take the node over now.
    if (found && Holding(StepOf(*found)) && (stop || !same_state)) {
      const std::string why = stop ? std::string("the operator stopped the rollout's nodes (") +
                                         kRolloutPausedAnnotation + ": " + kRolloutStopNodes + ")"
                                   : "the object changed and its newer state may not start here now";
      if (!EndSteps(*found, object, why)) return GateEntry::Wait(options_.poll);
    }
    return entry;
  }
  NodeStepsRecord rec;
  if (same_state && StepOf(*found) != NodeStep::kFailed) {
    rec = *found;
  } else {
    // A new state (or one tried again after it failed here): the steps start over. A cordon
    // kept from an earlier state is taken over by this one (its mark says so after the cordon).
    rec.uid = object.uid;
    rec.resource = resource_.ref.Id();
    rec.state = state;
    rec.cordoned = found && found->cordoned;
  }
  if (rec.step.empty() || StepOf(rec) == NodeStep::kCordoning) {
    GateEntry cordoned = Cordon(rec, object);
    if (cordoned.kind != GateEntry::Kind::kInside) return cordoned;
  }
  if (StepOf(rec) == NodeStep::kDraining) {
    GateEntry drained = Drain(rec, object, state);
    if (drained.kind != GateEntry::Kind::kInside) return drained;
  }
  if (StepOf(rec) == NodeStep::kRunning) {
    gate_.ShowStep(object, NodeStep::kRunning, "", Duration{0});
    return GateEntry::Inside(ResumeAt::kHook);
  }
  if (StepOf(rec) == NodeStep::kRebooting) return CheckReboot(rec, object, state);
  if (StepOf(rec) == NodeStep::kVerifying) return GateEntry::Inside(ResumeAt::kVerify);
  return GateEntry::Inside(ResumeAt::kFinish);  // uncordoning
}

GateEntry NodeSteps::Cordon(NodeStepsRecord& rec, const ObjectMeta& object) {
  const NodeStep next_step = policy_.drain ? NodeStep::kDraining : NodeStep::kRunning;
  if (!policy_.Cordons()) {
    Status saved = Save(rec, next_step);
    return saved.ok() ? GateEntry::Inside() : GateEntry::Wait(options_.poll);
  }
  // Recorded before the Node is touched: a restart after the cordon finds it ours by its mark.
  if (rec.step.empty()) {
    Status saved = Save(rec, NodeStep::kCordoning);
    if (!saved.ok()) {
      Log(LogLevel::kError, "node steps not saved",
          {{"object", object.Key()}, {"uid", object.uid}, {"step", NodeStepName(NodeStep::kCordoning)}, {"error", saved.ToString()},
           {"next", "cordon once the state file takes it, in " + SecondsText(options_.poll)}});
      return GateEntry::Wait(options_.poll);
    }
  }
  gate_.ShowStep(object, NodeStep::kCordoning, "", Duration{0});
  Result<CordonTaken> taken = TakeCordon(api_, MarkKey(object.uid), MarkValue(object, rec.state));
  if (!taken.ok()) {
    Log(LogLevel::kWarn, "node cordon failed",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", taken.status().ToString()},
         {"next", "try again in " + SecondsText(options_.poll)}});
    return GateEntry::Wait(options_.poll);
  }
  rec.cordoned = taken->ours;
  rec.was_unschedulable = taken->someone_elses;
  if (!taken->stale_marks.empty()) ReportStaleMarks(object, *taken);
  Status saved = Save(rec, next_step);
  if (taken->ours) {
    Log(LogLevel::kInfo, "node cordoned",
        {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey(object.uid)},
         {"next", policy_.drain ? "drain the node" : "run the hook"}});
  } else {
    Log(LogLevel::kInfo, "node cordon left alone",
        {{"object", object.Key()}, {"uid", object.uid}, {"reason", "cordoned by someone else before the steps"},
         {"next", (policy_.drain ? std::string("drain the node") : std::string("run the hook")) +
                      "; the node stays cordoned afterwards"}});
    events_.NodeStep(resource_.ref, object, "NodeCordonKept", false,
                     "the node was cordoned by someone else before the rollout's steps; it stays cordoned after them");
  }
  if (!saved.ok()) return GateEntry::Wait(options_.poll);
  return GateEntry::Inside();
}

void NodeSteps::ReportStaleMarks(const ObjectMeta& object, const CordonTaken& taken) {
  const std::vector<std::string>& marks = taken.stale_marks;
  const std::string note = "removed " + std::to_string(marks.size()) +
                           " stale cordon mark(s) left on the schedulable node (someone uncordoned it): " +
                           FirstNames(marks, 3);
  Log(LogLevel::kWarn, "node stale marks removed",
      {{"object", object.Key()}, {"uid", object.uid}, {"marks", FirstNames(marks, 3)},
       {"next", policy_.drain ? "drain the node" : "run the hook"}});
  events_.NodeStep(resource_.ref, object, "NodeStaleMarksRemoved", true, note);
  events_.NodeEvent(taken.node, "NodeStaleMarksRemoved", true, note);
}

GateEntry NodeSteps::Fail(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state,
                          const std::string& why) {
  Log(LogLevel::kError, "node step failed",
      {{"object", object.Key()}, {"uid", object.uid}, {"step", rec.step}, {"error", why},
       {"next", std::string("the node fails the state; ") + OnFailureName(policy_.on_failure)}});
  events_.NodeStep(resource_.ref, object, "NodeStepFailed", true, rec.step + ": " + why);
  ForgetDrain(object.uid);
  ApplyOnFailure(rec, object, why);
  gate_.Failed(resource_.ref, object, state, policy_.failure_after_retries, true, why);
  return GateEntry::Failed(why);
}

void NodeSteps::ApplyOnFailure(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& why) {
  rec.message = why;
  if (rec.cordoned && policy_.on_failure == OnFailure::kUncordon) (void)GiveBack(rec, object, "the node failed");
  if (rec.cordoned) {
    // The mark says so too: an uninstall gives back the cordons of work in progress, not these.
    Status marked = MarkCordonFailed(api_, MarkKey(object.uid), MarkValue(object, rec.state, why));
    if (!marked.ok()) {
      Log(LogLevel::kWarn, "node mark not updated",
          {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey(object.uid)},
           {"error", marked.ToString()}, {"next", "the mark keeps saying the work is in progress"}});
    }
    Log(LogLevel::kWarn, "node kept cordoned",
        {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey(object.uid)},
         {"next", policy_.on_failure == OnFailure::kUncordon ? "uncordon when the object changes"
                                                             : "a person looks; the next object state uncordons it"}});
    events_.NodeStep(resource_.ref, object, "NodeKeptCordoned", true,
                     "the node failed the object state and stays cordoned: " + why);
  }
  Status saved = rec.cordoned ? Save(rec, NodeStep::kFailed) : store_.DropNodeSteps(rec.uid);
  (void)saved;  // lost: the mark on the Node still says the cordon is ours
}

bool NodeSteps::EndSteps(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& why) {
  ForgetDrain(object.uid);
  const std::string step = rec.step;
  if (!GiveBack(rec, object, why.c_str())) return false;
  Log(LogLevel::kInfo, "node steps ended",
      {{"object", object.Key()}, {"uid", object.uid}, {"step", step}, {"reason", why},
       {"next", "the slot is given up; the object's state starts its steps anew when the rollout admits it"}});
  events_.NodeStep(resource_.ref, object, "NodeStepsEnded", false,
                   "steps ended while " + step + ": " + why + "; the node's cordon is given back");
  (void)store_.DropNodeSteps(rec.uid);  // lost: the next state's steps start over all the same
  return true;
}

bool NodeSteps::GiveBack(NodeStepsRecord& rec, const ObjectMeta& object, const char* why) {
  if (!rec.cordoned) {
    if (rec.was_unschedulable) {
      Log(LogLevel::kInfo, "node cordon left alone",
          {{"object", object.Key()}, {"uid", object.uid}, {"reason", "cordoned by someone else before the steps"},
           {"next", "leave it cordoned"}});
    }
    return true;
  }
  Result<CordonGiven> given = GiveCordonBack(api_, MarkKey(object.uid));
  if (!given.ok()) {
    Log(LogLevel::kWarn, "node uncordon failed",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", given.status().ToString()},
         {"next", "try again in " + SecondsText(options_.poll)}});
    return false;
  }
  rec.cordoned = false;
  Log(LogLevel::kInfo, "node uncordoned",
      {{"object", object.Key()}, {"uid", object.uid}, {"reason", why}, {"outcome", CordonGivenName(*given)},
       {"next", "give the slot back"}});
  if (*given == CordonGiven::kNotOurs) {
    events_.NodeStep(resource_.ref, object, "NodeCordonKept", false,
                     "the rollout's mark was taken off the node during the steps; its cordon is left as it is");
  }
  return true;
}

std::optional<Duration> NodeSteps::Succeeded(const ResourceRef& resource, const ObjectMeta& object,
                                             const std::string& state, const std::string& message) {
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok()) return options_.poll;
  if (!*loaded || (*loaded)->state != state) {
    // No steps recorded (the state file refused them): the node's result and slot as without.
    std::optional<Duration> again = gate_.Succeeded(resource, object, state, message);
    if (!again) (void)store_.DropNodeSteps(object.uid);
    return again;
  }
  NodeStepsRecord rec = **loaded;
  if (policy_.soak.count() > 0 && StepOf(rec) != NodeStep::kSoaking && StepOf(rec) != NodeStep::kUncordoning) {
    // Verify, soak, uncordon, release: the result is written and the slot soaks (the gate's),
    // while the node stays cordoned; the uncordon is due just before the soak ends.
    if (!Save(rec, NodeStep::kSoaking).ok()) return options_.poll;
    std::optional<Duration> again = gate_.Succeeded(resource, object, state, message);
    if (again) return again;
    return std::max(SoakLeft(rec), Duration(std::chrono::milliseconds(1)));
  }
  if (StepOf(rec) == NodeStep::kSoaking) {
    const Duration left = SoakLeft(rec);
    if (left > Duration::zero()) return left;
  } else if (StepOf(rec) != NodeStep::kUncordoning) {
    if (!Save(rec, NodeStep::kUncordoning).ok()) return options_.poll;
    gate_.ShowStep(object, NodeStep::kUncordoning, "", Duration{0});
  }
  if (!GiveBack(rec, object, "the node finished the state")) return options_.poll;
  if (rec.was_unschedulable) {
    events_.NodeStep(resource_.ref, object, "NodeCordonKept", false,
                     "the node was cordoned by someone else before the rollout's steps; it stays cordoned");
  }
  if (StepOf(rec) != NodeStep::kSoaking) {
    std::optional<Duration> again = gate_.Succeeded(resource, object, state, message);
    if (again) return again;
  }
  (void)store_.DropNodeSteps(object.uid);  // left behind: the next state's steps replace it
  return std::nullopt;
}

Duration NodeSteps::SoakLeft(const NodeStepsRecord& rec) const {
  // Due a little before the soak ends (a third of a slot lease, at most a quarter of the soak),
  // so the uncordon falls inside the slot, before another node may start.
  const Duration soak = policy_.soak;
  const Duration margin = std::min<Duration>(Duration(policy_.slot_lease) / 3, soak / 4);
  return Duration(rec.step_started_ms - NowMs()) + soak - margin;
}

void NodeSteps::Failed(const ResourceRef& resource, const ObjectMeta& object, const std::string& state, int retries,
                       bool permanent, const std::string& message) {
  gate_.Failed(resource, object, state, retries, permanent, message);
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok() || !*loaded || (*loaded)->state != state || StepOf(**loaded) == NodeStep::kFailed) return;
  NodeStepsRecord rec = **loaded;
  if (!permanent && retries < policy_.failure_after_retries) {
    // A verify that failed is the node failing the state: the retry runs the hook again.
    if (StepOf(rec) == NodeStep::kVerifying) (void)Save(rec, NodeStep::kRunning);
    return;
  }
  Log(LogLevel::kWarn, "node steps failed",
      {{"object", object.Key()}, {"uid", object.uid}, {"step", rec.step}, {"retries", retries},
       {"next", OnFailureName(policy_.on_failure)}});
  ApplyOnFailure(rec, object, message);
}

void NodeSteps::Gone(const ObjectMeta& object) {
  gate_.Gone(object);
  ForgetDrain(object.uid);
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok() || !*loaded) return;
  NodeStepsRecord rec = **loaded;
  if (!GiveBack(rec, object, "the object was deleted")) {
    Status kept = Save(rec, NodeStep::kDeleted);
    Log(LogLevel::kError, "node left cordoned",
        {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey(object.uid)},
         {"next", kept.ok() ? "given back at the agent's next start, or by hand: kubectl uncordon"
                            : "uncordon it by hand (kubectl uncordon) and remove the mark"}});
    return;
  }
  (void)store_.DropNodeSteps(object.uid);
}

}  // namespace nodehook
