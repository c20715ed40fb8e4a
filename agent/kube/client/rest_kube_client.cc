#include "agent/kube/client/rest_kube_client.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "agent/base/log.h"
#include "agent/kube/client/api_errors.h"
#include "agent/kube/client/api_paths.h"
#include "agent/kube/client/object_json.h"
#include "agent/kube/client/watch_line_splitter.h"

namespace nodehook {
namespace {

constexpr size_t kLoggedLineBytes = 200;

HttpRequest JsonRequest(std::string method, std::string path, std::string content_type = "", std::string body = "") {
  HttpRequest req;
  req.method = std::move(method);
  req.path_and_query = std::move(path);
  req.headers.emplace_back("Accept", "application/json");
  if (!content_type.empty()) req.headers.emplace_back("Content-Type", std::move(content_type));
  req.body = std::move(body);
  return req;
}

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kJson: return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

std::string Snippet(std::string_view line) {
  if (line.size() <= kLoggedLineBytes) return std::string(line);
  return std::string(line.substr(0, kLoggedLineBytes)) + "...";
}

// Records how a request ended: its HTTP status, or "error" when no response came. One the agent
// cancelled itself (it is stopping) is no failure of the server's and is not recorded.
void RecordSend(ApiRequestMetrics::Request& request, const Result<HttpResponse>& resp) {
  if (!resp.ok() && resp.status().code() == StatusCode::kCancelled) return;
  if (resp.ok()) {
    request.Answered(resp->status);
  } else {
    request.Failed();
  }
}

// Debug lines for list and watch requests (--log-level debug): the request when it is sent, its
// response code (or transport error) when it is answered or, for a watch, when the stream ends.
void DebugRequest(const char* verb, const ResourceRef& r, const std::string& path) {
  if (!LogEnabled(LogLevel::kDebug)) return;
  Log(LogLevel::kDebug, std::string(verb) + " request", {{"resource", r.Id()}, {"path", path}, {"next", "wait for the answer"}});
}

void DebugResponse(const char* verb, const ResourceRef& r, const Result<HttpResponse>& resp, const char* next) {
  if (!LogEnabled(LogLevel::kDebug)) return;
  Log(LogLevel::kDebug, std::string(verb) + " response",
      {{"resource", r.Id()},
       {"code", resp.ok() ? std::to_string(resp->status) : ""},
       {"error", resp.ok() ? "" : resp.status().ToString()},
       {"next", next}});
}

}  // namespace

RestKubeClient::RestKubeClient(std::unique_ptr<HttpTransport> transport, ObjectLimits limits, Metrics* metrics)
    : transport_(std::move(transport)), limits_(limits), requests_(metrics) {}

Result<ObjectList> RestKubeClient::List(const ResourceRef& r, const ListOptions& o) {
  HttpRequest req = JsonRequest("GET", ListPath(r, o));
  req.max_body_bytes = kMaxListBodyBytes;
  auto request = requests_.Start("list", r.Id());
  DebugRequest("list", r, req.path_and_query);
  auto resp = transport_->Send(req);
  RecordSend(request, resp);
  DebugResponse("list", r, resp, "the caller reads the list or retries");
  if (!resp.ok()) return Status(resp.status().code(), "list " + r.Id() + ": " + resp.status().message());
  if (!IsHttpSuccess(resp->status)) return ErrorFromResponse(*resp, "list " + r.Id());
  auto list = ParseObjectList(resp->body, limits_);
  if (!list.ok()) return InvalidError("list " + r.Id() + ": " + list.status().message());
  return list;
}

Status RestKubeClient::Watch(const ResourceRef& r, const WatchOptions& o,
                             const std::function<void(WatchEvent)>& on_event,
                             const CancelToken& cancel) {
  auto stream_cancel = std::make_shared<CancelToken>();
  std::weak_ptr<CancelToken> weak_stream_cancel = stream_cancel;
  CancelRegistration link(cancel, [weak_stream_cancel] {
    if (auto t = weak_stream_cancel.lock()) t->Cancel();
  });

  WatchLineSplitter splitter(std::max(WatchLineSplitter::kDefaultMaxLineBytes, limits_.max_bytes + (64 << 10)));
  Status stream_error;  // first malformed line; stops the stream
  auto on_line = [&](std::string_view line) -> Status {
    auto event = ParseWatchEvent(line, limits_);
    if (!event.ok()) {
      Log(LogLevel::kWarn, "malformed watch line",
          {{"resource", r.Id()}, {"error", event.status().message()}, {"line", Snippet(line)},
           {"next", "restart watch"}});
      return InvalidError("watch " + r.Id() + ": " + event.status().message());
    }
    on_event(std::move(event).value());
    return Status::Ok();
  };
  auto on_chunk = [&](std::string_view chunk) {
    if (!stream_error.ok()) return;  // chunks already in flight when we asked to stop
    Status st = splitter.Feed(chunk, on_line);
    if (!st.ok()) {
      stream_error = st;
      stream_cancel->Cancel();
    }
  };

  auto request = requests_.Start("watch", r.Id());
  HttpRequest req = JsonRequest("GET", WatchPath(r, o));
  req.on_stream_headers = [&request](int status) { request.Answered(status); };
  DebugRequest("watch", r, req.path_and_query);
  auto resp = transport_->Stream(req, on_chunk, *stream_cancel);
  RecordSend(request, resp);  // a refused or non-2xx watch; ignored once the headers were recorded
  DebugResponse("watch", r, resp, "the watcher watches again or relists");
  if (!stream_error.ok()) return stream_error;
  if (cancel.cancelled()) return Status(StatusCode::kCancelled, "watch " + r.Id() + " cancelled");
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) return ErrorFromResponse(*resp, "watch " + r.Id());
  if (splitter.pending_bytes() > 0) {
    return UnavailableError("watch " + r.Id() + ": stream ended in the middle of an event");
  }
  return Status::Ok();
}

Result<KubeObject> RestKubeClient::SendForObject(const char* verb, const ObjectRef& o, const HttpRequest& req) {
  std::string what = std::string(verb) + " " + o.resource.Id() + " " + o.namespace_name + "/" + o.name;
  auto request = requests_.Start(verb, o.resource.Id());
  auto resp = transport_->Send(req);
  RecordSend(request, resp);
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) return ErrorFromResponse(*resp, what);
  auto obj = ParseObject(resp->body, limits_);
  if (!obj.ok()) return InvalidError(what + ": " + obj.status().message());
  return obj;
}

Result<KubeObject> RestKubeClient::Get(const ObjectRef& o) {
  return SendForObject("get", o, JsonRequest("GET", ObjectPath(o)));
}

Result<KubeObject> RestKubeClient::Replace(const ObjectRef& o, const std::string& body) {
  return SendForObject("replace", o, JsonRequest("PUT", ObjectPath(o), "application/json", body));
}

Status RestKubeClient::Patch(const ObjectRef& o, PatchType type, const std::string& body) {
  auto request = requests_.Start("patch", o.resource.Id());
  auto resp = transport_->Send(JsonRequest("PATCH", ObjectPath(o), PatchContentType(type), body));
  RecordSend(request, resp);
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) {
    return ErrorFromResponse(*resp, "patch " + o.resource.Id() + " " + o.namespace_name + "/" + o.name);
  }
  return Status::Ok();
}

Status RestKubeClient::Apply(const ObjectRef& o, const std::string& subresource, const std::string& field_manager,
                             const std::string& body) {
  auto request = requests_.Start("apply", o.resource.Id());
  const std::string path = ObjectPath(o) + (subresource.empty() ? "" : "/" + UrlEncode(subresource)) +
                           "?fieldManager=" + UrlEncode(field_manager) + "&force=true";
  // JSON is YAML: the apply content type takes it as is.
  auto resp = transport_->Send(JsonRequest("PATCH", path, "application/apply-patch+yaml", body));
  RecordSend(request, resp);
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) {
    return ErrorFromResponse(*resp, "apply " + o.resource.Id() + (subresource.empty() ? "" : "/" + subresource) + " " +
                                        o.namespace_name + "/" + o.name);
  }
  return Status::Ok();
}

Status RestKubeClient::Delete(const ObjectRef& o) {
  auto request = requests_.Start("delete", o.resource.Id());
  auto resp = transport_->Send(JsonRequest("DELETE", ObjectPath(o), "application/json",
                                           R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})"));
  RecordSend(request, resp);
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) {
    return ErrorFromResponse(*resp, "delete " + o.resource.Id() + " " + o.namespace_name + "/" + o.name);
  }
  return Status::Ok();
}

Status RestKubeClient::PostTo(const ObjectRef& o, const std::string& body) {
  auto request = requests_.Start("create", o.resource.Id());
  auto resp = transport_->Send(JsonRequest("POST", ObjectPath(o), "application/json", body));
  RecordSend(request, resp);
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) {
    return ErrorFromResponse(*resp, "create " + o.resource.Id() + " " + o.namespace_name + "/" + o.name + "/" +
                                        o.subresource);
  }
  return Status::Ok();
}

Status RestKubeClient::Create(const ResourceRef& collection, const std::string& namespace_name,
                              const std::string& body) {
  return Post(collection, namespace_name, body, "");
}

Status RestKubeClient::CreateDryRun(const ResourceRef& collection, const std::string& namespace_name,
                                    const std::string& body) {
  return Post(collection, namespace_name, body, "?dryRun=All");
}

Status RestKubeClient::Post(const ResourceRef& collection, const std::string& namespace_name,
                            const std::string& body, const std::string& query) {
  ResourceRef in_namespace = collection;
  in_namespace.namespace_name = namespace_name;
  auto request = requests_.Start("create", collection.Id());
  auto resp = transport_->Send(JsonRequest("POST", in_namespace.CollectionPath() + query, "application/json", body));
  RecordSend(request, resp);
  if (!resp.ok()) return resp.status();
  if (!IsHttpSuccess(resp->status)) {
    std::string where = namespace_name.empty() ? "" : " in " + namespace_name;
    return ErrorFromResponse(*resp, "create " + collection.Id() + where);
  }
  return Status::Ok();
}

}  // namespace nodehook
