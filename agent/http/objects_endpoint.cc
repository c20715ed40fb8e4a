#include "agent/http/objects_endpoint.h"

#include <algorithm>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/base/interned.h"
#include "agent/http/request_parser.h"

namespace nodehook {
namespace {

constexpr const char* kPrefix = "/v1/objects";

struct ObjectQuery {
  size_t limit = 0;
  bool failing = false;
  std::string uid;
  CompactUid uid_key;  // `uid`, as the snapshot holds it
  std::string namespace_name;
  std::string name;
  bool namespace_given = false;  // "" is a real namespace filter (cluster-scoped objects)
};

LocalResponse Json(int status, std::string body) {
  LocalResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

LocalResponse Error(int status, const std::string& message) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("error");
  w.String(message.c_str(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return Json(status, std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

bool ParseLimit(const std::string& text, size_t max, size_t* out) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  size_t value = std::stoul(text);
  if (value < 1 || value > max) return false;
  *out = value;
  return true;
}

// Fills `q` from the query string and the path below /v1/objects/; "" when fine, else what is wrong.
std::string ParseQuery(const LocalRequest& req, const ObjectsEndpointOptions& options, ObjectQuery* q) {
  q->limit = options.default_limit;
  std::string limit = QueryParam(req.query, "limit");
  if (!limit.empty() && !ParseLimit(limit, options.max_limit, &q->limit)) {
    return "limit: expected a number from 1 to " + std::to_string(options.max_limit) + ", got \"" + limit + "\"";
  }
  std::string failing = QueryParam(req.query, "failing");
  if (!failing.empty() && failing != "true" && failing != "false") {
    return "failing: expected true or false, got \"" + failing + "\"";
  }
  q->failing = failing == "true";
  q->uid = QueryParam(req.query, "uid");
  q->uid_key = CompactUid(q->uid);
  q->name = QueryParam(req.query, "name");
  q->namespace_name = QueryParam(req.query, "namespace");
  q->namespace_given = !q->namespace_name.empty();
  std::string below = req.path.size() > std::string(kPrefix).size() + 1 ? req.path.substr(std::string(kPrefix).size() + 1) : "";
  if (!below.empty()) {
    size_t slash = below.find('/');
    if (below.back() == '/' || (slash != std::string::npos && below.find('/', slash + 1) != std::string::npos)) {
      return "expected /v1/objects/NAMESPACE/NAME or /v1/objects/NAME (cluster-scoped), got " + req.path;
    }
    q->namespace_given = true;
    q->namespace_name = slash == std::string::npos ? "" : below.substr(0, slash);
    q->name = slash == std::string::npos ? below : below.substr(slash + 1);
  }
  return "";
}

bool Matches(const SnapshotObject& o, const ObjectQuery& q) {
  return (q.uid.empty() || o.uid == q.uid_key) && (q.name.empty() || o.name() == q.name) &&
         (!q.namespace_given || o.namespace_name() == q.namespace_name);
}

// Cuts at a UTF-8 character boundary, so the JSON stays valid text.
std::string Cut(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + " [cut]";
}

// Its identity and handled time; no handlers yet.
ObjectView Identity(const SnapshotObject& o) {
  ObjectView out;
  out.uid = o.uid.str();
  out.resource = std::string(o.resource.view());
  out.namespace_name = std::string(o.namespace_name());
  out.name = std::string(o.name());
  if (o.handled_at_ms >= 0) out.handled_at_ms = o.handled_at_ms;
  return out;
}

// The view to serve: filtered handlers, bounded or hidden messages.
ObjectView Served(const SnapshotObject& o, const ObjectQuery& q, const ObjectsEndpointOptions& options) {
  ObjectView out = Identity(o);
  for (const SnapshotHandler& h : o.handlers) {
    if (q.failing && !IsFailing(h)) continue;
    out.handlers.push_back(h.Record(o));
    HandlerRecord& served = out.handlers.back();
    served.last_message = options.show_messages ? Cut(h.last_message, options.message_bytes) : "";
  }
  return out;
}

LocalResponse Answer(const ObjectViewsSnapshot& snapshot, const ObjectQuery& q, const ObjectsEndpointOptions& options,
                     TimePoint now) {
  std::vector<ObjectView> selected;
  size_t total = 0;
  for (const SharedSnapshotObject& o : snapshot.objects) {
    if (!Matches(*o, q)) continue;
    ObjectView served = Served(*o, q, options);
    if (q.failing && served.handlers.empty()) continue;
    ++total;
    if (selected.size() < q.limit) selected.push_back(std::move(served));
  }
  // Only for the objects returned: a lookup each in the agent's caches.
  if (snapshot.settled_version) {
    for (ObjectView& o : selected) o.settled_resource_version = snapshot.settled_version(o.resource, o.uid);
  }
  bool single = !q.name.empty() || !q.uid.empty();
  if (single && total == 0) return Error(404, "node " + snapshot.node + " knows no such object");
  int64_t now_ms = ToMillis(now);
  std::string objects = ObjectsToJson(selected, now_ms, /*with_diffbase=*/false);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("node");
  w.String(snapshot.node.c_str(), static_cast<rapidjson::SizeType>(snapshot.node.size()));
  if (!snapshot.node_bound.empty()) {
    w.Key("node_bound");
    w.String(snapshot.node_bound.c_str(), static_cast<rapidjson::SizeType>(snapshot.node_bound.size()));
  }
  w.Key("snapshot_at_ms");
  w.Int64(ToMillis(snapshot.taken_at));
  w.Key("snapshot_age_ms");
  w.Int64(std::max<int64_t>(0, now_ms - ToMillis(snapshot.taken_at)));
  w.Key("messages");
  w.String(options.show_messages ? "shown" : "hidden");
  w.Key("total");
  w.Uint64(total);
  w.Key("truncated");
  w.Bool(total > selected.size());
  w.Key("objects");
  w.RawValue(objects.c_str(), objects.size() - 1, rapidjson::kArrayType);  // without its newline
  w.EndObject();
  return Json(200, std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

}  // namespace

// One per object a node remembers: 112 bytes with make_shared's count (a size class of jemalloc
// and of glibc's malloc); a field more takes the next one (128).
static_assert(sizeof(SnapshotObject) <= 96, "SnapshotObject outgrew 96 bytes");
static_assert(sizeof(SnapshotHandler) <= 128, "SnapshotHandler outgrew 128 bytes");

std::string SnapshotObject::KeyOf(std::string_view namespace_name, std::string_view name) {
  if (namespace_name.empty()) return std::string(name);
  std::string key;
  key.reserve(namespace_name.size() + 1 + name.size());
  return key.append(namespace_name).append(1, '/').append(name);
}

std::string_view SnapshotObject::namespace_name() const {
  const size_t slash = key.find('/');
  return slash == std::string::npos ? std::string_view() : std::string_view(key).substr(0, slash);
}

std::string_view SnapshotObject::name() const {
  const size_t slash = key.find('/');
  return slash == std::string::npos ? std::string_view(key) : std::string_view(key).substr(slash + 1);
}

SnapshotHandler SnapshotHandler::Of(HandlerRecord record) {
  SnapshotHandler h;
  h.handler = Intern(record.handler);
  h.last_outcome = Intern(record.last_outcome);
  h.retries = record.retries;
  h.first_start_ms = record.first_start_ms;
  h.next_attempt_ms = record.next_attempt_ms;
  h.last_message = std::move(record.last_message);
  h.target = std::move(record.target);
  return h;
}

HandlerRecord SnapshotHandler::Record(const SnapshotObject& identity) const {
  HandlerRecord r;
  r.uid = identity.uid.str();
  r.handler = std::string(handler);
  r.resource = std::string(identity.resource.view());
  r.namespace_name = std::string(identity.namespace_name());
  r.name = std::string(identity.name());
  r.retries = retries;
  r.first_start_ms = first_start_ms;
  r.next_attempt_ms = next_attempt_ms;
  r.last_outcome = std::string(last_outcome);
  r.last_message = last_message;
  r.target = target;
  return r;
}

std::vector<SnapshotHandler> SnapshotHandlers(std::vector<HandlerRecord> records) {
  std::vector<SnapshotHandler> out;
  out.reserve(records.size());
  for (HandlerRecord& record : records) out.push_back(SnapshotHandler::Of(std::move(record)));
  return out;
}

ObjectView AsObjectView(const SnapshotObject& o) {
  ObjectView out = Identity(o);
  for (const SnapshotHandler& h : o.handlers) out.handlers.push_back(h.Record(o));
  return out;
}

namespace {

// A run that started after failures is still failing until it succeeds.
bool IsFailingProgress(std::string_view outcome, int retries) {
  return IsFailingOutcome(outcome) || (ParseStoredOutcome(outcome) == StoredOutcome::kRunning && retries > 0);
}

}  // namespace

bool IsFailing(const HandlerRecord& h) { return IsFailingProgress(h.last_outcome, h.retries); }
bool IsFailing(const SnapshotHandler& h) { return IsFailingProgress(h.last_outcome, h.retries); }

void RegisterObjectsEndpoints(LocalServer& server, ObjectViewsSource source, Clock& clock,
                              ObjectsEndpointOptions options) {
  auto handler = [source = std::move(source), &clock, options](const LocalRequest& req) {
    ObjectQuery q;
    std::string bad = ParseQuery(req, options, &q);
    if (!bad.empty()) return Error(400, bad);
    Result<ObjectViewsPtr> snapshot = source();
    if (!snapshot.ok()) return Error(503, snapshot.status().message());
    return Answer(**snapshot, q, options, clock.Now());
  };
  server.Handle(kPrefix, handler);
  server.Handle(std::string(kPrefix) + "/", handler);
}

}  // namespace nodehook
