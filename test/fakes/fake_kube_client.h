// FakeKubeClient: a scripted KubeClient. Each List() and Watch() call takes the next scripted
// answer; with no script left, Watch() blocks until cancelled, like a quiet healthy watch.
// Records every call's options. Get() answers from objects given to PutObject() (not found once
// removed; FailGets injects errors) and records what it was asked for; Create() records
// its calls, answers with queued results (Ok when none) and can be held to simulate a slow server.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "agent/base/clock.h"
#include "agent/kube/client/kube_client.h"
#include "test/fakes/call_log.h"

namespace nodehook {

class FakeKubeClient final : public KubeClient {
 public:
  struct CreateCall {
    ResourceRef collection;
    std::string namespace_name;
    std::string body;
  };

  struct WatchScript {
    std::vector<WatchEvent> events;
    Status end;  // returned after the events
  };

  void QueueList(Result<ObjectList> list) {
    std::lock_guard<std::mutex> lock(mu_);
    lists_.push_back(std::move(list));
    cv_.notify_all();
  }
  void QueueWatch(WatchScript script) {
    std::lock_guard<std::mutex> lock(mu_);
    watches_.push_back(std::move(script));
    cv_.notify_all();
  }

  // With a clock, each List() call's time is recorded (list_times()).
  void UseClock(const Clock* clock) {
    std::lock_guard<std::mutex> lock(mu_);
    clock_ = clock;
  }
  std::vector<TimePoint> list_times() const {
    std::lock_guard<std::mutex> lock(mu_);
    return list_times_;
  }

  Result<ObjectList> List(const ResourceRef& r, const ListOptions& o) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (clock_) list_times_.push_back(clock_->Now());
    lists_made_.Record({r, o});
    if (lists_.empty()) return Status(StatusCode::kUnavailable, "no scripted list");
    auto next = std::move(lists_.front());
    lists_.pop_front();
    return next;
  }

  Status Watch(const ResourceRef&, const WatchOptions& o, const std::function<void(WatchEvent)>& on_event,
               const CancelToken& cancel) override {
    watches_made_.Record(o);
    CancelRegistration wake(cancel, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return cancel.cancelled() || !watches_.empty(); });
    if (cancel.cancelled()) return Status(StatusCode::kCancelled, "cancelled");
    WatchScript script = std::move(watches_.front());
    watches_.pop_front();
    lock.unlock();
    for (auto& ev : script.events) on_event(ev);
    return script.end;
  }

  Result<KubeObject> Get(const ObjectRef& o) override {
    gets_.Record(o);
    std::lock_guard<std::mutex> lock(mu_);
    if (!get_error_.ok()) return get_error_;
    auto it = objects_.find(o.namespace_name + "/" + o.name);
    if (it == objects_.end()) return NotFoundError("fake");
    return it->second;
  }
  struct PatchCall {
    std::string name;
    PatchType type;
    std::string body;
  };
  Status Patch(const ObjectRef& o, PatchType type, const std::string& body) override {
    return patches_.Take({o.name, type, body});
  }
  std::vector<PatchCall> patches() const { return patches_.calls(); }
  // Results for the next Patch() calls, in order; Ok once they run out.
  void QueuePatchResult(Status result) { patches_.Queue(std::move(result)); }

  Status Create(const ResourceRef& collection, const std::string& namespace_name, const std::string& body) override {
    creates_.Record({collection, namespace_name, body});
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !creates_held_; });
    }
    return creates_.Next();
  }

  struct ApplyCall {
    std::string name;
    std::string subresource;
    std::string field_manager;
    std::string body;
  };
  // Records the call; the next queued result (Ok once they run out).
  Status Apply(const ObjectRef& o, const std::string& subresource, const std::string& field_manager,
               const std::string& body) override {
    return applies_.Take({o.name, subresource, field_manager, body});
  }
  void QueueApplyResult(Status result) { applies_.Queue(std::move(result)); }
  std::vector<ApplyCall> apply_calls() const { return applies_.calls(); }

  // Records the body; the next queued result (Ok once they run out).
  Status CreateDryRun(const ResourceRef&, const std::string&, const std::string& body) override {
    return dry_runs_.Take(body);
  }
  void QueueDryRunResult(Status result) { dry_runs_.Queue(std::move(result)); }
  std::vector<std::string> dry_run_bodies() const { return dry_runs_.calls(); }

  // Records the call; the next queued result (Ok once they run out). An Ok delete also removes
  // the object from what Get() answers.
  Status Delete(const ObjectRef& o) override {
    Status result = deletes_.Take(o);
    if (result.ok()) RemoveObject(o.namespace_name, o.name);
    return result;
  }
  void QueueDeleteResult(Status result) { deletes_.Queue(std::move(result)); }
  std::vector<ObjectRef> delete_calls() const { return deletes_.calls(); }

  // Get() returns `object` for its namespace and name.
  void PutObject(KubeObject object) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_[object.meta.namespace_name + "/" + object.meta.name] = std::move(object);
  }
  // Get() answers "not found" from now on, as after the object (or Node) was deleted.
  void RemoveObject(const std::string& namespace_name, const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    objects_.erase(namespace_name + "/" + name);
  }
  // While not Ok, every Get() fails with `error` (e.g. the server is unavailable).
  void FailGets(Status error) {
    std::lock_guard<std::mutex> lock(mu_);
    get_error_ = std::move(error);
  }
  size_t get_call_count() const { return gets_.count(); }
  // What each Get() asked for, in order.
  std::vector<ObjectRef> get_refs() const { return gets_.calls(); }
  void QueueCreateResult(Status result) { creates_.Queue(std::move(result)); }
  // While held, Create() calls are recorded and then block until released.
  void HoldCreates(bool hold) {
    std::lock_guard<std::mutex> lock(mu_);
    creates_held_ = hold;
    cv_.notify_all();
  }
  void WaitForCreateCalls(size_t n) { creates_.WaitForCount(n); }
  std::vector<CreateCall> create_calls() const { return creates_.calls(); }

  // Blocks until at least `n` watch calls were made.
  void WaitForWatchCalls(size_t n) { watches_made_.WaitForCount(n); }
  void WaitForListCalls(size_t n) { lists_made_.WaitForCount(n); }
  std::vector<WatchOptions> watch_calls() const { return watches_made_.calls(); }
  size_t list_call_count() const { return lists_made_.count(); }
  // Each List() call's options (limit, continue token), in order.
  std::vector<ListOptions> list_calls() const {
    std::vector<ListOptions> options;
    for (const auto& [resource, o] : lists_made_.calls()) options.push_back(o);
    return options;
  }
  // What each List() call asked for (namespace, selectors), in order.
  std::vector<ResourceRef> list_resources() const {
    std::vector<ResourceRef> resources;
    for (const auto& [resource, o] : lists_made_.calls()) resources.push_back(resource);
    return resources;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<ObjectList>> lists_;
  std::deque<WatchScript> watches_;
  std::map<std::string, KubeObject> objects_;  // by "namespace/name"
  Status get_error_;
  const Clock* clock_ = nullptr;
  std::vector<TimePoint> list_times_;
  bool creates_held_ = false;
  CallLog<std::pair<ResourceRef, ListOptions>> lists_made_;
  CallLog<WatchOptions> watches_made_;
  CallLog<ObjectRef> gets_;
  CallLog<CreateCall> creates_;
  CallLog<std::string> dry_runs_;  // the bodies
  CallLog<ObjectRef> deletes_;
  CallLog<PatchCall> patches_;
  CallLog<ApplyCall> applies_;
};

}  // namespace nodehook
