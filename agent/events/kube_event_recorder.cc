#include "agent/events/kube_event_recorder.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <cstring>

#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/base/printable.h"
#include "agent/base/utc_time.h"

namespace nodehook {
namespace {

constexpr const char* kReportingController = "nodehook.io/agent";
// Limits the API server enforces on events.k8s.io/v1 Events.
constexpr size_t kNoteLimit = 1024;
constexpr size_t kActionLimit = 128;
constexpr size_t kInstanceLimit = 128;
constexpr size_t kNameLimit = 253;

std::string ApiVersion(const ResourceRef& r) { return r.group.empty() ? r.version : r.group + "/" + r.version; }

std::string KindInJson(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());  // heap, not stack, for nesting
  if (doc.HasParseError() || !doc.IsObject()) return "";
  auto kind = doc.FindMember("kind");
  if (kind == doc.MemberEnd() || !kind->value.IsString()) return "";
  return std::string(kind->value.GetString(), kind->value.GetStringLength());
}

}  // namespace

std::string NoteText(const std::string& message, size_t limit) {
  std::string line = EscapeForTerminal(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return Abbreviate(line, limit);
}

bool ReportsFailure(int attempt) { return attempt > 0 && (attempt & (attempt - 1)) == 0; }

std::string EventName(const std::string& object_name, uint64_t unique) {
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(unique));
  std::string base = object_name.substr(0, kNameLimit - std::strlen(suffix));
  // A cut may leave a label ending in '-' or '.', which a DNS subdomain does not allow.
  while (!base.empty() && (base.back() == '-' || base.back() == '.')) base.pop_back();
  return base + suffix;
}

std::string EventBody(const EventSpec& event, const std::string& node_name) {
  const ObjectMeta& obj = event.object;
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  PutString(w, "apiVersion", "events.k8s.io/v1");
  PutString(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  PutString(w, "name", event.name);
  // Events of cluster-scoped objects go to "default", the one namespace the server allows for them.
  PutString(w, "namespace", obj.namespace_name.empty() ? "default" : obj.namespace_name);
  w.EndObject();
  PutString(w, "eventTime", MicroTime(event.time));
  PutString(w, "reportingController", kReportingController);
  PutString(w, "reportingInstance", CutToLimit(node_name, kInstanceLimit));
  PutString(w, "action", CutToLimit(event.handler, kActionLimit));
  PutString(w, "reason", !event.reason.empty() ? event.reason : event.warning ? "HandlerFailed" : "HandlerSucceeded");
  PutString(w, "note", CutToLimit(event.note, kNoteLimit));
  PutString(w, "type", event.warning ? "Warning" : "Normal");
  w.Key("regarding");
  w.StartObject();
  PutString(w, "apiVersion", ApiVersion(event.resource));
  if (!event.kind.empty()) PutString(w, "kind", event.kind);
  PutString(w, "name", obj.name);
  if (!obj.namespace_name.empty()) PutString(w, "namespace", obj.namespace_name);
  PutString(w, "uid", obj.uid);
  w.EndObject();
  w.EndObject();
  return std::string(out.GetString(), out.GetSize());
}

KubeEventRecorder::KubeEventRecorder(KubeClient& client, Clock& clock, EventRecorderOptions options, Metrics& metrics)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      posted_(metrics.GetCounter("events_posted_total", "Kubernetes Events posted about handler outcomes")),
      rate_limited_(metrics.GetCounter("events_dropped_total", "Kubernetes Events not posted, by reason",
                                       {{"reason", "rate_limited"}})),
      aggregated_(metrics.GetCounter("events_dropped_total", "", {{"reason", "aggregated"}})),
      queue_full_(metrics.GetCounter("events_dropped_total", "", {{"reason", "queue_full"}})),
      post_failed_(metrics.GetCounter("events_dropped_total", "", {{"reason", "post_failed"}})),
      error_log_(clock),
      poster_([this] { Run(); }) {}

KubeEventRecorder::~KubeEventRecorder() {
  size_t dropped = 0;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    dropped = queue_.size();
    queue_.clear();
  }
  cv_.notify_all();
  poster_.join();
  if (dropped > 0) {
    Log(LogLevel::kInfo, "events not posted at shutdown", {{"events", dropped}, {"next", "exit"}});
  }
}

void KubeEventRecorder::PermanentFailure(const ResourceRef& resource, const ObjectMeta& object,
                                         const std::string& handler, const std::string& message) {
  EventSpec event{"", resource, object, "", handler, true,
                  handler + " hook failed on node " + options_.node_name + ": " + message, clock_.Now()};
  Enqueue(std::move(event));
}

void KubeEventRecorder::Succeeded(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler) {
  EventSpec event{"", resource, object, "", handler, false, handler + " hook succeeded on node " + options_.node_name,
                  clock_.Now()};
  Enqueue(std::move(event));
}

void KubeEventRecorder::Failing(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler,
                                int attempt, const std::string& message) {
  if (!ReportsFailure(attempt)) {
    aggregated_.Increment();
    return;
  }
  std::string note = handler + " hook failing on node " + options_.node_name + " (attempt " +
                     std::to_string(attempt) + ", reported on attempts 1, 2, 4, 8, ...; retrying): " +
                     NoteText(message);
  Enqueue(EventSpec{"", resource, object, "", handler, true, note, clock_.Now(), "HandlerFailing"});
}

void KubeEventRecorder::Recovered(const ResourceRef& resource, const ObjectMeta& object, const std::string& handler,
                                  int failures) {
  std::string note = handler + " hook succeeded on node " + options_.node_name + " after " +
                     std::to_string(failures) + (failures == 1 ? " failed attempt" : " failed attempts");
  Enqueue(EventSpec{"", resource, object, "", handler, false, note, clock_.Now(), "HandlerRecovered"});
}

void KubeEventRecorder::Quarantined(const ResourceRef& resource, const ObjectMeta& object, const std::string& message) {
  EventSpec event{"", resource, object, "", "quarantine", true,
                  "object quarantined on node " + options_.node_name + ": " + message, clock_.Now(), "ObjectQuarantined"};
  Enqueue(std::move(event));
}

void KubeEventRecorder::Report(const ResourceRef& resource, const ObjectMeta& object, const std::string& action,
                               const std::string& reason, bool warning, const std::string& note) {
  Enqueue(EventSpec{"", resource, object, "", action, warning, note, clock_.Now(), reason});
}

void KubeEventRecorder::FinalizerReleased(const ResourceRef& resource, const ObjectMeta& object,
                                          const std::string& finalizer, const std::string& reason) {
  std::string note = "finalizer " + finalizer + " released by node " + options_.node_name +
                     " without its delete hook: " + NoteText(reason);
  // The finalizer is the "handler" of the rate-limit key, so each released finalizer gets its Event.
  Enqueue(EventSpec{"", resource, object, "", finalizer, true, note, clock_.Now(), "FinalizerReleased"});
}

void KubeEventRecorder::OutputsRefused(const ResourceRef& resource, const ObjectMeta& object,
                                       const std::string& handler, const std::string& message) {
  Enqueue(EventSpec{"", resource, object, "", handler, true,
                    NoteText(message + " (node " + options_.node_name + ")"), clock_.Now(), "NodeOutputsRefused"});
}

void KubeEventRecorder::NodeStep(const ResourceRef& resource, const ObjectMeta& object, const std::string& reason,
                                 bool warning, const std::string& note) {
  Enqueue(EventSpec{"", resource, object, "", "rollout", warning, NoteText("node " + options_.node_name + ": " + note),
                    clock_.Now(), reason});
}

void KubeEventRecorder::NodeEvent(const ObjectMeta& node, const std::string& reason, bool warning,
                                  const std::string& note) {
  static const ResourceRef nodes{"", "v1", "nodes", "", ""};
  Enqueue(EventSpec{"", nodes, node, "Node", "rollout", warning, NoteText(note), clock_.Now(), reason});
}

void KubeEventRecorder::RolloutReached(const ResourceRef& resource, const ObjectMeta& object, const std::string& reason,
                                       const std::string& state, bool warning, const std::string& note) {
  // The same name on every node: the first create wins, the others get AlreadyExists.
  uint64_t unique = 1469598103934665603ULL;
  for (unsigned char c : object.uid + "/" + reason + "/" + state) unique = (unique ^ c) * 1099511628211ULL;
  EventSpec event{EventName(object.name, unique), resource, object, "", "rollout", warning, NoteText(note, 900),
                  clock_.Now(), reason};
  event.once = true;
  Enqueue(std::move(event));
}

void KubeEventRecorder::WaitIdle() {
  MutexLock lock(&mu_);
  mu_.Wait(cv_, [&] {
    mu_.AssertHeld();
    return stopping_ || (queue_.empty() && !posting_);
  });
}

void KubeEventRecorder::Enqueue(EventSpec event) {
  std::string key = event.object.uid + "\n" + event.handler + "\n" + event.reason + (event.warning ? "W" : "N") +
                    (event.once ? "\n" + event.name : "");  // once per state, not once per interval
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    auto last = last_posted_.find(key);
    if (last != last_posted_.end() && event.time - last->second < options_.min_interval) {
      rate_limited_.Increment();
      return;
    }
    if (queue_.size() >= options_.queue_capacity) {
      queue_full_.Increment();
      return;  // not remembered, so the next outcome may still be reported
    }
    RememberLocked(key, event.time);
    queue_.push_back(std::move(event));
  }
  cv_.notify_all();
}

void KubeEventRecorder::RememberLocked(const std::string& key, TimePoint now) {
  last_posted_[key] = now;
  posted_order_.emplace_back(now, key);
  // Entries past the interval limit nothing any more; beyond the bound the oldest go first. A key
  // posted again has a newer entry further back, so its stale one only leaves the deque.
  auto forgettable = [&] {
    mu_.AssertHeld();
    return now - posted_order_.front().first >= options_.min_interval ||
           last_posted_.size() > options_.max_remembered;
  };
  while (!posted_order_.empty() && forgettable()) {
    auto& [when, old_key] = posted_order_.front();
    auto it = last_posted_.find(old_key);
    if (it != last_posted_.end() && it->second == when) last_posted_.erase(it);
    posted_order_.pop_front();
  }
}

void KubeEventRecorder::Run() {
  MutexLock lock(&mu_);
  while (true) {
    mu_.Wait(cv_, [&] {
      mu_.AssertHeld();
      return stopping_ || !queue_.empty();
    });
    if (stopping_) return;
    EventSpec event = std::move(queue_.front());
    queue_.pop_front();
    posting_ = true;
    {
      MutexUnlock unlock(&mu_);
      Post(event);
    }
    posting_ = false;
    cv_.notify_all();
  }
}

void KubeEventRecorder::Post(EventSpec& event) {
  event.kind = KindOf(event);
  ResourceRef events{"events.k8s.io", "v1", "events", "", ""};
  std::string ns = event.object.namespace_name.empty() ? "default" : event.object.namespace_name;
  // Nanoseconds as client-go names Events; the clock has milliseconds, so random low digits keep
  // the agents on a thousand nodes from picking the same name for the same object.
  auto unique = [&] {
    return static_cast<uint64_t>(ToMillis(event.time)) * 1'000'000 + name_rng_() % 1'000'000;
  };
  if (!event.once) event.name = EventName(event.object.name, unique());
  Status st = client_.Create(events, ns, EventBody(event, options_.node_name));
  if (event.once && st.code() == StatusCode::kConflict) return;  // another node posted it
  if (st.code() == StatusCode::kConflict) {
    event.name = EventName(event.object.name, unique());
    st = client_.Create(events, ns, EventBody(event, options_.node_name));
  }
  if (st.ok()) {
    posted_.Increment();
    return;
  }
  post_failed_.Increment();
  int suppressed = 0;
  if (error_log_.Allow(&suppressed)) {
    Log(LogLevel::kWarn, "event not posted",
        {{"object", event.object.Key()},
         {"uid", event.object.uid},
         {"handler", event.handler},
         {"error", st.ToString()},
         {"suppressed", suppressed},
         {"next", "drop it; later outcomes are reported as usual"}});
  }
}

std::string KubeEventRecorder::KindOf(const EventSpec& event) {
  std::string id = event.resource.Id();
  auto cached = kinds_.find(id);
  if (cached != kinds_.end()) return cached->second;
  // The agent's own Node: known without reading Nodes, which the role may not allow.
  if (event.resource.group.empty() && event.resource.plural == "nodes") return kinds_[id] = "Node";
  // A list of just this object needs only the list permission every watched resource has; a get
  // would need a grant the least-privilege role leaves out (nodehook rbac).
  ResourceRef one = event.resource;
  one.namespace_name = event.object.namespace_name;
  one.label_selector.clear();
  one.field_selector = "metadata.name=" + event.object.name;
  ListOptions options;
  options.limit = 1;
  auto list = client_.List(one, options);
  if (!list.ok() || list->items.empty()) return "";  // e.g. deleted meanwhile; try again next event
  std::string kind = KindInJson(list->items.front().json);
  if (!kind.empty()) kinds_[id] = kind;
  return kind;
}

}  // namespace nodehook
