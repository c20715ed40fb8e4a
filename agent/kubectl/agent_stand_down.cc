#include "agent/kubectl/agent_stand_down.h"

#include <condition_variable>
#include <mutex>
#include <set>

#include "agent/finalizers/agent_pod_roster.h"
#include "agent/finalizers/agent_pods.h"

namespace nodehook {
namespace {

const ResourceRef kPods{"", "v1", "pods", "", ""};
const ResourceRef kDaemonSets{"apps", "v1", "daemonsets", "", ""};

std::string Describe(const KubeObject& pod) {
  std::string node = PodNodeName(pod.json);
  return pod.meta.Key() + " on " + (node.empty() ? "no node yet" : node) + (pod.meta.deleting ? " (terminating)" : "");
}

// The pods of `options`' namespace that its DaemonSet controls.
Result<std::vector<std::string>> PodsLeft(KubeClient& client, const StandDownOptions& options) {
  ResourceRef pods = kPods;
  pods.namespace_name = options.namespace_name;
  Result<ObjectList> listed = ListAll(client, pods);
  if (!listed.ok()) return listed.status();
  std::vector<std::string> left;
  for (const KubeObject& pod : listed->items) {
    if (ControllingDaemonSet(pod.json) == options.daemonset) left.push_back(Describe(pod));
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

}  // namespace

Status StandDownAgents(KubeClient& client, const StandDownOptions& options, Clock& clock, std::ostream& out) {
  const std::string daemonset = options.namespace_name + "/" + options.daemonset;
  Status deleted = client.Delete(ObjectRef{kDaemonSets, options.namespace_name, options.daemonset});
  if (!deleted.ok() && deleted.code() != StatusCode::kNotFound) {
    return Status(deleted.code(), "cannot delete DaemonSet " + daemonset + ": " + deleted.message());
  }
  out << (deleted.ok() ? "deleted DaemonSet " : "DaemonSet already gone: ") << daemonset << "\n";
  const TimePoint deadline = clock.Now() + options.timeout;
  std::mutex mu;
  std::condition_variable never;
  bool said_waiting = false;
  std::vector<std::string> last;
  while (true) {
    Result<std::vector<std::string>> left = PodsLeft(client, options);
    if (left.ok() && left->empty()) {
      out << "no agent pod of DaemonSet " << daemonset << " is left\n";
      return Status::Ok();
    }
    if (!left.ok() && !Retried(left.status().code())) {
      return Status(left.status().code(),
                    "cannot list the pods of DaemonSet " + daemonset + ": " + left.status().message());
    }
    std::string error;  // why this round could not list; "" when it did
    if (left.ok()) {
      last = std::move(left).value();
      if (!said_waiting) {
        out << "waiting for " << last.size() << " agent pod" << (last.size() == 1 ? "" : "s")
            << " to stop: " << Join(last) << "\n";
        said_waiting = true;
      }
    } else {
      error = left.status().message();
    }
    if (clock.Now() >= deadline) {
      return Status(StatusCode::kTimeout, "agent pods of DaemonSet " + daemonset + " still there after " +
                                              std::to_string(options.timeout.count() / 1000) + " s: " +
                                              (last.empty() ? error : Join(last)));
    }
    std::unique_lock<std::mutex> lock(mu);
    clock.WaitUntil(never, lock, std::min(deadline, clock.Now() + options.poll), [] { return false; });
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
