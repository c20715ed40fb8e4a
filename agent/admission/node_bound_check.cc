#include "agent/admission/node_bound_check.h"

#include <algorithm>

#include "agent/admission/node_bound_policy.h"
#include "agent/base/log.h"
#include "agent/base/mutex.h"
#include "agent/events/kube_event_recorder.h"

namespace nodehook {
namespace {

constexpr size_t kDetailLimit = 300;

}  // namespace

const char* NodeBoundName(NodeBound answer) {
  switch (answer) {
    case NodeBound::kProtected: return "protected";
    case NodeBound::kUnprotected: return "unprotected";
    case NodeBound::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string SelfCheckEventJson(const std::string& node_name, TimePoint now) {
  EventSpec event;
  event.name = "nodehook-self-check";  // a dry run: never stored, so never in anyone's way
  event.resource = ResourceRef{"", "v1", "nodes", "", ""};
  event.object = ObjectMeta{"", "", node_name, "", false};
  event.kind = "Node";
  event.handler = "self-check";
  event.note = "a dry run the node-bound admission rules must refuse; never stored";
  event.time = now;
  event.reason = "NodeBoundSelfCheck";
  // Never this node's name: the rules must refuse it.
  return EventBody(event, node_name + "-self-check");
}

NodeBoundAnswer JudgeSelfCheck(const Status& dry_run) {
  if (dry_run.ok()) return {NodeBound::kUnprotected, "a write in another node's name was accepted (dry run)"};
  std::string detail = dry_run.message().substr(0, kDetailLimit);
  bool by_rules = dry_run.code() == StatusCode::kForbidden &&
                  dry_run.message().find("ValidatingAdmissionPolicy") != std::string::npos &&
                  dry_run.message().find(kOtherNodeRefusal) != std::string::npos;
  return {by_rules ? NodeBound::kProtected : NodeBound::kUnknown, detail};
}

NodeBoundCheck::NodeBoundCheck(KubeClient& client, Clock& clock, NodeBoundCheckOptions options)
    : client_(client), clock_(clock), options_(std::move(options)) {
  if (options_.metrics) {
    gauge_ = &options_.metrics->GetGauge(
        "node_bound", "1 when admission rules refuse this agent's writes for other nodes, 0 when they do not, -1 unknown");
    gauge_->Set(-1);
  }
}

NodeBoundAnswer NodeBoundCheck::CheckOnce() {
  ResourceRef events{"events.k8s.io", "v1", "events", "", ""};
  NodeBoundAnswer answer =
      JudgeSelfCheck(client_.CreateDryRun(events, "default", SelfCheckEventJson(options_.node_name, clock_.Now())));
  bool changed;
  {
    MutexLock lock(&mu_);
    changed = !checked_ || latest_.answer != answer.answer;
    checked_ = true;
    latest_ = answer;
  }
  if (gauge_) gauge_->Set(answer.answer == NodeBound::kProtected ? 1 : answer.answer == NodeBound::kUnprotected ? 0 : -1);
  if (changed) {
    const char* next = answer.answer == NodeBound::kProtected
                           ? "check again in an hour"
                           : answer.answer == NodeBound::kUnprotected
                                 ? "go on unconfined; apply the rules `nodehook rbac` prints (docs/security.md)"
                                 : "ask again in a minute, then less often";
    Log(answer.answer == NodeBound::kProtected ? LogLevel::kInfo : LogLevel::kWarn, "node isolation checked",
        {{"node", options_.node_name}, {"result", NodeBoundName(answer.answer)}, {"detail", answer.detail},
         {"next", next}});
  }
  return answer;
}

void NodeBoundCheck::Run(const CancelToken& stop) {
  int unsettled = 0;  // checks in a row that did not find the rules in force
  while (!stop.cancelled()) {
    NodeBoundAnswer answer = CheckOnce();
    // Not protected: ask again after a minute, doubling up to `every`. The rules may be applied
    // just after the agent starts (one `kubectl apply`), and an API server loads them a moment
    // later; a fleet without them still costs only one dry run per node an hour in the end.
    Duration wait = options_.every;
    if (answer.answer != NodeBound::kProtected) {
      wait = options_.unknown_retry * (int64_t{1} << std::min(unsettled++, 20));
      wait = std::min(wait, options_.every);
    } else {
      unsettled = 0;
    }
    SleepUnlessCancelled(clock_, wait, stop);
  }
}

NodeBoundAnswer NodeBoundCheck::Latest() const {
  MutexLock lock(&mu_);
  return latest_;
}

}  // namespace nodehook
