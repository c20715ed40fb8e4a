#include "agent/core/snapshot_runner.h"

#include "agent/base/duration_math.h"
#include "agent/base/log.h"
#include "agent/core/essence.h"
#include "agent/core/hook_call.h"
#include "agent/core/live_objects.h"

namespace nodehook {
namespace {

struct Snapshot {
  std::string json;    // the objects as one JSON array, byte for byte as the API server sent them
  std::string digest;  // of every uid and essence
  size_t count = 0;
};

Snapshot Take(const WatchedResource& resource, const ObjectCache& cache, const NodeTargeting* targeting) {
  Snapshot s;
  std::string essences;
  s.json = "[";
  for (const ObjectPtr& object : LiveObjects(resource, cache, targeting)) {
    if (s.count++ > 0) s.json += ",";
    s.json += object->json;
    auto essence = ComputeEssence(object->json, resource.ignored_paths);
    // An unreadable essence still counts by its bytes: a change to it must run the hook.
    essences += object->meta.uid + "\n" + (essence.ok() ? *essence : object->json) + "\n";
  }
  s.json += "]";
  s.digest = EssenceDigest(essences);
  return s;
}

// Snapshot Events go on this node's Node object: the run is about the node, not one object.
const ResourceRef kNodes{"", "v1", "nodes", "", ""};

}  // namespace

SnapshotRunner::SnapshotRunner(ScheduleStore& schedule, ActionRunner& runner, RetryPolicy& policy, Clock& clock,
                               SnapshotRunnerOptions options)
    : schedule_(schedule),
      runner_(runner),
      policy_(policy),
      clock_(clock),
      options_(std::move(options)),
      scratch_(options_.work_dir),
      hook_metrics_(options_.metrics) {}

std::optional<Duration> SnapshotRunner::Run(const WatchedResource& resource, const ObjectCache& cache,
                                            bool first_since_start, const CancelToken& stop) {
  const HookSpec& hook = resource.hooks.at(kReasonSnapshot);
  const std::string resource_id = resource.ref.Id();
  const TimePoint now = clock_.Now();
  auto stored = schedule_.GetSnapshot(resource_id);
  if (!stored.ok()) {
    Log(LogLevel::kError, "state store read failed",
        {{"resource", resource_id}, {"handler", kReasonSnapshot}, {"error", stored.status().ToString()},
         {"next", "try again in " + SecondsText(options_.store_retry)}});
    return options_.store_retry;
  }
  Snapshot snapshot = Take(resource, cache, options_.targeting);
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
      if (!cleared.ok()) return options_.store_retry;
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

  std::optional<Duration> again;
  bool permanent = false;
  progress.last_message = outcome.message;
  if (outcome.verdict == HookVerdict::kDone) {
    progress.done_digest = snapshot.digest;
    progress.target.clear();
    progress.retries = 0;
    progress.next_attempt_ms = 0;
    progress.last_outcome = "done";
  } else {
    NextAttempt after =
        AfterUnfinishedRun(policy_, hook, outcome, progress.retries, FromMillis(progress.first_start_ms));
    permanent = after.permanent;
    progress.retries = after.retries;
    progress.last_outcome = after.outcome;
    progress.next_attempt_ms = permanent ? 0 : ToMillis(now + after.delay);
    if (!permanent) again = std::max(FromMillis(progress.next_attempt_ms) - clock_.Now(), Duration::zero());
  }
  hook_metrics_.Ran(resource_id, kReasonSnapshot, outcome, permanent);
  Status saved = schedule_.PutSnapshot(progress);
  if (!saved.ok()) {
    Log(LogLevel::kError, "state store write failed",
        {{"resource", resource_id}, {"handler", kReasonSnapshot}, {"error", saved.ToString()},
         {"next", "run the snapshot hook again in " + SecondsText(options_.store_retry)}});
    return options_.store_retry;
  }
  Report(resource, progress, outcome, again, earlier_failures);
  return again;
}

void SnapshotRunner::Report(const WatchedResource& resource, const SnapshotRecord& progress,
                            const HookOutcome& outcome, std::optional<Duration> again, int earlier_failures) {
  const bool permanent = progress.last_outcome == kOutcomePermanentFailure;
  const bool done = outcome.verdict == HookVerdict::kDone;
  const bool in_progress = outcome.verdict == HookVerdict::kInProgress;
  std::string next = done ? "idle until an object of the resource changes"
                     : permanent ? "give up until an object of the resource changes"
                                 : (in_progress ? "run again in " : "retry in ") +
                                       SecondsText(again.value_or(Duration::zero())) + ", or on a change";
  Log(done || in_progress ? LogLevel::kInfo : permanent ? LogLevel::kError : LogLevel::kWarn,
      done ? "snapshot hook succeeded" : in_progress ? "snapshot hook in progress"
                                       : permanent ? "snapshot hook failed permanently" : "snapshot hook failed",
      {{"resource", progress.resource}, {"handler", kReasonSnapshot}, {"outcome", progress.last_outcome},
       {"message", outcome.LogMessage()}, {"retries", progress.retries}, {"next", next}});
  if (!options_.events) return;
  ObjectMeta node{"", "", options_.node_name, "", false};
  std::string handler = std::string(kReasonSnapshot) + " " + resource.ref.Id();
  if (done && earlier_failures > 0) options_.events->Recovered(kNodes, node, handler, earlier_failures);
  if (done && resource.success_events) options_.events->Succeeded(kNodes, node, handler);
  if (permanent) options_.events->PermanentFailure(kNodes, node, handler, outcome.message);
  if (!done && !permanent && !in_progress) options_.events->Failing(kNodes, node, handler, progress.retries, outcome.message);
}

}  // namespace nodehook
