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
#include <vector>

#include "agent/base/clock.h"
#include "agent/kube/client/kube_client.h"

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
    std::unique_lock<std::mutex> lock(mu_);
    list_calls_.push_back(o);
    list_resources_.push_back(r);
    if (clock_) list_times_.push_back(clock_->Now());
    cv_.notify_all();
    if (lists_.empty()) return Status(StatusCode::kUnavailable, "no scripted list");
    auto next = std::move(lists_.front());
    lists_.pop_front();
    return next;
  }

  Status Watch(const ResourceRef&, const WatchOptions& o, const std::function<void(WatchEvent)>& on_event,
               const CancelToken& cancel) override {
    CancelRegistration wake(cancel, [this] {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    watch_calls_.push_back(o);
    cv_.notify_all();
    cv_.wait(lock, [&] { return cancel.cancelled() || !watches_.empty(); });
    if (cancel.cancelled()) return Status(StatusCode::kCancelled, "cancelled");
    WatchScript script = std::move(watches_.front());
    watches_.pop_front();
    lock.unlock();
    for (auto& ev : script.events) on_event(ev);
    return script.end;
  }

  Result<KubeObject> Get(const ObjectRef& o) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++get_calls_;
    get_refs_.push_back(o);
    if (!get_error_.ok()) return get_error_;
    auto it = objects_.find(o.namespace_name + "/" + o.name);
    if (it == objects_.end()) return NotFoundError("fake");
    return it->second;
  }
  Status Patch(const ObjectRef& o, PatchType type, const std::string& body) override {
    std::lock_guard<std::mutex> lock(mu_);
    patches_.push_back({o.name, type, body});
    if (patch_results_.empty()) return Status::Ok();
    Status next = patch_results_.front();
    patch_results_.pop_front();
    return next;
  }
  struct PatchCall {
    std::string name;
    PatchType type;
    std::string body;
  };
  std::vector<PatchCall> patches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return patches_;
  }
  // Results for the next Patch() calls, in order; Ok once they run out.
  void QueuePatchResult(Status result) {
    std::lock_guard<std::mutex> lock(mu_);
    patch_results_.push_back(std::move(result));
  }

  Status Create(const ResourceRef& collection, const std::string& namespace_name, const std::string& body) override {
    std::unique_lock<std::mutex> lock(mu_);
    create_calls_.push_back({collection, namespace_name, body});
    cv_.notify_all();
    cv_.wait(lock, [&] { return !creates_held_; });
    if (create_results_.empty()) return Status::Ok();
    Status result = create_results_.front();
    create_results_.pop_front();
    return result;
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
    std::lock_guard<std::mutex> lock(mu_);
    apply_calls_.push_back({o.name, subresource, field_manager, body});
    if (apply_results_.empty()) return Status::Ok();
    Status result = apply_results_.front();
    apply_results_.pop_front();
    return result;
  }
  void QueueApplyResult(Status result) {
    std::lock_guard<std::mutex> lock(mu_);
    apply_results_.push_back(std::move(result));
  }
  std::vector<ApplyCall> apply_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return apply_calls_;
  }

  // Records the body; the next queued result (Ok once they run out).
  Status CreateDryRun(const ResourceRef&, const std::string&, const std::string& body) override {
    std::lock_guard<std::mutex> lock(mu_);
    dry_run_bodies_.push_back(body);
    if (dry_run_results_.empty()) return Status::Ok();
    Status result = dry_run_results_.front();
    dry_run_results_.pop_front();
    return result;
  }
  void QueueDryRunResult(Status result) {
    std::lock_guard<std::mutex> lock(mu_);
    dry_run_results_.push_back(std::move(result));
  }
  std::vector<std::string> dry_run_bodies() const {
    std::lock_guard<std::mutex> lock(mu_);
    return dry_run_bodies_;
  }

  // Records the call; the next queued result (Ok once they run out). An Ok delete also removes
  // the object from what Get() answers.
  Status Delete(const ObjectRef& o) override {
    std::lock_guard<std::mutex> lock(mu_);
    delete_calls_.push_back(o);
    Status result;
    if (!delete_results_.empty()) {
      result = delete_results_.front();
      delete_results_.pop_front();
    }
    if (result.ok()) objects_.erase(o.namespace_name + "/" + o.name);
    return result;
  }
  void QueueDeleteResult(Status result) {
    std::lock_guard<std::mutex> lock(mu_);
    delete_results_.push_back(std::move(result));
  }
  std::vector<ObjectRef> delete_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return delete_calls_;
  }

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
  size_t get_call_count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return get_calls_;
  }
  // What each Get() asked for, in order.
  std::vector<ObjectRef> get_refs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return get_refs_;
  }
  void QueueCreateResult(Status result) {
    std::lock_guard<std::mutex> lock(mu_);
    create_results_.push_back(std::move(result));
  }
  // While held, Create() calls are recorded and then block until released.
  void HoldCreates(bool hold) {
    std::lock_guard<std::mutex> lock(mu_);
    creates_held_ = hold;
    cv_.notify_all();
  }
  void WaitForCreateCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return create_calls_.size() >= n; });
  }
  std::vector<CreateCall> create_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return create_calls_;
  }

  // Blocks until at least `n` watch calls were made.
  void WaitForWatchCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return watch_calls_.size() >= n; });
  }
  void WaitForListCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return list_calls_.size() >= n; });
  }
  std::vector<WatchOptions> watch_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return watch_calls_;
  }
  size_t list_call_count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return list_calls_.size();
  }
  // Each List() call's options (limit, continue token), in order.
  std::vector<ListOptions> list_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return list_calls_;
  }
  // What each List() call asked for (namespace, selectors), in order.
  std::vector<ResourceRef> list_resources() const {
    std::lock_guard<std::mutex> lock(mu_);
    return list_resources_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<ObjectList>> lists_;
  std::deque<WatchScript> watches_;
  std::vector<ListOptions> list_calls_;
  std::vector<ResourceRef> list_resources_;
  std::vector<WatchOptions> watch_calls_;
  std::map<std::string, KubeObject> objects_;  // by "namespace/name"
  size_t get_calls_ = 0;
  std::vector<ObjectRef> get_refs_;
  Status get_error_;
  std::deque<Status> create_results_;
  std::deque<Status> dry_run_results_;
  std::vector<std::string> dry_run_bodies_;
  std::deque<Status> delete_results_;
  std::vector<ObjectRef> delete_calls_;
  std::vector<CreateCall> create_calls_;
  std::vector<PatchCall> patches_;
  std::vector<ApplyCall> apply_calls_;
  std::deque<Status> apply_results_;
  const Clock* clock_ = nullptr;
  std::vector<TimePoint> list_times_;
  std::deque<Status> patch_results_;
  bool creates_held_ = false;
};

}  // namespace nodehook
