#include "agent/election/singleton_gate.h"

#include "agent/base/log.h"
#include "agent/election/singleton_progress.h"
#include "agent/watch/object_cache.h"

namespace nodehook {

SingletonGate::SingletonGate(const Leadership& leadership, KubeClient& client, StateStore& store, Clock& clock,
                             SingletonGateOptions options)
    : leadership_(leadership), client_(client), store_(store), clock_(clock), options_(std::move(options)) {}

bool SingletonGate::MayStart(const WatchedResource& resource, const ObjectMeta& object) const {
  // Checked against the clock right before the start: a leader paused past its renew deadline
  // must not start a hook when it resumes, before it has renewed.
  if (leadership_.TermIfMayStart()) return true;
  Log(LogLevel::kInfo, "singleton hook not started",
      {{"resource", resource.ref.Id()}, {"object", object.Key()}, {"uid", object.uid},
       {"reason", "this agent does not hold the lease (or has not renewed it within the renew deadline)"},
       {"next", "run it if this agent leads again; else the leader runs it"}});
  return false;
}

HookSpec SingletonGate::Prepare(const HookSpec& hook) const {
  HookSpec fenced = hook;
  fenced.argv.insert(fenced.argv.begin(), options_.fence.begin(), options_.fence.end());
  return fenced;
}

bool SingletonGate::StoppedByTerm(const CancelToken& stop) const {
  // A hook that failed after the term ended was most likely stopped for it (by the agent, or by
  // the fence while the agent was paused): not the hook's failure, no retry counted.
  return stop.cancelled() || !leadership_.TermIfMayStart();
}

void SingletonGate::Handled(const WatchedResource& resource, const ObjectMeta& object, const std::string& handler,
                            const std::string& target) {
  Status st = client_.Patch(ObjectRef{resource.ref, object.namespace_name, object.name}, PatchType::kMerge,
                            SingletonHandledPatch(target));
  if (st.ok()) return;
  // Never dropped silently. Nothing is lost by it: the singleton finalizer (claimed before the
  // hook) keeps the object's delete owed, and a later leader that finds no matching annotation
  // runs this hook again (at least once). A 404 means the object went without this agent's
  // knowledge (its finalizer removed by hand, or a resource without the finalizer yet).
  Log(LogLevel::kWarn, "singleton progress not written",
      {{"object", object.Key()}, {"uid", object.uid}, {"handler", handler},
       {"annotation", kSingletonHandledAnnotation}, {"error", st.ToString()},
       {"next", "keep it in this node's state; a later leader runs the hook again (at least once); "
                "the finalizer keeps the delete owed"}});
}

std::optional<Duration> SingletonGate::AwaitHolder(ObjectCache& cache, const std::string& uid) {
  TimePoint now = clock_.Now();
  TimePoint forget_at;
  {
    MutexLock lock(&mu_);
    forget_at = gone_since_.emplace(uid, now).first->second + options_.delete_window;
  }
  if (now < forget_at) return forget_at - now;
  // The leader handled it long ago (or nobody will): this agent forgets it too.
  Status forgotten = store_.Forget(uid);
  if (!forgotten.ok()) return options_.store_retry;
  cache.EraseIfGone(uid);
  Forgotten(uid);
  return std::nullopt;
}

void SingletonGate::Forgotten(const std::string& uid) {
  MutexLock lock(&mu_);
  gone_since_.erase(uid);
}

}  // namespace nodehook
