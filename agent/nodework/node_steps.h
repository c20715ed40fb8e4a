// NodeSteps: a rollout's node steps around its gated hook, composed over the RolloutGate
// (rollout/node/rollout_gate.h) for a resource whose policy cordons, drains or reboots (chosen once at start).
// Inside the gate, for each object state, in order:
//   cordoning    the Node cordoned under this rollout's mark (node_cordon.h), unless someone else
//                cordoned it: then it stays theirs, never uncordoned by us
//   draining     the pods evicted through the Eviction API (pod_drain.h), in rounds, until none is
//                left; past drain.timeout_seconds the node fails the state
//   running      the hook (the executor runs it; retries stay inside the steps)
//   rebooting    when the hook's result file asks: the boot ID recorded, the slot held for
//                reboot.timeout_seconds, the reboot command run once; a new boot ID, matching
//                the Node's status.nodeInfo.bootID, proves it. The same boot ID (a restart or a
//                crash loop of the agent) never does; past the timeout the node fails the state.
//   verifying    the policy's verify hook
//   soaking      with a soak: the result written and the slot soaking (the gate's), the node
//                still cordoned; the uncordon falls just before the soak ends, inside the slot
//   uncordoning  the cordon given back when the state file and the Node's mark both say it is
//                ours; then (without a soak) the gate records the result and frees the slot
// (node_steps.cc: the record, the cordon and the failures; node_steps_drain.cc and
// node_steps_reboot.cc: those two steps.)
// Each step is written to the state file (storage NodeStepsRecord) before it starts, so an agent
// killed anywhere resumes the step it was in and never repeats a finished one. A node that fails
// (the drain, the reboot, or the hook out of retries) is left cordoned or uncordoned as
// on_failure says. Thread-safe; borrows everything it is given.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/config/config.h"
#include "agent/events/event_recorder.h"
#include "agent/nodework/node_api.h"
#include "agent/nodework/node_cordon.h"
#include "agent/nodework/pod_drain.h"
#include "agent/process/action_runner.h"
#include "agent/reconcile/rollout_steps.h"
#include "storage/state_store.h"

namespace nodehook {

// The record's step by the one name table (rollout/rules/node_step.h); kWaiting when it has none
// (or one this version does not know).
NodeStep StepOf(const NodeStepsRecord& rec);

struct NodeStepsOptions {
  std::string rid;                       // the rollout's id (RolloutIdOf): names its cordon mark
  std::string self_pod;                  // "namespace/name" of the agent's pod; never evicted
  std::string boot_id_file = "/proc/sys/kernel/random/boot_id";
  Duration poll{std::chrono::seconds(2)};  // how soon a step that waits looks again
  Duration reboot_command_timeout{std::chrono::seconds(60)};
};

class NodeSteps final : public RolloutSteps {
 public:
  // `clock` is the wall clock: a step's start must mean the same after a reboot.
  NodeSteps(const WatchedResource& resource, RolloutSteps& gate, NodeApi& api, StateStore& store,
            ActionRunner& runner, Clock& clock, EventRecorder& events, NodeStepsOptions options);

  const std::vector<std::string>& Reasons() const override { return gate_.Reasons(); }
  GateEntry Admit(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) override;
  // The steps are the outermost: the executor's Admit already goes on with work under way.
  GateEntry GoOn(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) override {
    return Admit(object, state, facts);
  }
  HookSpec Prepare(const HookSpec& hook) const override { return gate_.Prepare(hook); }
  bool LostSlot(const ObjectMeta& object) const override { return gate_.LostSlot(object); }
  std::optional<Duration> AfterHook(const ObjectMeta& object, const std::string& state, bool reboot_asked) override;
  const HookSpec* Verify() const override { return gate_.Verify(); }
  void Verifying(const ObjectMeta& object, const std::string& state) override { gate_.Verifying(object, state); }
  bool ShowStep(const ObjectMeta& object, NodeStep step, const std::string& detail, Duration hold) override {
    return gate_.ShowStep(object, step, detail, hold);
  }
  std::optional<Duration> Succeeded(const ResourceRef& resource, const ObjectMeta& object, const std::string& state,
                                    const std::string& message) override;
  void Failed(const ResourceRef& resource, const ObjectMeta& object, const std::string& state, int retries,
              bool permanent, const std::string& message) override;
  void Gone(const ObjectMeta& object) override;

  // The annotation that marks a Node cordoned by this rollout for an object, and its value for an
  // object state: {"object", "uid", "state"}, and "failed" (why) once the node failed the state
  // and is kept cordoned, which an uninstall leaves for a person (release_command.h).
  std::string MarkKey(const std::string& uid) const;
  static std::string MarkValue(const ObjectMeta& object, const std::string& state, const std::string& failed = "");

 private:
  GateEntry Cordon(NodeStepsRecord& rec, const ObjectMeta& object);
  // Logs and posts (on the object and on the Node) the stale marks the cordon removed.
  void ReportStaleMarks(const ObjectMeta& object, const CordonTaken& taken);
  GateEntry Drain(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state);  // node_steps_drain.cc
  GateEntry CheckReboot(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state);  // node_steps_reboot.cc
  // Holds the slot for `left`, records the start, runs the reboot command; each only after the
  // one before it succeeded (else the next look tries again).
  void StartReboot(NodeStepsRecord& rec, const ObjectMeta& object, Duration left);  // node_steps_reboot.cc
  // The node failed the state in a step of its own: on_failure applied, the gate told.
  GateEntry Fail(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& state, const std::string& why);
  // on_failure for a node that failed the state; the record kept while the Node stays ours.
  void ApplyOnFailure(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& why);
  // Ends steps that can no longer go on (the object changed, the operator stopped the nodes): the
  // cordon given back and the record dropped; false: the cordon could not be given back yet.
  bool EndSteps(NodeStepsRecord& rec, const ObjectMeta& object, const std::string& why);
  // Gives the cordon back when the record and the Node both say it is ours; false: try again.
  bool GiveBack(NodeStepsRecord& rec, const ObjectMeta& object, const char* why);
  Status Save(NodeStepsRecord& rec, NodeStep step);
  // A look at a timed step (drain, reboot): adds the time since the last look, at most the wait
  // that look asked for plus one poll, and returns the time counted against the step's timeout.
  // Time the agent was away, or the node waited outside its slot, is not counted.
  Duration Look(NodeStepsRecord& rec);
  // The step waits `wait` before its next look: recorded (a lost write only counts less).
  GateEntry WaitFor(NodeStepsRecord& rec, Duration wait);
  int64_t NowMs() const;
  // How long until the uncordon of a node soaking since the record's step began.
  Duration SoakLeft(const NodeStepsRecord& rec) const;
  PodDrain& DrainOf(const NodeStepsRecord& rec);
  void ForgetDrain(const std::string& uid);
  // Logs and posts (on the object and on the Node) the drain's new blockers: "namespace/name: why".
  void ReportBlocked(const ObjectMeta& object, const std::vector<std::string>& blocked);  // node_steps_drain.cc

  const WatchedResource& resource_;
  const RolloutPolicy& policy_;
  RolloutSteps& gate_;
  NodeApi& api_;
  StateStore& store_;
  ActionRunner& runner_;
  Clock& clock_;
  EventRecorder& events_;
  const NodeStepsOptions options_;

  Mutex mu_;
  std::map<std::string, std::unique_ptr<PodDrain>> drains_ GUARDED_BY(mu_);  // by object uid
};

}  // namespace nodehook
