// FakeApiServer's in-memory resources: list (limit/continue) and watch (replay from a
// resourceVersion, live events, bookmarks, 410 after compaction, server-side timeout).
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <cstdlib>

#include "agent/http/request_parser.h"
#include "test/fakes/fake_api_server.h"

namespace nodehook {
namespace fake_api_internal {
bool SendAll(int fd, const std::string& data);
std::string Chunk(const std::string& data);
std::string StatusJson(int code, const std::string& reason, const std::string& message);
}  // namespace fake_api_internal

namespace {

using namespace fake_api_internal;
using SteadyClock = std::chrono::steady_clock;

uint64_t ToNumber(const std::string& text) { return std::strtoull(text.c_str(), nullptr, 10); }

std::string EventLine(const std::string& type, const std::string& object_json) {
  return R"({"type":")" + type + R"(","object":)" + object_json + "}\n";
}

// Parses `json`, sets metadata.resourceVersion and returns it serialized; reads name/namespace.
std::string WithResourceVersion(const std::string& json, uint64_t rv, std::string* key) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata") || !doc["metadata"].IsObject()) {
    std::fprintf(stderr, "FakeApiServer: object JSON without metadata: %s\n", json.c_str());
    std::abort();
  }
  auto& meta = doc["metadata"];
  auto& alloc = doc.GetAllocator();
  std::string rv_text = std::to_string(rv);
  if (meta.HasMember("resourceVersion")) meta.RemoveMember("resourceVersion");
  meta.AddMember("resourceVersion", rapidjson::Value(rv_text.c_str(), alloc), alloc);
  if (key) {
    std::string ns = meta.HasMember("namespace") && meta["namespace"].IsString() ? meta["namespace"].GetString() : "";
    std::string name = meta.HasMember("name") && meta["name"].IsString() ? meta["name"].GetString() : "";
    *key = ns + "/" + name;
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return buffer.GetString();
}

}  // namespace

void FakeApiServer::ServeCollection(const std::string& collection_path) {
  std::lock_guard<std::mutex> lock(mu_);
  collections_[collection_path];
}

std::string FakeApiServer::PutObject(const std::string& collection_path, const std::string& object_json) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t rv = ++last_rv_;
  std::string key;
  std::string json = WithResourceVersion(object_json, rv, &key);
  auto& objects = collections_[collection_path].objects;
  std::string type = objects.count(key) ? "MODIFIED" : "ADDED";
  objects[key] = StoredObject{rv, json};
  history_.push_back(StoredEvent{rv, collection_path, type, json});
  cv_.notify_all();
  return std::to_string(rv);
}

bool FakeApiServer::DeleteObject(const std::string& collection_path, const std::string& namespace_name,
                                 const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& objects = collections_[collection_path].objects;
  auto it = objects.find(namespace_name + "/" + name);
  if (it == objects.end()) return false;
  uint64_t rv = ++last_rv_;
  std::string json = WithResourceVersion(it->second.json, rv, nullptr);
  objects.erase(it);
  history_.push_back(StoredEvent{rv, collection_path, "DELETED", json});
  cv_.notify_all();
  return true;
}

void FakeApiServer::SendBookmarks() {
  std::lock_guard<std::mutex> lock(mu_);
  ++bookmark_generation_;
  cv_.notify_all();
}

void FakeApiServer::CompactHistory() {
  std::lock_guard<std::mutex> lock(mu_);
  compacted_rv_ = last_rv_;
}

std::string FakeApiServer::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::to_string(last_rv_);
}

int FakeApiServer::open_watches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_watches_;
}

bool FakeApiServer::WaitForOpenWatches(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return open_watches_ >= n; });
}

bool FakeApiServer::ServeFromMemory(int fd, const RecordedRequest& req, WatchFault fault) {
  size_t q = req.target.find('?');
  std::string path = req.target.substr(0, q);
  std::string query = q == std::string::npos ? "" : req.target.substr(q + 1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!collections_.count(path)) {
      std::string body = StatusJson(500, "InternalError", "fake api server: " + path + " is not served");
      return SendAll(fd, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: " + std::to_string(body.size()) +
                             "\r\n\r\n" + body);
    }
  }
  if (req.is_watch()) return ServeWatch(fd, path, query, fault);
  return ServeList(fd, path, query);
}

bool FakeApiServer::ServeList(int fd, const std::string& collection, const std::string& query) {
  int status = 200;
  std::string body;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto& objects = collections_[collection].objects;
    size_t limit = ToNumber(QueryParam(query, "limit"));
    std::string token = QueryParam(query, "continue");  // "<list rv>-<offset>"
    uint64_t list_rv = last_rv_;
    size_t offset = 0;
    if (!token.empty()) {
      size_t dash = token.find('-');
      list_rv = ToNumber(token.substr(0, dash));
      offset = dash == std::string::npos ? 0 : ToNumber(token.substr(dash + 1));
    }
    if (!token.empty() && list_rv < compacted_rv_) {
      status = 410;
      body = StatusJson(410, "Expired", "The provided continue parameter is too old");
    } else {
      std::string items;
      size_t index = 0, taken = 0;
      for (const auto& [key, object] : objects) {
        if (index++ < offset) continue;
        if (limit > 0 && taken == limit) break;
        items += (taken++ ? "," : "") + object.json;
      }
      std::string next = offset + taken < objects.size() ? std::to_string(list_rv) + "-" + std::to_string(offset + taken) : "";
      body = R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":")" + std::to_string(list_rv) +
             R"(","continue":")" + next + R"("},"items":[)" + items + "]}";
    }
  }
  return SendAll(fd, "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Gone") +
                         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                         "\r\n\r\n" + body);
}

bool FakeApiServer::ServeWatch(int fd, const std::string& collection, const std::string& query, WatchFault fault) {
  const bool cut_mid_event = fault == WatchFault::kCutMidEvent;
  const bool garbage_first = fault == WatchFault::kGarbageFirst;
  const bool initial_events = QueryParam(query, "sendInitialEvents") == "true";
  std::string rv_param = QueryParam(query, "resourceVersion");
  bool bookmarks = QueryParam(query, "allowWatchBookmarks") == "true";
  uint64_t timeout_seconds = ToNumber(QueryParam(query, "timeoutSeconds"));
  auto deadline = timeout_seconds > 0 ? SteadyClock::now() + std::chrono::seconds(timeout_seconds)
                                      : SteadyClock::time_point::max();

  std::vector<std::string> pending;  // lines to send
  size_t position;                   // next history_ index to look at
  uint64_t offline_generation, bookmark_generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    offline_generation = offline_generation_;
    bookmark_generation = bookmark_generation_;
    position = history_.size();
    bool from_now = rv_param.empty() || rv_param == "0";
    if (!from_now && ToNumber(rv_param) < compacted_rv_) {
      pending.push_back(EventLine("ERROR", StatusJson(410, "Expired", "too old resource version: " + rv_param + " (" +
                                                                      std::to_string(compacted_rv_) + ")")));
      deadline = SteadyClock::now();  // one event, then a clean end, as the real server does
    } else if (from_now) {
      for (const auto& [key, object] : collections_[collection].objects) pending.push_back(EventLine("ADDED", object.json));
      if (initial_events && fault == WatchFault::kNoInitialEventsEnd) {
        deadline = SteadyClock::now();  // the initial events, then a clean end without the bookmark
      } else if (initial_events) {
        pending.push_back(EventLine("BOOKMARK", R"({"kind":"Bookmark","metadata":{"resourceVersion":")" +
                                                    std::to_string(last_rv_) +
                                                    R"(","annotations":{"k8s.io/initial-events-end":"true"}}})"));
      }
    } else {
      uint64_t from = ToNumber(rv_param);
      position = 0;
      while (position < history_.size() && history_[position].rv <= from) ++position;
    }
    ++open_watches_;
    cv_.notify_all();
  }
  bool ok = SendAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
  if (ok && garbage_first) ok = SendAll(fd, Chunk("this line is not JSON {\n"));
  bool ended_cleanly = false;
  while (ok) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (; position < history_.size(); ++position) {
        if (history_[position].collection == collection) {
          pending.push_back(EventLine(history_[position].type, history_[position].object_json));
        }
      }
      if (bookmark_generation != bookmark_generation_) {
        bookmark_generation = bookmark_generation_;
        if (bookmarks) {
          pending.push_back(EventLine("BOOKMARK", R"({"kind":"Bookmark","metadata":{"resourceVersion":")" +
                                                      std::to_string(last_rv_) + R"("}})"));
        }
      }
      if (pending.empty()) {
        if (stopping_ || offline_generation != offline_generation_) break;
        if (SteadyClock::now() >= deadline) {
          ended_cleanly = true;
          break;
        }
        // Hanging up is only seen by looking at the socket, hence the short wait slices.
        cv_.wait_until(lock, std::min(deadline, SteadyClock::now() + std::chrono::milliseconds(50)));
      }
    }
    if (pending.empty() && ClientHungUp(fd)) break;
    for (const std::string& line : pending) {
      if (cut_mid_event) {
        SendAll(fd, Chunk(line.substr(0, line.size() / 2)));
        ok = false;
        break;
      }
      if (!(ok = SendAll(fd, Chunk(line)))) break;
    }
    pending.clear();
  }
  if (ended_cleanly) ok = SendAll(fd, "0\r\n\r\n");
  std::lock_guard<std::mutex> lock(mu_);
  --open_watches_;
  cv_.notify_all();
  return ok && ended_cleanly;
}

}  // namespace nodehook
