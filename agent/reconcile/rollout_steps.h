// RolloutSteps: a fleet rollout's side of a plan (plan.h), as the executor calls it. Chosen once
// per resource at start: RolloutGate (rollout/) for resources with a rollout policy, NoRollout for
// the rest, whose plans never hold the rollout steps (Decide plans them exactly for the reasons
// in Reasons()). `state` is the object state the handler works towards (Plan::target).
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

namespace nodehook {

class RolloutSteps {
 public:
  virtual ~RolloutSteps() = default;
  // The reasons whose hooks pass the gate; empty: no rollout.
  virtual const std::vector<std::string>& Reasons() const = 0;
  // Before the hook: nullopt once this node is inside the gate for `state` (it holds a slot);
  // otherwise when to look again (the wait is logged and counted).
  virtual std::optional<Duration> Enter(const ObjectMeta& object, const std::string& state, const ObjectFacts* facts) = 0;
  // The hook's command as it runs inside the slot: behind a fence that stops it when the slot
  // can no longer be renewed.
  virtual HookSpec Prepare(const HookSpec& hook) const = 0;
  // A run that did not finish: whether losing the slot (not the hook) stopped it.
  virtual bool LostSlot(const ObjectMeta& object) const = 0;
  // The verify hook, run after the handler's success; null when the policy has none.
  virtual const HookSpec* Verify() const = 0;
  virtual void Verifying(const ObjectMeta& object, const std::string& state) = 0;
  // Success (and verified): the node's result is recorded, its slot soaks or is released.
  virtual void Succeeded(const ResourceRef& resource, const ObjectMeta& object, const std::string& state,
                         const std::string& message) = 0;
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
  std::optional<Duration> Enter(const ObjectMeta&, const std::string&, const ObjectFacts*) override {
    return std::nullopt;
  }
  HookSpec Prepare(const HookSpec& hook) const override { return hook; }
  bool LostSlot(const ObjectMeta&) const override { return false; }
  const HookSpec* Verify() const override { return nullptr; }
  void Verifying(const ObjectMeta&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Failed(const ResourceRef&, const ObjectMeta&, const std::string&, int, bool, const std::string&) override {}
  void Gone(const ObjectMeta&) override {}

 private:
  const std::vector<std::string> none_{};
};

// The one NoRollout, for contexts built without a rollout.
RolloutSteps& NoRolloutSteps();

}  // namespace nodehook
