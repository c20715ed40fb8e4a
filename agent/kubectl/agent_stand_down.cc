#include "agent/kubectl/agent_stand_down.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "agent/base/log.h"
#include "agent/base/mutex.h"
#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/agent_pods.h"
#include "agent/kubectl/dead_node_pods.h"

namespace nodehook {
namespace {

const ResourceRef kPods{"", "v1", "pods", "", ""};
const ResourceRef kDaemonSets{"apps", "v1", "daemonsets", "", ""};

std::string Describe(const KubeObject& pod) {
  std::string node = PodNodeName(pod.json);
  return pod.meta.Key() + " on " + (node.empty() ? "no node yet" : node) + (pod.meta.deleting ? " (terminating)" : "");
}

// The pods of `options`' namespace that its DaemonSet controls.
Result<std::vector<KubeObject>> PodsLeft(KubeClient& client, const StandDownOptions& options) {
  ResourceRef pods = kPods;
  pods.namespace_name = options.namespace_name;
  Result<ObjectList> listed = ListAll(client, pods);
  if (!listed.ok()) return listed.status();
  std::vector<KubeObject> left;
  for (KubeObject& pod : listed->items) {
    if (ControllingDaemonSet(pod.json) == options.daemonset) left.push_back(std::move(pod));
  }
  return left;
}

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& s : items) joined += (joined.empty() ? "" : ", ") + s;
  return joined;
}

bool Retried(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kTimeout || code == StatusCode::kTooManyRequests;
}

// One round's look at the Nodes of pods past their grace period: each Node read once.
class DeadNodes {
 public:
  DeadNodes(KubeClient& client, int64_t now_ms) : client_(client), now_ms_(now_ms) {}

  // Why `pod` is not waited for (dead_node_pods.h); "" = wait for it.
  std::string WhyNot(const KubeObject& pod) {
    const std::optional<int64_t> deletion = PodDeletionMs(pod.json);
    const std::string node = PodNodeName(pod.json);
    if (!deletion || node.empty() || !PastGraceAndMargin(*deletion, now_ms_)) return "";
    auto seen = nodes_.find(node);
    if (seen == nodes_.end()) {
      Result<KubeObject> read = client_.Get(ObjectRef{ResourceRef{"", "v1", "nodes", "", ""}, "", node});
      Node found{read.ok() || read.status().code() == StatusCode::kNotFound, std::nullopt};
      if (read.ok()) found.json = read->json;
      if (!found.readable) error_ = "cannot tell whether node " + node + " is dead: " + read.status().message();
      seen = nodes_.emplace(node, std::move(found)).first;
    }
    // A Node that cannot be read is taken as alive.
    return seen->second.readable ? WhyNotWaitedFor(seen->second.json, *deletion, now_ms_) : "";
  }
  const std::string& error() const { return error_; }

 private:
  struct Node {
    bool readable;
    std::optional<std::string> json;  // nullopt: gone
  };
  KubeClient& client_;
  const int64_t now_ms_;
  std::map<std::string, Node> nodes_;
  std::string error_;
};

}  // namespace

Status StandDownAgents(KubeClient& client, const StandDownOptions& options, Clock& clock, std::ostream& out) {
  const std::string daemonset = options.namespace_name + "/" + options.daemonset;
  Status deleted = client.Delete(ObjectRef{kDaemonSets, options.namespace_name, options.daemonset});
  if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) {
    return Status(deleted.code(), "cannot delete DaemonSet " + daemonset + ": " + deleted.message());
  }
  // Each line flushed: a person (or `kubectl logs` of the uninstall Job) follows the wait.
  out << (deleted.ok() ? "deleted DaemonSet " : "DaemonSet already gone: ") << daemonset << std::endl;
  const TimePoint deadline = clock.Now() + options.timeout;
  Mutex mu;
  std::condition_variable never;
  bool said_waiting = false;
  std::vector<std::string> last;
  std::map<std::string, std::string> not_waited;  // uid -> the pod, as said
  std::string node_error;                        // the last Node that could not be read
  while (true) {
    Result<std::vector<KubeObject>> pods = PodsLeft(client, options);
    if (!pods.ok() && !Retried(pods.status().code())) {
      return Status(pods.status().code(),
                    "cannot list the pods of DaemonSet " + daemonset + ": " + pods.status().message());
    }
    std::string error;  // why this round could not list; "" when it did
    if (pods.ok()) {
      const Duration offset = options.server_offset ? options.server_offset() : Duration(0);
      DeadNodes dead(client, ToMillis(clock.Now() + offset));
      std::vector<std::string> left;
      for (const KubeObject& pod : *pods) {
        if (not_waited.count(pod.meta.uid) > 0) continue;
        const std::string why = dead.WhyNot(pod);
        if (why.empty()) {
          left.push_back(Describe(pod));
          continue;
        }
        not_waited[pod.meta.uid] = Describe(pod);
        out << "not waiting for " << Describe(pod) << ": " << why << std::endl;
        Log(LogLevel::kWarn, "agent pod not waited for",
            {{"pod", pod.meta.Key()}, {"node", PodNodeName(pod.json)}, {"reason", why},
             {"next", "release without it; should its agent still run, a finalizer it puts back needs another "
                      "release"}});
      }
      if (!dead.error().empty()) node_error = dead.error();
      if (left.empty()) {
        out << "no agent pod of DaemonSet " << daemonset << " is left";
        std::vector<std::string> skipped;
        skipped.reserve(not_waited.size());
        for (const auto& [uid, pod] : not_waited) skipped.push_back(pod);
        if (!skipped.empty()) out << " to wait for (not waited for: " << Join(skipped) << ")";
        out << std::endl;
        return Status::Ok();
      }
      last = std::move(left);
      if (!said_waiting) {
        out << "waiting for " << last.size() << " agent pod" << (last.size() == 1 ? "" : "s")
            << " to stop: " << Join(last) << std::endl;
        said_waiting = true;
      }
    } else {
      error = pods.status().message();
    }
    if (clock.Now() >= deadline) {
      return Status(StatusCode::kTimeout, "agent pods of DaemonSet " + daemonset + " still there after " +
                                              std::to_string(options.timeout.count() / 1000) + " s: " +
                                              (last.empty() ? error : Join(last)) +
                                              (node_error.empty() ? "" : " (" + node_error + ")"));
    }
    MutexLock lock(&mu);
    WaitUntil(clock, never, mu, std::min(deadline, clock.Now() + options.poll), [] { return false; });
  }
}

Result<std::vector<std::string>> RunningAgents(KubeClient& client, const std::string& legacy_selector) {
  std::vector<std::string> running;
  std::set<std::string> seen;
  for (const std::string& selector : {std::string(kAgentPodLabel), legacy_selector}) {
    ResourceRef pods = kPods;
    pods.label_selector = selector;
    Result<ObjectList> listed = ListAll(client, pods);
    if (!listed.ok()) return listed.status();
    for (const KubeObject& pod : listed->items) {
      std::string owner = ControllingDaemonSet(pod.json);
      // Unlabelled: a Job's pod (the chart's uninstall Job), a pod run by hand.
      if (owner.empty() && !LabelledAgentPod(pod.json)) continue;
      if (!seen.insert(pod.meta.namespace_name + "/" + pod.meta.name).second) continue;
      running.push_back(Describe(pod) + (owner.empty() ? "" : " (DaemonSet " + pod.meta.namespace_name + "/" + owner + ")"));
    }
  }
  return running;
}

}  // namespace nodehook
