// FakeKubeClient: a scripted KubeClient. Each List() and Watch() call takes the next scripted
// answer; with no script left, Watch() blocks until cancelled, like a quiet healthy watch.
// Records every call's options. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "agent/kube/kube_client.h"

namespace nodehook {

class FakeKubeClient final : public KubeClient {
 public:
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

  Result<ObjectList> List(const ResourceRef&, const ListOptions& o) override {
    std::unique_lock<std::mutex> lock(mu_);
    list_calls_.push_back(o);
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

  Result<KubeObject> Get(const ObjectRef&) override { return NotFoundError("fake"); }
  Status Patch(const ObjectRef&, PatchType, const std::string&) override { return Status::Ok(); }

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

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result<ObjectList>> lists_;
  std::deque<WatchScript> watches_;
  std::vector<ListOptions> list_calls_;
  std::vector<WatchOptions> watch_calls_;
};

}  // namespace nodehook
