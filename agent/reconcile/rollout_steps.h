// RolloutSteps: a fleet rollout's side of a plan (plan.h), as the executor calls it. Chosen once
// per resource at start: RolloutGate (rollout/) for resources with a rollout policy, wrapped in
// NodeSteps (nodework/) when the policy cordons, drains or reboots; NoRollout for the rest, whose
// plans never hold the rollout steps (Decide plans them exactly for the reasons in Reasons()).
// `state` is the object state the handler works towards (Plan::target).
// Implementations are thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_types.h"
#include "agent/object/object_facts.h"
#include "agent/rollout/rules/node_step.h"

namespace nodehook {

// Where a node inside the gate takes up its work on a state: at the hook, or past it (its node
// steps recorded that the hook finished before a reboot, or that it was verified).
enum class ResumeAt { kHook, kVerify, kFinish };

// What the gate says before the hook.
struct GateEntry {
  enum class Kind { kInside, kWait, kFailed };
  Kind kind = Kind::kInside;
  Duration wait{0};                  // kWait: when to look again
  std::string failure;               // kFailed: why this node failed the state before its hook
  ResumeAt resume = ResumeAt::kHook; // kInside

  static GateEntry Inside(ResumeAt at = ResumeAt::kHook) { return GateEntry{Kind::kInside, Duration{0}, "", at}; }
  static GateEntry Wait(Duration d) { return GateEntry{Kind::kWait, d, "", ResumeAt::kHook}; }
  // The node counts as failed for the state already (the steps told the rollout).
  static GateEntry Failed(std::string why) { return GateEntry{Kind::kFailed, Duration{0}, std::move(why), ResumeAt::kHook}; }
};


class RolloutSteps {
 public:
  virtual ~RolloutSteps() = default;
  // The reasons whose hooks pass the gate; empty: no rollout.
  virtual const std::vector<std::string>& Reasons() const = 0;
  // Before the hook: inside once this node holds a slot for `state` (and its node steps before
  // the hook are done); else when to look again (the wait is logged and counted), or failed.
  virtual GateEntry Admit(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) = 0;
  // As Admit, for work on `state` that started and holds the node (node steps under way): it goes
  // on, inside its slot or the next free one, whatever pauses, holds, halts, windows and canaries
  // say, since they stop new work only. The node steps call it; the executor calls Admit.
  virtual GateEntry GoOn(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) = 0;
  // The hook's command as it runs inside the slot: behind a fence that stops it when the slot
  // can no longer be renewed.
  virtual HookSpec Prepare(const HookSpec& hook) const = 0;
  // A run that did not finish: whether losing the slot (not the hook) stopped it.
  virtual bool LostSlot(const ObjectMeta& object) const = 0;
  // After the hook's success: nullopt to go on to verify; else the node reboots (the hook asked
  // for it) and the plan stops, to look again then.
  virtual std::optional<Duration> AfterHook(const ObjectMeta& object, const std::string& state,
                                            bool reboot_asked) = 0;
  // The verify hook, run after the handler's success; null when the policy has none.
  virtual const HookSpec* Verify() const = 0;
  virtual void Verifying(const ObjectMeta& object, const std::string& state) = 0;
  // Shows the step this node is in on its slot; `hold` > 0: the slot is held that long without
  // renewals (a reboot), instead of renewed by this process. False: the slot does not show it
  // (not held for the object, or the write failed; shown at a later call), so no hold either.
  virtual bool ShowStep(const ObjectMeta& object, NodeStep step, const std::string& detail, Duration hold) = 0;
  // Success (and verified): the node's result is recorded, its slot soaks or is released;
  // nullopt once done, else when to try again (the node could not be given back yet).
  virtual std::optional<Duration> Succeeded(const ResourceRef& resource, const ObjectMeta& object,
                                            const std::string& state, const std::string& message) = 0;
  // An attempt failed (`retries` failures so far): a permanent failure, or failure_after_retries
  // of them, make the node count as failed for `state`, which frees its slot.
  virtual void Failed(const ResourceRef& resource, const ObjectMeta& object, const std::string& state, int retries,
                      bool permanent, const std::string& message) = 0;
  // The object is gone (its state forgotten): a slot this node holds for it is released.
  virtual void Gone(const ObjectMeta& object) = 0;
};

// For resources without a rollout policy: no gated reasons; the executor's failure report reaches
// Failed(), which does nothing, and the other steps are never planned.
class NoRollout final : public RolloutSteps {
 public:
  const std::vector<std::string>& Reasons() const override { return none_; }
  GateEntry Admit(const ObjectMeta&, const std::string&, const ObjectFacts*) override { return GateEntry::Inside(); }
  GateEntry GoOn(const ObjectMeta&, const std::string&, const ObjectFacts*) override { return GateEntry::Inside(); }
  HookSpec Prepare(const HookSpec& hook) const override { return hook; }
  bool LostSlot(const ObjectMeta&) const override { return false; }
  std::optional<Duration> AfterHook(const ObjectMeta&, const std::string&, bool) override { return std::nullopt; }
  const HookSpec* Verify() const override { return nullptr; }
  void Verifying(const ObjectMeta&, const std::string&) override {}
  bool ShowStep(const ObjectMeta&, NodeStep, const std::string&, Duration) override { return true; }
  std::optional<Duration> Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&,
                                    const std::string&) override {
    return std::nullopt;
  }
  void Failed(const ResourceRef&, const ObjectMeta&, const std::string&, int, bool, const std::string&) override {}
  void Gone(const ObjectMeta&) override {}

 private:
  const std::vector<std::string> none_{};
};

// The one NoRollout, for contexts built without a rollout.
RolloutSteps& NoRolloutSteps();

}  // namespace nodehook
