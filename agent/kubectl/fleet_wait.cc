#include "agent/kubectl/fleet_wait.h"

#include "agent/base/printable.h"
#include "agent/kubectl/rollout_report.h"

namespace nodehook {
namespace {

constexpr size_t kMessageBytes = 300;

std::string PendingHandlers(const ObjectView& o) {
  std::string out;
  for (const HandlerRecord& h : o.handlers) {
    out += (out.empty() ? "" : "; ") + h.handler + ":" + h.last_outcome + "(" + std::to_string(h.retries) + ")";
    if (!h.last_message.empty()) out += ": " + Abbreviate(h.last_message, kMessageBytes);
  }
  return out;
}

// Asked for one uid, an agent that has no such object answers 404 (objects_endpoint.h).
bool KnowsNoSuchObject(const Status& error) {
  return error.code() == StatusCode::kNotFound && error.message().find("knows no such object") != std::string::npos;
}

}  // namespace

WaitVerdict JudgeRolloutWait(const RolloutView& view) {
  WaitVerdict verdict;
  const RolloutPolicy& policy = view.shared.policy;
  verdict.nodes = static_cast<int>(view.board.nodes.size());
  std::string why;
  bool halted = view.state.resume_state != view.state.state && Halted(policy, view.board, view.state, &why);
  for (const NodeStatus& s : RolloutStatus(policy, view.board, view.state, view.held, view.window, view.now_ms)) {
    // Done once its result for this state is in; a soak still running does not make it undone.
    if (s.phase == NodeStep::kDone || s.phase == NodeStep::kSoaking) {
      auto n = view.board.nodes.find(s.node);
      auto r = n->second.find(view.state.uid);
      if (r != n->second.end() && r->second.state == view.state.state && !r->second.failed) continue;
    }
    std::string text = NodeStepName(s.phase);
    std::string waiting = WaitingText(s);
    if (!waiting.empty()) text += " (" + waiting + ")";
    if (!s.message.empty()) text += ": " + Abbreviate(s.message, kMessageBytes);
    verdict.blockers.push_back({s.node, text});
  }
  if (halted) {
    verdict.kind = WaitVerdict::Kind::kHalted;
    verdict.summary = "the rollout of " + view.Describe() + " halted: " + why;
  } else if (verdict.blockers.empty() && verdict.nodes > 0) {
    verdict.kind = WaitVerdict::Kind::kDone;
    verdict.summary = "every node (" + std::to_string(verdict.nodes) + ") handled " + view.Describe() + " state " +
                      view.state.state.substr(0, 12);
  } else {
    verdict.summary = std::to_string(verdict.blockers.size()) + " of " + std::to_string(verdict.nodes) +
                      " nodes have not handled " + view.Describe() + " state " + view.state.state.substr(0, 12);
  }
  return verdict;
}

WaitVerdict JudgeSurveyWait(const std::vector<NodeAnswer>& answers, const std::string& uid,
                            const std::optional<std::string>& live_resource_version) {
  WaitVerdict verdict;
  for (const NodeAnswer& a : answers) {
    if (!a.error.ok() && !KnowsNoSuchObject(a.error)) {
      verdict.blockers.push_back({a.NodeName(), "did not answer: " + a.error.message()});
      continue;
    }
    ++verdict.nodes;
    const ObjectView* listed = nullptr;
    for (const ObjectView& o : a.objects.objects) {
      if (o.uid == uid) listed = &o;
    }
    if (!live_resource_version) {
      if (listed) {
        std::string pending = PendingHandlers(*listed);
        verdict.blockers.push_back({a.NodeName(), "still lists the deleted object" + (pending.empty() ? "" : ": " + pending)});
      }
      continue;
    }
    if (!listed) {
      verdict.blockers.push_back({a.NodeName(), "has not handled it yet (not listed)"});
    } else if (!listed->handlers.empty()) {
      verdict.blockers.push_back({a.NodeName(), PendingHandlers(*listed)});
    } else if (listed->settled_resource_version != *live_resource_version) {
      verdict.blockers.push_back(
          {a.NodeName(), "settled at resourceVersion " +
                             (listed->settled_resource_version.empty() ? std::string("(none yet)")
                                                                       : listed->settled_resource_version) +
                             ", the object is at " + *live_resource_version});
    }
  }
  if (!verdict.blockers.empty() || (live_resource_version && verdict.nodes == 0)) {
    verdict.summary = std::to_string(verdict.blockers.size()) + " of " + std::to_string(answers.size()) +
                      " nodes have not handled " +
                      (live_resource_version ? "resourceVersion " + *live_resource_version : std::string("the deletion"));
    return verdict;
  }
  verdict.kind = WaitVerdict::Kind::kDone;
  verdict.summary = live_resource_version ? "every node (" + std::to_string(verdict.nodes) +
                                                ") handled resourceVersion " + *live_resource_version
                                          : "deleted, and no node lists it any more";
  return verdict;
}

std::string FormatBlockers(const WaitVerdict& verdict) {
  std::string out;
  for (const WaitBlocker& b : verdict.blockers) out += "  " + b.node + ": " + EscapeForTerminal(b.why) + "\n";
  return out;
}

}  // namespace nodehook
