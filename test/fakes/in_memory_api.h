// InMemoryApi: a KubeClient that keeps objects (Leases and others, by name) as the API server
// would for Get, Create, Replace and Delete: each write is kept under a new resourceVersion
// (also set in the kept JSON), a Replace with a stale one or a Create of a name that exists is
// kConflict, a Get, Replace or Delete of a missing one kNotFound, and a write whose annotations
// are over 256 KiB is kInvalid. List and Watch see nothing (tests feed their watches with
// Observe). Patches are recorded and answered from a queue (Ok when empty).
// Failures are injected with FailAll, RefuseCreates, RefuseReplaces and BeforeNextReplace.
// Put and Remove are someone else's writes and deletes: not counted in writes().
// Thread-safe; observers and the BeforeNextReplace hook run outside the lock.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agent/base/json_text.h"
#include "agent/kube/client/kube_client.h"
#include "test/fakes/call_log.h"

namespace nodehook {

class InMemoryApi final : public KubeClient {
 public:
  // A change as a watch would send it. `holder` is a Lease's spec.holderIdentity ("" otherwise).
  struct Change {
    std::shared_ptr<const KubeObject> object;
    std::string holder;
    bool deleted = false;
  };

  Result<ObjectList> List(const ResourceRef&, const ListOptions&) override { return ObjectList{}; }
  Status Watch(const ResourceRef&, const WatchOptions&, const std::function<void(WatchEvent)>&,
               const CancelToken&) override {
    return Status::Ok();
  }

  Result<KubeObject> Get(const ObjectRef& o) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!fail_.ok()) return fail_;
    auto it = objects_.find(o.name);
    if (it == objects_.end()) return NotFoundError(o.name + " not found");
    return it->second;
  }

  Status Create(const ResourceRef&, const std::string& namespace_name, const std::string& body) override {
    return CreateObject(namespace_name, body).status();
  }
  // Create, answering with the object as kept (what a POST's response body holds).
  Result<KubeObject> CreateObject(const std::string& namespace_name, const std::string& body) {
    std::unique_lock<std::mutex> lock(mu_);
    ++creates_;
    if (!fail_.ok()) return fail_;
    if (!refuse_creates_.ok()) {
      ++refused_;
      return refuse_creates_;
    }
    auto sent = Sent::Of(body);
    if (!sent.ok()) return sent.status();
    if (objects_.count(sent->name)) return Status(StatusCode::kConflict, sent->name + " already exists");
    ++writes_;
    return KeepAndTell(lock, namespace_name, *sent);
  }

  Result<KubeObject> Replace(const ObjectRef& o, const std::string& body) override {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = std::exchange(before_replace_, nullptr);
    }
    if (hook) hook();
    std::unique_lock<std::mutex> lock(mu_);
    if (!fail_.ok()) return fail_;
    if (!refuse_replaces_.ok()) return refuse_replaces_;
    auto sent = Sent::Of(body);
    if (!sent.ok()) return sent.status();
    auto it = objects_.find(o.name);
    if (it == objects_.end()) return NotFoundError(o.name + " not found");
    if (it->second.meta.resource_version != sent->resource_version) {
      return Status(StatusCode::kConflict, "stale resourceVersion");
    }
    ++writes_;
    return KeepAndTell(lock, o.namespace_name, *sent);
  }

  Status Delete(const ObjectRef& o) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!fail_.ok()) return fail_;
    }
    return Remove(o.name) ? Status::Ok() : NotFoundError(o.name + " not found");
  }

  Status Patch(const ObjectRef& o, PatchType, const std::string& body) override {
    return patches_.Take({o.name + (o.subresource.empty() ? "" : "/" + o.subresource), body});
  }

  // Someone else's write (an earlier version, another writer): kept as sent, under a new
  // resourceVersion, whether or not the object exists.
  KubeObject Put(const std::string& namespace_name, const std::string& body) {
    auto sent = Sent::Of(body, /*validate=*/false);
    std::unique_lock<std::mutex> lock(mu_);
    return KeepAndTell(lock, namespace_name, *sent);
  }
  // Someone else's delete: whether there was an object to delete.
  bool Remove(const std::string& name) {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = objects_.find(name);
    if (it == objects_.end()) return false;
    Change change{std::make_shared<const KubeObject>(std::move(it->second)), "", true};
    objects_.erase(it);
    Tell(lock, change);
    return true;
  }
  // Everything deleted by someone else.
  void RemoveAll() {
    for (const KubeObject& o : Objects()) Remove(o.meta.name);
  }

  std::optional<KubeObject> Find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = objects_.find(name);
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  bool Has(const std::string& name) const { return Find(name).has_value(); }
  // Every object, by name.
  std::vector<KubeObject> Objects() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<KubeObject> all;
    for (const auto& [name, object] : objects_) all.push_back(object);
    return all;
  }
  // Every version kept, in order: the writes and the Puts (none while KeepHistory(false)).
  std::vector<KubeObject> History() const {
    std::lock_guard<std::mutex> lock(mu_);
    return history_;
  }
  // Whether History() keeps the versions from now on: not for thousands of large writes.
  void KeepHistory(bool keep) {
    std::lock_guard<std::mutex> lock(mu_);
    keep_history_ = keep;
  }
  // Successful creates and replaces (not Puts); Create calls, refused ones included; Create
  // calls refused with RefuseCreates' status.
  int writes() const { return writes_; }
  int creates() const { return creates_; }
  int refused() const { return refused_; }
  // Each Patch: (name[/subresource], body), in order.
  std::vector<std::pair<std::string, std::string>> patches() const { return patches_.calls(); }
  // Results for the next Patch() calls, in order; Ok once they run out.
  void QueuePatchResult(Status result) { patches_.Queue(std::move(result)); }

  // While not Ok, Get, Create, Replace and Delete fail with `error` (the server away).
  void FailAll(Status error) { Set(fail_, std::move(error)); }
  // While not Ok, every Create is refused with `error` (403 from RBAC, say).
  void RefuseCreates(Status error) { Set(refuse_creates_, std::move(error)); }
  // While not Ok, every Replace is refused with `error`.
  void RefuseReplaces(Status error) { Set(refuse_replaces_, std::move(error)); }
  // Runs once, inside the next Replace, before it is served: a request that hangs meanwhile.
  void BeforeNextReplace(std::function<void()> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    before_replace_ = std::move(hook);
  }
  // Each change from now on (writes, Puts, deletes), in order, after it is kept.
  void Observe(std::function<void(const Change&)> observer) {
    std::lock_guard<std::mutex> lock(mu_);
    observers_.push_back(std::move(observer));
  }

 private:
  // A body as the API server takes it: parsed once, validated, then kept as sent.
  struct Sent {
    rapidjson::Document doc;
    std::string name, resource_version, holder;
    // The API server's validation: an object's annotations, keys and values together, have at
    // most 256 KiB (apimachinery's TotalAnnotationSizeLimitB); more is 422.
    static Result<Sent> Of(const std::string& body, bool validate = true) {
      Sent sent;
      sent.doc.Parse(body.c_str());
      if (sent.doc.HasParseError() || !sent.doc.IsObject()) return InvalidError("not a JSON object");
      const rapidjson::Value* meta = MemberOf(sent.doc, "metadata");
      if (!meta || !meta->IsObject()) return InvalidError("no metadata");
      const rapidjson::Value* annotations = MemberOf(*meta, "annotations");
      size_t total = 0;
      if (annotations && annotations->IsObject()) {
        for (auto it = annotations->MemberBegin(); it != annotations->MemberEnd(); ++it) {
          total += it->name.GetStringLength() + (it->value.IsString() ? it->value.GetStringLength() : 0);
        }
      }
      if (validate && total > 256 * 1024) {
        return Status(StatusCode::kInvalid, "metadata.annotations: Too long: must have at most 262144 bytes");
      }
      sent.name = StringMember(*meta, "name");
      sent.resource_version = StringMember(*meta, "resourceVersion");
      if (const rapidjson::Value* spec = MemberOf(sent.doc, "spec")) sent.holder = StringMember(*spec, "holderIdentity");
      return sent;
    }
  };

  void Set(Status& field, Status value) {
    std::lock_guard<std::mutex> lock(mu_);
    field = std::move(value);
  }

  // Keeps `sent` under a new resourceVersion, then (unlocked) tells the observers.
  KubeObject KeepAndTell(std::unique_lock<std::mutex>& lock, const std::string& namespace_name, Sent& sent) {
    const std::string version = std::to_string(++version_);
    auto& alloc = sent.doc.GetAllocator();
    auto& meta = sent.doc["metadata"];
    meta.RemoveMember("resourceVersion");
    meta.AddMember("resourceVersion", rapidjson::Value(version.c_str(), alloc), alloc);
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    sent.doc.Accept(w);
    KubeObject object{ObjectMeta{"uid-" + sent.name, namespace_name, sent.name, version, false}, buf.GetString()};
    objects_[sent.name] = object;
    if (keep_history_) history_.push_back(object);
    Tell(lock, Change{std::make_shared<const KubeObject>(object), sent.holder, false});
    return object;
  }
  void Tell(std::unique_lock<std::mutex>& lock, const Change& change) {
    auto observers = observers_;
    lock.unlock();
    for (auto& observer : observers) observer(change);
  }

  mutable std::mutex mu_;
  std::map<std::string, KubeObject> objects_;  // by name
  std::vector<KubeObject> history_;
  bool keep_history_ = true;
  int version_ = 0;
  std::atomic<int> writes_{0};
  std::atomic<int> creates_{0};
  std::atomic<int> refused_{0};
  Status fail_;
  Status refuse_creates_;
  Status refuse_replaces_;
  std::function<void()> before_replace_;
  CallLog<std::pair<std::string, std::string>> patches_;
  std::vector<std::function<void(const Change&)>> observers_;
};

}  // namespace nodehook
