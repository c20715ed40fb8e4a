#include "agent/periodic/snapshot_runner.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/object/essence.h"  // EssenceDigest
#include "agent/hooks/hook_attempt.h"
#include "agent/hooks/hook_call.h"
#include "agent/periodic/live_objects.h"

namespace nodehook {
namespace {

struct Snapshot {
  std::string json;    // the objects as one JSON array, byte for byte as the API server sent them
  std::string digest;  // of every uid and essence
  size_t count = 0;
};

Snapshot Take(const WatchedResource& resource, const ObjectCache& cache, const NodeTargeting& targeting) {
  Snapshot s;
  std::string essences;
  s.json = "[";
  for (const CachedObject& entry : LiveObjects(resource, cache, targeting)) {
    const KubeObject& object = *entry.object;
    if (s.count++ > 0) s.json += ",";
    s.json += object.json;
    // An unreadable essence still counts by its bytes: a change to it must run the hook.
    essences += object.meta.uid + "\n" + (entry.facts->readable.ok() ? entry.facts->essence : object.json) + "\n";
  }
  s.json += "]";
  s.digest = EssenceDigest(essences);
  return s;
}

// Snapshot Events go on this node's Node object: the run is about the node, not one object.
const ResourceRef kNodes{"", "v1", "nodes", "", ""};

// A changed set of objects starts afresh (Run), so every wait also ends at a change.
const NextWords kSnapshotNext{"give up until an object of the resource changes", ", or on a change",
                              ", or on a change"};

}  // namespace

SnapshotRunner::SnapshotRunner(ScheduleStore& schedule, ActionRunner& runner, RetryPolicy& policy, Clock& clock,
                               SnapshotRunnerOptions options)
    : schedule_(schedule),
      runner_(runner),
      policy_(policy),
      clock_(clock),
      options_(std::move(options)),
      scratch_(options_.work_dir),
      targeting_(options_.targeting ? *options_.targeting : EveryNodeTargeting()),
      reporter_(options_.metrics, options_.events ? *options_.events : NoEvents()) {}

std::optional<Duration> SnapshotRunner::Run(const WatchedResource& resource, const ObjectCache& cache,
                                            bool first_since_start, const CancelToken& stop) {
  const HookSpec& hook = resource.hooks.at(kReasonSnapshot);
  const std::string resource_id = resource.ref.Id();
  const TimePoint now = clock_.Now();
  auto stored = schedule_.GetSnapshot(resource_id);
  if (!stored.ok()) {
    Log(LogLevel::kError, "state store read failed",
        {{"resource", resource_id}, {"handler", kReasonSnapshot}, {"error", stored.status().ToString()},
         {"next", "try again in " + SecondsText(policy_.StoreRetryDelay())}});
    return policy_.StoreRetryDelay();
  }
  Snapshot snapshot = Take(resource, cache, targeting_);
  SnapshotRecord progress;
  progress.resource = resource_id;
  if (*stored) progress = **stored;
  const bool forced = first_since_start && hook.run_on_start;
  if (progress.done_digest == snapshot.digest && !forced) {
    if (!progress.target.empty()) {  // back to the set that succeeded: the failing attempt is moot
      progress.target.clear();
      progress.retries = 0;
      progress.last_outcome = "done";
      Status cleared = schedule_.PutSnapshot(progress);
      if (!cleared.ok()) return policy_.StoreRetryDelay();
    }
    Log(LogLevel::kDebug, "snapshot unchanged",
        {{"resource", resource_id}, {"handler", kReasonSnapshot}, {"objects", snapshot.count},
         {"next", "wait for a change"}});
    return std::nullopt;
  }
  if (progress.target == snapshot.digest) {
    if (progress.last_outcome == kOutcomePermanentFailure && !forced) return std::nullopt;
    if (FromMillis(progress.next_attempt_ms) > now) return FromMillis(progress.next_attempt_ms) - now;
  } else {
    progress.target = snapshot.digest;
    progress.retries = 0;
    progress.first_start_ms = ToMillis(now);
  }
  const int earlier_failures = progress.retries;

  ObjectMeta none{"", resource.ref.namespace_name, "", "", false};
  HookInput input{kReasonSnapshot, options_.node_name, resource_id, none, "", snapshot.json, "[]",
                  progress.retries, ""};
  Log(LogLevel::kInfo, "snapshot hook started",
      {{"resource", resource_id}, {"handler", kReasonSnapshot}, {"objects", snapshot.count},
       {"retry", progress.retries}, {"next", "wait for the hook"}});
  HookOutcome outcome = RunHook(runner_, hook, input, scratch_, stop);
  if (outcome.verdict == HookVerdict::kCancelled) return std::nullopt;  // not done: runs after the restart

  std::optional<NextAttempt> after;  // none when done
  std::optional<Duration> again;
  if (outcome.verdict == HookVerdict::kDone) {
    progress.done_digest = snapshot.digest;
    progress.target.clear();
    progress.retries = 0;
    progress.next_attempt_ms = 0;
    progress.last_outcome = "done";
    progress.last_message = outcome.message;
  } else {
    after = DecideNextAttempt(policy_, hook, outcome, now, progress);
    if (!after->permanent) again = std::max(FromMillis(progress.next_attempt_ms) - clock_.Now(), Duration::zero());
  }
  Status saved = schedule_.PutSnapshot(progress);
  if (!saved.ok()) {
    Log(LogLevel::kError, "state store write failed",
        {{"resource", resource_id}, {"handler", kReasonSnapshot}, {"error", saved.ToString()},
         {"next", "run the snapshot hook again in " + SecondsText(policy_.StoreRetryDelay())}});
    return policy_.StoreRetryDelay();
  }
  Report(resource, progress, outcome, after, again, earlier_failures);
  return again;
}

void SnapshotRunner::Report(const WatchedResource& resource, const SnapshotRecord& progress,
                            const HookOutcome& outcome, const std::optional<NextAttempt>& after,
                            std::optional<Duration> again, int earlier_failures) {
  ObjectMeta node{"", "", options_.node_name, "", false};
  ReportSubject subject{kNodes, node, std::string(kReasonSnapshot) + " " + resource.ref.Id(), progress.resource,
                        kReasonSnapshot, {{"resource", progress.resource}, {"handler", kReasonSnapshot}},
                        resource.success_events};
  if (!after) {
    reporter_.Succeeded(subject, kSnapshotWords, outcome, earlier_failures,
                        {{"outcome", progress.last_outcome}, {"message", outcome.LogMessage()},
                         {"retries", progress.retries},
                         {"next", "idle until an object of the resource changes"}});
    return;
  }
  reporter_.Unfinished(subject, kSnapshotWords, outcome, *after,
                       NextText(kSnapshotNext, *after, outcome, again.value_or(Duration::zero())));
}

}  // namespace nodehook
