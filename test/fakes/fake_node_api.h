// FakeNodeApi: one Node and its pods in memory, with a disruption budget per pod as the Eviction
// API applies it (a pod whose budget allows no disruption is refused with 429), conflicts on stale
// resourceVersions, and counters of every call. Evicted pods become terminating; Finish() removes
// them, as a kubelet would. Thread-safe.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "agent/nodework/node_api.h"

namespace nodehook {

class FakeNodeApi final : public NodeApi {
 public:
  struct Pod {
    PodOnNode pod;
    int budget = -1;     // evictions the pod's own budget allows; -1 = no budget
    std::string group;   // a budget shared with other pods (SetGroupBudget); "" = its own
  };

  // A pod with a controller (a ReplicaSet's, or a DaemonSet's), as most are.
  void AddPod(const std::string& ns, const std::string& name, int budget = -1, bool daemon_set = false,
              const std::string& group = "") {
    PodOnNode pod;
    pod.namespace_name = ns;
    pod.name = name;
    pod.daemon_set = daemon_set;
    pod.controlled = true;
    AddPodAs(pod, budget, group);
  }
  // A pod as given (its uid made here): a bare one, one with emptyDir data, one that tolerates the cordon.
  void AddPodAs(PodOnNode pod, int budget = -1, const std::string& group = "") {
    std::lock_guard<std::mutex> lock(mu_);
    Pod p;
    p.pod = std::move(pod);
    p.pod.uid = "uid-" + p.pod.Key() + "-" + std::to_string(++uids_);
    p.budget = budget;
    p.group = group;
    pods_.push_back(p);
  }
  // Someone deleted the pod (kubectl delete --force).
  void RemovePod(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    pods_.erase(std::remove_if(pods_.begin(), pods_.end(), [&](const Pod& p) { return p.pod.Key() == key; }),
                pods_.end());
  }
  // A mark written as a rollout would, whatever the Node's cordon (a stale one: kubectl uncordon left it).
  void SetMark(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(mu_);
    node_.marks[key] = value;
    Bump();
  }
  // Evictions a budget shared by the pods of `group` allows now, as a PodDisruptionBudget's.
  void SetGroupBudget(const std::string& group, int allowed) {
    std::lock_guard<std::mutex> lock(mu_);
    groups_[group] = allowed;
  }
  void SetBudget(const std::string& key, int budget) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& p : pods_) {
      if (p.pod.Key() == key) p.budget = budget;
    }
  }
  // The kubelet finishes the evicted pods: they leave the node.
  void Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    pods_.erase(std::remove_if(pods_.begin(), pods_.end(), [](const Pod& p) { return p.pod.terminating; }),
                pods_.end());
  }
  // Someone else (kubectl cordon / uncordon) changes the Node.
  void SetUnschedulable(bool on) {
    std::lock_guard<std::mutex> lock(mu_);
    node_.unschedulable = on;
    Bump();
  }
  void SetNodeBootId(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu_);
    node_.boot_id = id;
    Bump();
  }
  void RemoveMark(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    node_.marks.erase(key);
    Bump();
  }
  // The next `n` node writes fail with 409, as if a kubelet had written the Node in between.
  void ConflictNext(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    conflicts_ = n;
  }
  void FailGets(bool fail) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_gets_ = fail;
  }
  NodeState node() const {
    std::lock_guard<std::mutex> lock(mu_);
    return node_;
  }
  std::vector<std::string> pods_left() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& p : pods_) out.push_back(p.pod.Key());
    return out;
  }
  int node_writes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return node_writes_;
  }
  std::map<std::string, int> evictions() const {  // by pod key, refusals included
    std::lock_guard<std::mutex> lock(mu_);
    return evictions_;
  }

  Result<NodeState> GetNode() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_gets_) return UnavailableError("connection refused");
    return node_;
  }
  Status Cordon(const NodeState& seen, const std::string& key, const std::string& value,
                const std::vector<std::string>& stale) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Stale(seen)) return Status(StatusCode::kConflict, "the object has been modified");
    node_.unschedulable = true;
    node_.marks[key] = value;
    for (const std::string& mark : stale) node_.marks.erase(mark);
    ++node_writes_;
    Bump();
    return Status::Ok();
  }
  Status Unmark(const NodeState& seen, const std::string& key, bool uncordon) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Stale(seen)) return Status(StatusCode::kConflict, "the object has been modified");
    node_.marks.erase(key);
    if (uncordon) node_.unschedulable = false;
    ++node_writes_;
    Bump();
    return Status::Ok();
  }
  Result<std::vector<PodOnNode>> Pods(const std::string& /*selector*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<PodOnNode> out;
    for (const auto& p : pods_) out.push_back(p.pod);
    return out;
  }
  Status Evict(const PodOnNode& pod, int /*grace_period_seconds*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++evictions_[pod.Key()];
    for (auto& p : pods_) {
      if (p.pod.uid != pod.uid) continue;
      int& budget = p.group.empty() ? p.budget : groups_[p.group];
      if (budget == 0) {
        return Status(StatusCode::kTooManyRequests,
                      "Cannot evict pod as it would violate the pod's disruption budget.");
      }
      if (budget > 0) --budget;
      p.pod.terminating = true;
      return Status::Ok();
    }
    return Status(StatusCode::kNotFound, "pods \"" + pod.name + "\" not found");
  }

 private:
  bool Stale(const NodeState& seen) {
    if (conflicts_ > 0) {
      --conflicts_;
      Bump();
      return true;
    }
    return seen.resource_version != node_.resource_version;
  }
  void Bump() { node_.resource_version = std::to_string(++version_); }

  mutable std::mutex mu_;
  NodeState node_{"node-uid", "node-a", false, {}, "boot-1", "1"};
  int version_ = 1;
  std::vector<Pod> pods_;
  int uids_ = 0;
  int conflicts_ = 0;
  bool fail_gets_ = false;
  int node_writes_ = 0;
  std::map<std::string, int> evictions_;
  std::map<std::string, int> groups_;
};

}  // namespace nodehook
