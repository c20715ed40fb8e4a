// NodeSteps: the drain step, in rounds (pod_drain.h), each round's result recorded.
#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/base/printable.h"
#include "agent/nodework/node_cordon.h"
#include "agent/nodework/node_steps.h"

namespace nodehook {

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string PodsLeftText(const std::vector<std::string>& left) {
  return std::to_string(left.size()) + (left.size() == 1 ? " pod left: " : " pods left: ") + FirstNames(left, 5);
}


}  // namespace

PodDrain& NodeSteps::DrainOf(const NodeStepsRecord& rec) {
  MutexLock lock(&mu_);
  auto& drain = drains_[rec.uid];
  if (!drain) {
    DrainOptions options;
    options.pod_selector = policy_.drain->pod_selector;
    options.grace_period_seconds = policy_.drain->grace_period_seconds;
    options.self = options_.self_pod;
    options.force = policy_.drain->force;
    options.delete_emptydir_data = policy_.drain->delete_emptydir_data;
    if (!rec.pods_left.empty() || rec.evictions > 0) {
      // Resumed after a restart: the pods its record left are those it set out to drain.
      const std::vector<std::string> left = Lines(rec.pods_left);
      options.resumed_left = std::set<std::string>(left.begin(), left.end());
    }
    drain = std::make_unique<PodDrain>(api_, clock_, options);
  }
  return *drain;
}

GateEntry NodeSteps::Drain(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state) {
  if (!policy_.drain) {
    // The config no longer drains (changed while this node drained): the step is over.
    Log(LogLevel::kInfo, "node drain dropped",
        {{"object", object.Key()}, {"uid", object.uid}, {"reason", "the rollout no longer drains"},
         {"next", "run the hook"}});
    ForgetDrain(object.uid);
    return Save(rec, NodeStep::kRunning).ok() ? GateEntry::Inside() : GateEntry::Wait(options_.poll);
  }
  const Duration spent = Look(rec);
  const Duration timeout = policy_.drain->timeout;
  if (spent >= timeout) {
    std::string why = "drain timed out after " + SecondsText(timeout) + "; " + PodsLeftText(Lines(rec.pods_left));
    if (!rec.message.empty()) why += "; blocked: " + rec.message;
    return Fail(rec, object, state, why);
  }
  Result<DrainRound> round = DrainOf(rec).Round();
  if (!round.ok()) {
    Log(LogLevel::kWarn, "node drain round failed",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", round.status().ToString()},
         {"next", "try again in " + SecondsText(options_.poll)}});
    return WaitFor(rec, std::min(options_.poll, timeout - spent));
  }
  if (!round->newly_blocked.empty()) ReportBlocked(object, round->newly_blocked);
  std::string left;
  for (const std::string& pod : round->left) left += pod + "\n";
  rec.pods_left = left;
  rec.evictions += round->evictions;
  rec.message = round->blocked;
  if (rec.cordoned) {
    Result<bool> held = CordonHeld(api_, MarkKey(object.uid));
    if (held.ok() && !*held) {
      // Someone uncordoned the node during the drain: their call. Never cordoned again by us,
      // and the node is not ours to uncordon any more.
      rec.cordoned = false;
      Log(LogLevel::kWarn, "node cordon undone",
          {{"object", object.Key()}, {"uid", object.uid}, {"step", NodeStepName(NodeStep::kDraining)},
           {"next", "go on draining; leave the node's cordon to whoever undid ours"}});
      events_.NodeStep(resource_.ref, object, "NodeCordonUndone", true,
                       "someone uncordoned the node during the drain; the rollout leaves its cordon to them");
    }
  }
  if (round->done()) {
    Log(LogLevel::kInfo, "node drained",
        {{"object", object.Key()}, {"uid", object.uid}, {"evictions", rec.evictions},
         {"seconds", static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(spent).count())},
         {"next", "run the hook"}});
    rec.message.clear();
    ForgetDrain(object.uid);
    Status saved = Save(rec, NodeStep::kRunning);
    if (!saved.ok()) return GateEntry::Wait(options_.poll);
    return GateEntry::Inside();
  }
  std::string detail = PodsLeftText(round->left);
  if (!round->blocked.empty()) detail += "; blocked: " + round->blocked;
  gate_.ShowStep(object, NodeStep::kDraining, detail, Duration{0});
  // Recorded each round (a lost round is done again after a restart).
  return WaitFor(rec, std::max(std::min(round->next, timeout - spent), Duration(std::chrono::milliseconds(100))));
}

void NodeSteps::ReportBlocked(const ObjectMeta& object, const std::vector<std::string>& blocked) {
  std::string all;
  for (const std::string& why : blocked) {
    Log(LogLevel::kWarn, "node drain blocked",
        {{"object", object.Key()}, {"uid", object.uid}, {"pod", why},
         {"next", "ask again with backoff until the drain's timeout"}});
    all += (all.empty() ? "" : "; ") + why;
  }
  // One Event for the round's new blockers (Events are rate-limited per object and reason), on
  // the object and on the Node, where `kubectl describe node` shows why it is still cordoned.
  events_.NodeStep(resource_.ref, object, "NodeDrainBlocked", true, "drain blocked: " + all);
  Result<NodeState> node = api_.GetNode();
  if (node.ok()) events_.NodeEvent(node->Meta(), "NodeDrainBlocked", true, "drain for " + object.Key() + " blocked: " + all);
}

void NodeSteps::ForgetDrain(const std::string& uid) {
  MutexLock lock(&mu_);
  drains_.erase(uid);
}

}  // namespace nodehook
