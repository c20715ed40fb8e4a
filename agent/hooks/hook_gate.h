// HookGate: when a resource's hooks may run, and under which term. Chosen once per resource at
// start: OpenGate for every resource but the cluster-singleton ones, whose gate (election/
// singleton_gate.h) opens only while this agent holds the Lease.
// Implementations are thread-safe: workers ask concurrently.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/config/config.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

class ObjectCache;

class HookGate {
 public:
  virtual ~HookGate() = default;
  // Whether hooks here wait for a term at all (false: the gate is always open).
  virtual bool gated() const = 0;
  // The current term's token when hooks may start now; null when they may not. A hook runs
  // until the term ends (the token is cancelled) or the agent stops.
  virtual std::shared_ptr<const CancelToken> Term() const = 0;
  // Checked right before a hook starts: false (and logged) when it must not start after all.
  virtual bool MayStart(const WatchedResource& resource, const ObjectMeta& object) const = 0;
  // The hook's command as it runs under this gate (e.g. behind a fence).
  virtual HookSpec Prepare(const HookSpec& hook) const = 0;
  // A run that did not finish: whether the term's end, not the hook, stopped it.
  virtual bool StoppedByTerm(const CancelToken& stop) const = 0;
  // A create or update hook finished: remember it where the next term's holder finds it.
  virtual void Handled(const WatchedResource& resource, const ObjectMeta& object, const std::string& handler,
                       const std::string& target) = 0;
  // Outside a term, an object is gone: keep it for the next holder. Returns when to look again;
  // nullopt once it is forgotten.
  virtual std::optional<Duration> AwaitHolder(ObjectCache& cache, const std::string& uid) = 0;
  // The object's deletion was handled.
  virtual void Forgotten(const std::string& uid) = 0;
};

// Hooks may always run; they stop only with the agent.
class OpenGate final : public HookGate {
 public:
  bool gated() const override { return false; }
  std::shared_ptr<const CancelToken> Term() const override { return term_; }
  bool MayStart(const WatchedResource&, const ObjectMeta&) const override { return true; }
  HookSpec Prepare(const HookSpec& hook) const override { return hook; }
  bool StoppedByTerm(const CancelToken&) const override { return false; }
  void Handled(const WatchedResource&, const ObjectMeta&, const std::string&, const std::string&) override {}
  std::optional<Duration> AwaitHolder(ObjectCache&, const std::string&) override { return std::nullopt; }
  void Forgotten(const std::string&) override {}

 private:
  std::shared_ptr<const CancelToken> term_ = std::make_shared<const CancelToken>();  // never cancelled
};

}  // namespace nodehook
