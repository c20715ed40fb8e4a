// LeaseObjects: a KubeClient that keeps Leases (and other objects) as the API server would for
// Get, Create and Replace: each write gets a new resourceVersion, a stale one or a create of an
// existing name is kConflict. Patches are recorded and answered from a queue (Ok when empty).
// Counts the writes. Not thread-safe: the readiness tests call it from one thread.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/kube/client/kube_client.h"

namespace nodehook {

class LeaseObjects final : public KubeClient {
 public:
  Result<ObjectList> List(const ResourceRef&, const ListOptions&) override { return ObjectList{}; }
  Status Watch(const ResourceRef&, const WatchOptions&, const std::function<void(WatchEvent)>&,
               const CancelToken&) override {
    return Status::Ok();
  }
  Result<KubeObject> Get(const ObjectRef& o) override {
    if (!fail.ok()) return fail;
    auto it = objects.find(o.name);
    if (it == objects.end()) return NotFoundError(o.name);
    return it->second;
  }
  Status Create(const ResourceRef&, const std::string&, const std::string& body) override {
    if (!fail.ok()) return fail;
    auto [name, version] = NameAndVersion(body);
    if (objects.count(name)) return Status(StatusCode::kConflict, "already exists");
    Keep(name, body);
    return Status::Ok();
  }
  Result<KubeObject> Replace(const ObjectRef& o, const std::string& body) override {
    if (!fail.ok()) return fail;
    auto it = objects.find(o.name);
    if (it == objects.end()) return NotFoundError(o.name);
    if (NameAndVersion(body).second != it->second.meta.resource_version) return Status(StatusCode::kConflict, "stale");
    Keep(o.name, body);
    return objects[o.name];
  }
  Status Delete(const ObjectRef& o) override {
    if (!fail.ok()) return fail;
    return objects.erase(o.name) > 0 ? Status::Ok() : NotFoundError(o.name);
  }
  // An object as someone else wrote it (counted as no write of the code under test).
  void Seed(const std::string& name, const std::string& body) {
    Keep(name, body);
    --writes;
  }
  Status Patch(const ObjectRef& o, PatchType, const std::string& body) override {
    patches.emplace_back(o.name + (o.subresource.empty() ? "" : "/" + o.subresource), body);
    if (patch_results.empty()) return Status::Ok();
    Status next = patch_results.front();
    patch_results.pop_front();
    return next;
  }

  std::map<std::string, KubeObject> objects;  // by name
  int writes = 0;
  Status fail;  // when set, Get, Create and Replace fail with it
  std::vector<std::pair<std::string, std::string>> patches;  // (name[/subresource], body)
  std::deque<Status> patch_results;

 private:
  static std::pair<std::string, std::string> NameAndVersion(const std::string& body) {
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    const auto& meta = doc["metadata"];
    std::string version = meta.HasMember("resourceVersion") ? meta["resourceVersion"].GetString() : "";
    return {meta["name"].GetString(), version};
  }
  void Keep(const std::string& name, const std::string& body) {
    rapidjson::Document doc;
    doc.Parse(body.c_str());
    const std::string version = std::to_string(++versions_);
    auto& meta = doc["metadata"];
    if (meta.HasMember("resourceVersion")) meta.RemoveMember("resourceVersion");
    meta.AddMember("resourceVersion", rapidjson::Value(version.c_str(), doc.GetAllocator()), doc.GetAllocator());
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    doc.Accept(w);
    objects[name] = KubeObject{ObjectMeta{"uid-" + name, "", name, version, false}, buf.GetString()};
    ++writes;
  }
  int versions_ = 0;
};

}  // namespace nodehook
