#include "agent/kubectl/rollout_report.h"

#include <algorithm>

#include "agent/base/printable.h"
#include "agent/base/text_table.h"
#include "agent/base/utc_time.h"

namespace nodehook {
namespace {

constexpr size_t kMessageWidth = 80;
constexpr size_t kShownDigest = 12;

std::string CountText(const NodeCount& count) {
  return std::to_string(count.value) + (count.percent ? "%" : "");
}

std::string Header(const RolloutView& view, const std::vector<NodeStatus>& statuses) {
  const RolloutPolicy& policy = view.shared.policy;
  std::string out = view.Describe() + "  state " + view.state.state.substr(0, kShownDigest) + "  " +
                    PolicySummary(policy) + "  nodes=" + std::to_string(view.board.nodes.size()) + "\n";
  std::string why;
  bool halted = Halted(policy, view.board, view.state, &why);
  bool resumed = halted && view.state.resume_state == view.state.state;
  int done = 0;
  for (const auto& s : statuses) done += s.phase == NodeStep::kDone ? 1 : 0;
  if (halted) out += resumed ? "halted (" + why + "), resumed\n" : "halted: " + why + "\n";
  if (view.state.paused) out += std::string("paused (annotation ") + kRolloutPausedAnnotation + ")\n";
  if (RolloutComplete(policy, view.board, view.state, view.now_ms)) {
    out += "complete: every node is done\n";
  } else {
    out += "in progress: " + std::to_string(done) + " of " + std::to_string(statuses.size()) + " nodes done\n";
  }
  return out;
}

}  // namespace

std::string PolicySummary(const RolloutPolicy& policy) {
  return "max_nodes=" + CountText(policy.max_nodes) + " canary_nodes=" + std::to_string(policy.canary_nodes) +
         " soak=" + std::to_string(policy.soak.count()) + "s max_failed_nodes=" + CountText(policy.max_failed_nodes) +
         (policy.verify ? " verify" : "") + " windows=" + std::to_string(policy.windows.size());
}

std::string WaitingText(const NodeStatus& status) {
  if (status.phase != NodeStep::kWaiting) return status.detail;
  const auto& a = status.admission;  // RolloutAdmission
  std::string out = a.enter ? "may start now (slot " + std::to_string(a.slot) + ")" : WaitReasonName(a.wait);
  if (!a.enter && !a.detail.empty()) out += ": " + a.detail;
  if (!a.enter && a.wait == WaitReason::kOutsideWindow && a.until_ms > 0) {
    out += " until " + MicroTime(FromMillis(a.until_ms));
  }
  if (!status.detail.empty()) out += "; " + status.detail;
  return out;
}

std::string FormatRolloutStatus(const RolloutView& view) {
  std::vector<NodeStatus> statuses = RolloutStatus(view.shared.policy, view.board, view.state, view.held,
                                                   view.window, view.now_ms);
  std::vector<std::vector<std::string>> rows{{"NODE", "CANARY", "PHASE", "WAITING FOR / DETAIL", "MESSAGE"}};
  for (const NodeStatus& s : statuses) {
    rows.push_back({s.node, s.canary ? "yes" : "-", NodeStepName(s.phase), EscapeForTerminal(WaitingText(s)),
                    OneLine(EscapeForTerminal(s.message), kMessageWidth)});
  }
  return Header(view, statuses) + FormatTextTable(rows);
}

std::string FormatRolloutPlan(const RolloutView& view) {
  const RolloutPolicy& policy = view.shared.policy;
  std::vector<NodeStatus> statuses = RolloutStatus(policy, view.board, view.state, view.held, view.window, view.now_ms);
  const int batch_size = std::max(policy.max_nodes.Resolve(static_cast<int>(view.board.nodes.size())), 1);
  std::vector<std::vector<std::string>> rows{{"ORDER", "BATCH", "NODE", "CANARY", "NOW", "BLOCKED BY"}};
  // Canaries go in batches of their own: the others start only once every canary soaked.
  int order = 0, batch = 0, in_batch = batch_size;
  bool canary_batches = true;
  for (const NodeStatus& s : statuses) {
    if (canary_batches && !s.canary) {
      canary_batches = false;
      in_batch = batch_size;
    }
    if (in_batch == batch_size) {
      ++batch;
      in_batch = 0;
    }
    ++in_batch;
    rows.push_back({std::to_string(++order), std::to_string(batch), s.node, s.canary ? "yes" : "-",
                    NodeStepName(s.phase), EscapeForTerminal(WaitingText(s))});
  }
  return Header(view, statuses) + FormatTextTable(rows);
}

}  // namespace nodehook
