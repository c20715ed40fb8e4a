#include "agent/nodework/node_steps.h"

#include <rapidjson/stringbuffer.h>

#include "agent/base/duration_math.h"
#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/nodework/boot_id.h"
#include "agent/nodework/node_cordon.h"

namespace nodehook {
namespace {

constexpr const char* kCordoning = "cordoning";
constexpr const char* kDraining = "draining";
constexpr const char* kRunning = "running";
constexpr const char* kRebooting = "rebooting";
constexpr const char* kVerifying = "verifying";
constexpr const char* kUncordoning = "uncordoning";
constexpr const char* kFailedStep = "failed";

std::string Joined(const std::vector<std::string>& items, size_t most) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < most; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > most) out += " and " + std::to_string(items.size() - most) + " more";
  return out;
}

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
  return std::to_string(left.size()) + (left.size() == 1 ? " pod left: " : " pods left: ") + Joined(left, 5);
}

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

std::string NodeSteps::MarkKey() const { return std::string(kCordonMarkPrefix) + options_.rid; }

std::string NodeSteps::MarkValue(const ObjectMeta& object, const std::string& state) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  PutString(w, "object", object.Key());
  PutString(w, "uid", object.uid);
  PutString(w, "state", state);
  w.EndObject();
  return buffer.GetString();
}

int64_t NodeSteps::NowMs() const { return ToMillis(clock_.Now()); }

Status NodeSteps::Save(NodeStepsRecord& rec, const std::string& step) {
  if (rec.step != step) rec.step_started_ms = NowMs();
  rec.step = step;
  return store_.PutNodeSteps(rec);
}

PodDrain& NodeSteps::DrainOf(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& drain = drains_[uid];
  if (!drain) {
    DrainOptions options{policy_.drain ? policy_.drain->pod_selector : "",
                         policy_.drain ? policy_.drain->grace_period_seconds : -1, options_.self_pod};
    drain = std::make_unique<PodDrain>(api_, clock_, options);
  }
  return *drain;
}

GateEntry NodeSteps::Admit(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) {
  GateEntry entry = gate_.Admit(object, state, facts);
  if (entry.kind != GateEntry::Kind::kInside) return entry;
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok()) {
    Log(LogLevel::kError, "node steps unreadable",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", loaded.status().ToString()},
         {"next", "look again in " + SecondsText(options_.poll)}});
    return GateEntry::Wait(options_.poll);
  }
  NodeStepsRecord rec;
  if (*loaded && (*loaded)->state == state && (*loaded)->step != kFailedStep) {
    rec = **loaded;
  } else {
    // A new state (or one tried again after it failed here): the steps start over. A cordon
    // kept from an earlier state is taken over by this one (its mark says so after the cordon).
    rec.uid = object.uid;
    rec.resource = resource_.ref.Id();
    rec.state = state;
    rec.cordoned = *loaded && (*loaded)->cordoned;
  }
  if (rec.step.empty() || rec.step == kCordoning) {
    GateEntry cordoned = Cordon(rec, object);
    if (cordoned.kind != GateEntry::Kind::kInside) return cordoned;
  }
  if (rec.step == kDraining) {
    GateEntry drained = Drain(rec, object, state);
    if (drained.kind != GateEntry::Kind::kInside) return drained;
  }
  if (rec.step == kRunning) {
    gate_.ShowStep(object, NodeStep::kRunning, "", Duration{0});
    return GateEntry::Inside(ResumeAt::kHook);
  }
  if (rec.step == kRebooting) return CheckReboot(rec, object, state);
  if (rec.step == kVerifying) return GateEntry::Inside(ResumeAt::kVerify);
  return GateEntry::Inside(ResumeAt::kFinish);  // uncordoning
}

GateEntry NodeSteps::Cordon(NodeStepsRecord& rec, const ObjectMeta& object) {
  const char* next_step = policy_.drain ? kDraining : kRunning;
  if (!policy_.Cordons()) {
    Status saved = Save(rec, next_step);
    return saved.ok() ? GateEntry::Inside() : GateEntry::Wait(options_.poll);
  }
  // Recorded before the Node is touched: a restart after the cordon finds it ours by its mark.
  if (rec.step.empty()) {
    Status saved = Save(rec, kCordoning);
    if (!saved.ok()) {
      Log(LogLevel::kError, "node steps not saved",
          {{"object", object.Key()}, {"uid", object.uid}, {"step", kCordoning}, {"error", saved.ToString()},
           {"next", "cordon once the state file takes it, in " + SecondsText(options_.poll)}});
      return GateEntry::Wait(options_.poll);
    }
  }
  gate_.ShowStep(object, NodeStep::kCordoning, "", Duration{0});
  Result<CordonTaken> taken = TakeCordon(api_, MarkKey(), MarkValue(object, rec.state));
  if (!taken.ok()) {
    Log(LogLevel::kWarn, "node cordon failed",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", taken.status().ToString()},
         {"next", "try again in " + SecondsText(options_.poll)}});
    return GateEntry::Wait(options_.poll);
  }
  rec.cordoned = taken->ours;
  rec.was_unschedulable = taken->someone_elses;
  Status saved = Save(rec, next_step);
  if (taken->ours) {
    Log(LogLevel::kInfo, "node cordoned",
        {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey()},
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

GateEntry NodeSteps::Drain(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state) {
  const Duration spent = Duration(NowMs() - rec.step_started_ms);
  const Duration timeout = policy_.drain->timeout;
  if (spent >= timeout) {
    std::string why = "drain timed out after " + SecondsText(timeout) + "; " + PodsLeftText(Lines(rec.pods_left));
    if (!rec.message.empty()) why += "; blocked: " + rec.message;
    return Fail(rec, object, state, why);
  }
  Result<DrainRound> round = DrainOf(object.uid).Round();
  if (!round.ok()) {
    Log(LogLevel::kWarn, "node drain round failed",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", round.status().ToString()},
         {"next", "try again in " + SecondsText(options_.poll)}});
    return GateEntry::Wait(std::min(options_.poll, timeout - spent));
  }
  for (const std::string& blocked : round->newly_blocked) {
    Log(LogLevel::kWarn, "node drain blocked",
        {{"object", object.Key()}, {"uid", object.uid}, {"pod", blocked},
         {"next", "ask again with backoff until the drain's timeout"}});
    events_.NodeStep(resource_.ref, object, "NodeDrainBlocked", true, "drain blocked: " + blocked);
  }
  std::string left;
  for (const std::string& pod : round->left) left += pod + "\n";
  bool changed = left != rec.pods_left || round->evictions > 0 || round->blocked != rec.message;
  rec.pods_left = left;
  rec.evictions += round->evictions;
  rec.message = round->blocked;
  if (rec.cordoned) {
    Result<bool> held = CordonHeld(api_, MarkKey());
    if (held.ok() && !*held) {
      // Someone uncordoned the node during the drain: their call. Never cordoned again by us,
      // and the node is not ours to uncordon any more.
      rec.cordoned = false;
      changed = true;
      Log(LogLevel::kWarn, "node cordon undone",
          {{"object", object.Key()}, {"uid", object.uid}, {"step", kDraining},
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
    {
      std::lock_guard<std::mutex> lock(mu_);
      drains_.erase(object.uid);
    }
    Status saved = Save(rec, kRunning);
    if (!saved.ok()) return GateEntry::Wait(options_.poll);
    return GateEntry::Inside();
  }
  if (changed) (void)store_.PutNodeSteps(rec);  // a lost round is done again after a restart
  std::string detail = PodsLeftText(round->left);
  if (!round->blocked.empty()) detail += "; blocked: " + round->blocked;
  gate_.ShowStep(object, NodeStep::kDraining, detail, Duration{0});
  return GateEntry::Wait(std::max(std::min(round->next, timeout - spent), Duration(std::chrono::milliseconds(100))));
}

std::optional<Duration> NodeSteps::AfterHook(const ObjectMeta& object, const std::string& state, bool reboot_asked) {
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  NodeStepsRecord rec;
  if (loaded.ok() && *loaded && (*loaded)->state == state) {
    rec = **loaded;
  } else {
    rec.uid = object.uid;
    rec.resource = resource_.ref.Id();
    rec.state = state;
  }
  if (!reboot_asked || !policy_.reboot) {
    if (reboot_asked) {
      Log(LogLevel::kWarn, "reboot not configured",
          {{"resource", resource_.ref.Id()}, {"object", object.Key()}, {"uid", object.uid},
           {"next", "go on without a reboot (set rollout.reboot to reboot the node)"}});
    }
    (void)Save(rec, kVerifying);  // not saved: a restart runs the hook again, as without steps
    return std::nullopt;
  }
  Result<std::string> boot = ReadBootId(options_.boot_id_file);
  rec.boot_id = boot.ok() ? *boot : "";
  rec.reboot_started = boot.ok();
  rec.message = boot.ok() ? "" : boot.status().message();
  // Recorded before the command runs, and never run again: a restart that finds the same boot ID
  // waits for the timeout instead.
  Status saved = Save(rec, kRebooting);
  if (!saved.ok()) {
    Log(LogLevel::kError, "node steps not saved",
        {{"object", object.Key()}, {"uid", object.uid}, {"step", kRebooting}, {"error", saved.ToString()},
         {"next", "no reboot without its record; the hook runs again in " + SecondsText(options_.poll)}});
    return options_.poll;
  }
  gate_.ShowStep(object, NodeStep::kRebooting, "waiting for a new boot ID", policy_.reboot->timeout);
  if (!boot.ok()) {
    Log(LogLevel::kError, "node reboot not started",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", boot.status().ToString()},
         {"next", "no reboot can be proven: the node fails the state after " + SecondsText(policy_.reboot->timeout)}});
    return options_.poll;
  }
  Log(LogLevel::kInfo, "node reboot started",
      {{"object", object.Key()}, {"uid", object.uid}, {"boot_id", rec.boot_id},
       {"next", "wait up to " + SecondsText(policy_.reboot->timeout) + " for a new boot ID"}});
  ActionRequest request;
  request.argv = policy_.reboot->argv;
  request.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options_.reboot_command_timeout);
  CancelToken never;
  ActionResult ran = runner_.Run(request, never);
  if (ran.kind != ActionResult::Kind::kExited || ran.exit_code != 0) {
    Log(LogLevel::kWarn, "node reboot command failed",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", ran.message},
         {"next", "wait for a new boot ID until the reboot's timeout"}});
  }
  return options_.poll;
}

GateEntry NodeSteps::CheckReboot(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state) {
  const Duration spent = Duration(NowMs() - rec.step_started_ms);
  const Duration timeout = policy_.reboot ? policy_.reboot->timeout : Duration{0};
  Result<std::string> boot = ReadBootId(options_.boot_id_file);
  if (boot.ok() && !rec.boot_id.empty() && *boot != rec.boot_id) {
    Result<NodeState> node = api_.GetNode();
    if (node.ok() && (node->boot_id == *boot || node->boot_id.empty())) {
      Log(LogLevel::kInfo, "node rebooted",
          {{"object", object.Key()}, {"uid", object.uid}, {"boot_id", *boot}, {"previous_boot_id", rec.boot_id},
           {"node_boot_id", node->boot_id.empty() ? "not reported" : node->boot_id},
           {"seconds", static_cast<int64_t>(std::chrono::duration_cast<std::chrono::seconds>(spent).count())},
           {"next", "verify, then give the node back"}});
      events_.NodeStep(resource_.ref, object, "NodeRebooted", false,
                       "rebooted: boot ID " + rec.boot_id + " -> " + *boot);
      rec.message.clear();
      Status saved = Save(rec, kVerifying);
      if (!saved.ok()) return GateEntry::Wait(options_.poll);
      gate_.ShowStep(object, NodeStep::kVerifying, "", Duration{0});
      return GateEntry::Inside(ResumeAt::kVerify);
    }
    rec.message = node.ok() ? "new boot ID " + *boot + ", but the Node reports " + node->boot_id
                            : "new boot ID " + *boot + "; the Node is not readable: " + node.status().ToString();
  }
  if (spent >= timeout) {
    std::string why = "no reboot within " + SecondsText(timeout) + ": ";
    why += !rec.message.empty() ? rec.message
           : boot.ok()           ? "the boot ID is still " + *boot
                                 : boot.status().message();
    return Fail(rec, object, state, why);
  }
  gate_.ShowStep(object, NodeStep::kRebooting, "waiting for a new boot ID", timeout - spent);
  return GateEntry::Wait(std::min(options_.poll, timeout - spent));
}

GateEntry NodeSteps::Fail(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state,
                          const std::string& why) {
  Log(LogLevel::kError, "node step failed",
      {{"object", object.Key()}, {"uid", object.uid}, {"step", rec.step}, {"error", why},
       {"next", std::string("the node fails the state; ") + OnFailureName(policy_.on_failure)}});
  events_.NodeStep(resource_.ref, object, "NodeStepFailed", true, rec.step + ": " + why);
  {
    std::lock_guard<std::mutex> lock(mu_);
    drains_.erase(object.uid);
  }
  ApplyOnFailure(rec, object, why);
  gate_.Failed(resource_.ref, object, state, policy_.failure_after_retries, true, why);
  return GateEntry::Failed(why);
}

void NodeSteps::ApplyOnFailure(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& why) {
  rec.message = why;
  if (rec.cordoned && policy_.on_failure == OnFailure::kUncordon) (void)GiveBack(rec, object, "the node failed");
  if (rec.cordoned) {
    Log(LogLevel::kWarn, "node kept cordoned",
        {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey()},
         {"next", policy_.on_failure == OnFailure::kUncordon ? "uncordon when the object changes"
                                                             : "a person looks; the next object state uncordons it"}});
    events_.NodeStep(resource_.ref, object, "NodeKeptCordoned", true,
                     "the node failed the object state and stays cordoned: " + why);
  }
  Status saved = rec.cordoned ? Save(rec, kFailedStep) : store_.DropNodeSteps(rec.uid);
  (void)saved;  // lost: the mark on the Node still says the cordon is ours
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
  Result<CordonGiven> given = GiveCordonBack(api_, MarkKey());
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
  if (loaded.ok() && *loaded && (*loaded)->state == state) {
    NodeStepsRecord rec = **loaded;
    if (rec.step != kUncordoning && !Save(rec, kUncordoning).ok()) return options_.poll;
    gate_.ShowStep(object, NodeStep::kUncordoning, "", Duration{0});
    if (!GiveBack(rec, object, "the node finished the state")) return options_.poll;
    if (rec.was_unschedulable) {
      events_.NodeStep(resource_.ref, object, "NodeCordonKept", false,
                       "the node was cordoned by someone else before the rollout's steps; it stays cordoned");
    }
  } else if (!loaded.ok()) {
    return options_.poll;
  }
  std::optional<Duration> again = gate_.Succeeded(resource, object, state, message);
  if (again) return again;
  (void)store_.DropNodeSteps(object.uid);  // left behind: the next state's steps replace it
  return std::nullopt;
}

void NodeSteps::Failed(const ResourceRef& resource, const ObjectMeta& object, const std::string& state, int retries,
                       bool permanent, const std::string& message) {
  gate_.Failed(resource, object, state, retries, permanent, message);
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok() || !*loaded || (*loaded)->state != state || (*loaded)->step == kFailedStep) return;
  NodeStepsRecord rec = **loaded;
  if (!permanent && retries < policy_.failure_after_retries) {
    // A verify that failed is the node failing the state: the retry runs the hook again.
    if (rec.step == kVerifying) (void)Save(rec, kRunning);
    return;
  }
  Log(LogLevel::kWarn, "node steps failed",
      {{"object", object.Key()}, {"uid", object.uid}, {"step", rec.step}, {"retries", retries},
       {"next", OnFailureName(policy_.on_failure)}});
  ApplyOnFailure(rec, object, message);
}

void NodeSteps::Gone(const ObjectMeta& object) {
  gate_.Gone(object);
  {
    std::lock_guard<std::mutex> lock(mu_);
    drains_.erase(object.uid);
  }
  Result<std::optional<NodeStepsRecord>> loaded = store_.GetNodeSteps(object.uid);
  if (!loaded.ok() || !*loaded) return;
  NodeStepsRecord rec = **loaded;
  if (!GiveBack(rec, object, "the object was deleted")) {
    Log(LogLevel::kError, "node left cordoned",
        {{"object", object.Key()}, {"uid", object.uid}, {"mark", MarkKey()},
         {"next", "uncordon it by hand (kubectl uncordon) once nothing else works there"}});
  }
  (void)store_.DropNodeSteps(object.uid);
}

}  // namespace nodehook
