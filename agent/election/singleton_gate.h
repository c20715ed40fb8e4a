// SingletonGate: the HookGate of a cluster-singleton resource. Hooks start only while this agent
// holds the Lease (Leadership) and stop when the term ends; each runs behind a fence (`nodehook
// fence FILE MS --`, fence_command.h), so it also stops when the agent cannot stop it. A handled
// create or update writes its digest to the object (singleton_progress.h) for the next leader,
// so it adopts the state instead of running the hook again; a failed write is logged, never
// fatal: the hook then runs again on a later leader.
// Whether a delete is owed is not decided here: the singleton finalizer (finalizers/
// singleton_finalizer.h) keeps every object some leader started a hook of until its delete hook
// succeeded. Outside a term, this agent keeps the local state of a deleted object for
// `delete_window` only as memory (objects handled before the finalizer existed rely on it).
// Thread-safe. Borrows the leadership, client and store, which must outlive it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/base/mutex.h"
#include "agent/base/thread_annotations.h"
#include "agent/election/leadership.h"
#include "agent/hooks/hook_gate.h"
#include "agent/kube/client/kube_client.h"
#include "storage/state_store.h"

namespace nodehook {

struct SingletonGateOptions {
  std::vector<std::string> fence;  // put in front of each hook's argv; {} = none
  Duration delete_window{0};
  Duration store_retry{5000};
};

class SingletonGate final : public HookGate {
 public:
  SingletonGate(const Leadership& leadership, KubeClient& client, StateStore& store, Clock& clock,
                SingletonGateOptions options);

  bool gated() const override { return true; }
  std::shared_ptr<const CancelToken> Term() const override { return leadership_.TermIfMayStart(); }
  bool MayStart(const WatchedResource& resource, const ObjectMeta& object) const override;
  HookSpec Prepare(const HookSpec& hook) const override;
  bool StoppedByTerm(const CancelToken& stop) const override;
  void Handled(const WatchedResource& resource, const ObjectMeta& object, const std::string& handler,
               const std::string& target) override;
  std::optional<Duration> AwaitHolder(ObjectCache& cache, const std::string& uid) override;
  void Forgotten(const std::string& uid) override;

 private:
  const Leadership& leadership_;
  KubeClient& client_;
  StateStore& store_;
  Clock& clock_;
  const SingletonGateOptions options_;
  Mutex mu_;
  std::map<std::string, TimePoint> gone_since_ GUARDED_BY(mu_);  // when a non-leader first saw it gone
};

}  // namespace nodehook
