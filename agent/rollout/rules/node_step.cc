#include "agent/rollout/rules/node_step.h"

namespace nodehook {
namespace {

constexpr NodeStep kEveryStep[] = {NodeStep::kWaiting,   NodeStep::kCordoning, NodeStep::kDraining,
                                   NodeStep::kRunning,   NodeStep::kRebooting, NodeStep::kVerifying,
                                   NodeStep::kUncordoning, NodeStep::kSoaking, NodeStep::kDone,
                                   NodeStep::kFailed,    NodeStep::kDeleted};

}  // namespace

const char* NodeStepName(NodeStep step) {
  switch (step) {
    case NodeStep::kWaiting: return "waiting";
    case NodeStep::kCordoning: return "cordoning";
    case NodeStep::kDraining: return "draining";
    case NodeStep::kRunning: return "running";
    case NodeStep::kRebooting: return "rebooting";
    case NodeStep::kVerifying: return "verifying";
    case NodeStep::kUncordoning: return "uncordoning";
    case NodeStep::kSoaking: return "soaking";
    case NodeStep::kDone: return "done";
    case NodeStep::kFailed: return "failed";
    case NodeStep::kDeleted: return "deleted";
  }
  return "waiting";
}

std::optional<NodeStep> NodeStepNamed(std::string_view name) {
  for (NodeStep step : kEveryStep) {
    if (name == NodeStepName(step)) return step;
  }
  return std::nullopt;
}

}  // namespace nodehook
