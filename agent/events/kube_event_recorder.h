// KubeEventRecorder: EventRecorder that POSTs events.k8s.io/v1 Events through KubeClient::Create.
//
// Each Event is named "<object name>.<hex nanoseconds>" like client-go's (the strict
// events.k8s.io validation refuses a generateName ending in "."); a clash is retried once with a
// new name. It names this node as reportingInstance ("nodehook.io/agent" is the controller), the
// handler as action, and the object as `regarding`. At most one Event per (object uid, handler,
// reason) is posted per `min_interval`, so a thousand nodes reporting the same failure post at most
// a thousand Events per interval, never one per retry. The rate limiter remembers at most
// `max_remembered` keys, forgetting the oldest first.
//
// A failing handler (HandlerFailing) is reported on its failures number 1, 2, 4, 8, ... only
// (then rate-limited as above): the count lives in the durable progress, so this survives
// restarts, needs no memory here, and a hook failing every second for a day posts a handful of
// Events. A new Event each time rather than a series PATCH keeps the role at `events create`.
// A handler that had failed and then succeeds posts HandlerRecovered.
//
// Callers never wait for the API: events go to a bounded queue that one background thread posts
// from; when the queue is full the event is dropped and counted. The object's kind (needed in
// `regarding` for `kubectl describe`) is not in ObjectMeta: the poster GETs the object once per
// resource to learn it and caches it; if that fails the Event is posted without a kind.
//
// Metrics: nodehook_events_posted_total, nodehook_events_dropped_total{reason=rate_limited|
// aggregated|queue_full|post_failed}.
//
// Thread-safe. Does not own the client, clock or metrics, which must outlive it. The destructor
// waits for a post in flight (bounded by the transport's timeouts) and drops what is still queued.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "agent/base/clock.h"
#include "agent/base/metrics.h"
#include "agent/base/mutex.h"
#include "agent/events/event_recorder.h"
#include "agent/kube/client/kube_client.h"
#include "agent/kube/transport/log_limiter.h"

namespace nodehook {

struct EventRecorderOptions {
  std::string node_name;                            // reportingInstance
  Duration min_interval = std::chrono::minutes(5);  // per (object uid, handler, type)
  size_t queue_capacity = 64;
  size_t max_remembered = 10'000;  // rate-limiter keys kept
};

// Everything one Event says. Exposed with EventBody() for tests.
struct EventSpec {
  std::string name;  // metadata.name, see EventName()
  ResourceRef resource;
  ObjectMeta object;
  std::string kind;  // "" when unknown
  std::string handler;
  bool warning = false;
  std::string note;
  TimePoint time;
  std::string reason = "";  // "" = HandlerFailed or HandlerSucceeded, by `warning`
  bool once = false;        // `name` is fixed: an Event of that name already there means posted
};

// A hook's message as one short line for an Event's note: control characters escaped, line
// breaks as spaces, at most about `limit` bytes (its start and its end, which names the error).
std::string NoteText(const std::string& message, size_t limit = 300);
// Whether failure number `attempt` of a handler is reported: 1, 2, 4, 8, ...
bool ReportsFailure(int attempt);

// The events.k8s.io/v1 Event as JSON. Fields the API server bounds are cut to fit: note 1 KiB,
// action and reportingInstance 128 bytes.
std::string EventBody(const EventSpec& event, const std::string& node_name);
// "<object name>.<unique in hex>", the object name cut so the whole stays a valid DNS subdomain.
std::string EventName(const std::string& object_name, uint64_t unique);

class KubeEventRecorder final : public EventRecorder {
 public:
  KubeEventRecorder(KubeClient& client, Clock& clock, EventRecorderOptions options,
                    Metrics& metrics = DefaultMetrics());
  ~KubeEventRecorder() override;

  KubeEventRecorder(const KubeEventRecorder&) = delete;
  KubeEventRecorder& operator=(const KubeEventRecorder&) = delete;

  void PermanentFailure(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler,
                        const std::string& message) override;
  void Succeeded(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler) override;
  // Reason HandlerFailing, on failures 1, 2, 4, 8, ... (ReportsFailure).
  void Failing(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler, int attempt,
               const std::string& message) override;
  // Reason HandlerRecovered, type Normal.
  void Recovered(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler,
                 int failures) override;
  // Reason ObjectQuarantined, action "quarantine".
  void Quarantined(const ResourceRef& resource, const ObjectMeta& object, const std::string& message) override;
  // An Event that is not a hook's outcome (e.g. about the node's state file): `reason`, type and
  // note as given, `action` as its action. Rate-limited like the others.
  void Report(const ResourceRef& resource, const ObjectMeta& object, const std::string& action,
              const std::string& reason, bool warning, const std::string& note);
  // Reason FinalizerReleased, the finalizer as action, type Warning.
  void RolloutReached(const ResourceRef& resource, const ObjectMeta& object, const std::string& reason,
                      const std::string& state, bool warning, const std::string& note) override;
  void FinalizerReleased(const ResourceRef& resource, const ObjectMeta& object, const std::string& finalizer,
                         const std::string& reason) override;
  // The reason given, action "rollout"; the note names this node.
  void NodeStep(const ResourceRef& resource, const ObjectMeta& object, const std::string& reason, bool warning,
                const std::string& note) override;
  // On the Node (in namespace "default", as the kubelet's), action "rollout".
  void NodeEvent(const ObjectMeta& node, const std::string& reason, bool warning, const std::string& note) override;
  // Reason NodeOutputsRefused, the handler as action, type Warning.
  void OutputsRefused(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler,
                      const std::string& message) override;

  // Blocks until nothing is queued or being posted. For tests and orderly shutdown.
  void WaitIdle();

 private:
  void Enqueue(EventSpec event);
  void RememberLocked(const std::string& key, TimePoint now) REQUIRES(mu_);
  void Run();
  void Post(EventSpec& event);  // poster thread only
  std::string KindOf(const EventSpec& event);  // poster thread only

  KubeClient& client_;
  Clock& clock_;
  const EventRecorderOptions options_;
  Counter& posted_;
  Counter& rate_limited_;
  Counter& aggregated_;
  Counter& queue_full_;
  Counter& post_failed_;
  LogLimiter error_log_;

  Mutex mu_;
  std::condition_variable cv_;
  std::deque<EventSpec> queue_ GUARDED_BY(mu_);
  bool posting_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::unordered_map<std::string, TimePoint> last_posted_ GUARDED_BY(mu_);  // key -> when
  std::deque<std::pair<TimePoint, std::string>> posted_order_ GUARDED_BY(mu_);  // oldest first
  std::map<std::string, std::string> kinds_;                     // poster thread only; by ResourceRef::Id()
  std::mt19937_64 name_rng_{std::random_device{}()};            // poster thread only
  std::thread poster_;                                           // last: started after the rest
};

}  // namespace nodehook
