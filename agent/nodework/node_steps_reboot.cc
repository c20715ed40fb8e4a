// NodeSteps: the reboot step: recorded, run once, proven by a new boot ID the Node reports too.
#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/nodework/boot_id.h"
#include "agent/nodework/node_steps.h"

namespace nodehook {

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
    (void)Save(rec, NodeStep::kVerifying);  // not saved: a restart runs the hook again, as without steps
    return gate_.AfterHook(object, state, reboot_asked);  // a reboot asked for is logged there
  }
  Result<std::string> boot = ReadBootId(options_.boot_id_file);
  rec.boot_id = boot.ok() ? *boot : "";
  rec.reboot_started = false;
  rec.message = boot.ok() ? "" : boot.status().message();
  // Recorded before anything else: from here on a restart waits for a new boot ID (or the
  // timeout) instead of running the hook again.
  Status saved = Save(rec, NodeStep::kRebooting);
  if (!saved.ok()) {
    Log(LogLevel::kError, "node steps not saved",
        {{"object", object.Key()}, {"uid", object.uid}, {"step", NodeStepName(NodeStep::kRebooting)}, {"error", saved.ToString()},
         {"next", "no reboot without its record; the hook runs again in " + SecondsText(options_.poll)}});
    return options_.poll;
  }
  if (!boot.ok()) {
    Log(LogLevel::kError, "node reboot not started",
        {{"object", object.Key()}, {"uid", object.uid}, {"error", boot.status().ToString()},
         {"next", "no reboot can be proven: the node fails the state after " + SecondsText(policy_.reboot->timeout)}});
    gate_.ShowStep(object, NodeStep::kRebooting, "waiting for a new boot ID", policy_.reboot->timeout);
    return options_.poll;
  }
  StartReboot(rec, object, policy_.reboot->timeout);
  return options_.poll;
}

void NodeSteps::StartReboot(NodeStepsRecord& rec, const ObjectMeta& object, Duration left) {
  // The slot first: held through the reboot (not renewed while the node is down), or no reboot.
  if (!gate_.ShowStep(object, NodeStep::kRebooting, "waiting for a new boot ID", left)) {
    Log(LogLevel::kWarn, "node reboot waits",
        {{"object", object.Key()}, {"uid", object.uid}, {"reason", "the slot could not be held through the reboot"},
         {"next", "try again in " + SecondsText(options_.poll)}});
    return;
  }
  // Then the record that the command ran, so that it never runs twice.
  rec.reboot_started = true;
  Status saved = Save(rec, NodeStep::kRebooting);
  if (!saved.ok()) {
    rec.reboot_started = false;
    Log(LogLevel::kError, "node steps not saved",
        {{"object", object.Key()}, {"uid", object.uid}, {"step", NodeStepName(NodeStep::kRebooting)}, {"error", saved.ToString()},
         {"next", "start the reboot in " + SecondsText(options_.poll)}});
    return;
  }
  Log(LogLevel::kInfo, "node reboot started",
      {{"object", object.Key()}, {"uid", object.uid}, {"boot_id", rec.boot_id},
       {"next", "wait up to " + SecondsText(left) + " for a new boot ID"}});
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
}

GateEntry NodeSteps::CheckReboot(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state) {
  if (!policy_.reboot) {
    // The config no longer reboots (changed during the reboot): nothing to prove; verify next.
    Log(LogLevel::kWarn, "node reboot dropped",
        {{"object", object.Key()}, {"uid", object.uid}, {"reason", "the rollout no longer reboots"},
         {"next", "verify, then give the node back"}});
    return Save(rec, NodeStep::kVerifying).ok() ? GateEntry::Inside(ResumeAt::kVerify) : GateEntry::Wait(options_.poll);
  }
  const Duration spent = Look(rec);
  const Duration timeout = policy_.reboot->timeout;
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
      Status saved = Save(rec, NodeStep::kVerifying);
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
  if (!rec.reboot_started && boot.ok()) {
    StartReboot(rec, object, timeout - spent);  // recorded, but not started yet
  } else {
    gate_.ShowStep(object, NodeStep::kRebooting, "waiting for a new boot ID", timeout - spent);
  }
  return WaitFor(rec, std::min(options_.poll, timeout - spent));
}

}  // namespace nodehook
