#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "agent/rollout/rules/node_step.h"
#include "agent/rollout/rules/rollout_leases.h"

namespace nodehook {
namespace {

TEST_CASE("every node step has one name, and that name is that step", "[node_step]") {
  std::set<std::string> names;
  for (int i = static_cast<int>(NodeStep::kWaiting); i <= static_cast<int>(NodeStep::kDeleted); ++i) {
    const auto step = static_cast<NodeStep>(i);
    const std::string name = NodeStepName(step);
    INFO(name);
    CHECK(names.insert(name).second);
    REQUIRE(NodeStepNamed(name).has_value());
    CHECK(*NodeStepNamed(name) == step);
  }
  CHECK(names.size() == 11);
}

TEST_CASE("the names the state file and the Leases already hold keep their steps", "[node_step]") {
  // Written by earlier versions: an upgrade must read them as the same steps.
  CHECK(NodeStepNamed("cordoning") == NodeStep::kCordoning);
  CHECK(NodeStepNamed("draining") == NodeStep::kDraining);
  CHECK(NodeStepNamed("running") == NodeStep::kRunning);
  CHECK(NodeStepNamed("rebooting") == NodeStep::kRebooting);
  CHECK(NodeStepNamed("verifying") == NodeStep::kVerifying);
  CHECK(NodeStepNamed("uncordoning") == NodeStep::kUncordoning);
  CHECK(NodeStepNamed("soaking") == NodeStep::kSoaking);
  CHECK(NodeStepNamed("failed") == NodeStep::kFailed);
  CHECK(NodeStepNamed("deleted") == NodeStep::kDeleted);
}

TEST_CASE("a name no step has is none", "[node_step]") {
  CHECK_FALSE(NodeStepNamed("").has_value());
  CHECK_FALSE(NodeStepNamed("Running").has_value());
  CHECK_FALSE(NodeStepNamed("rebooted").has_value());
}

TEST_CASE("a slot Lease shows its holder's step by that name; a name that is no slot step reads as running",
          "[node_step]") {
  RolloutLease slot;
  slot.name = SlotLeaseName("rid", 0);
  slot.kind = "slot";
  slot.holder = "n0";
  slot.lease_duration_seconds = 30;
  slot.phase = NodeStep::kDraining;
  std::string json = RolloutLeaseJson("ns", "rid", slot);
  REQUIRE(json.find("\"draining\"") != std::string::npos);
  REQUIRE(ParseRolloutLease(json).ok());
  CHECK(ParseRolloutLease(json)->phase == NodeStep::kDraining);
  // Edited by hand to a step a slot never holds (or one a later version adds).
  for (const char* other : {"done", "deleted", "waiting", "rebooted"}) {
    std::string edited = json;
    edited.replace(edited.find("\"draining\""), 10, std::string("\"") + other + "\"");
    INFO(edited);
    REQUIRE(ParseRolloutLease(edited).ok());
    CHECK(ParseRolloutLease(edited)->phase == NodeStep::kRunning);
  }
}

}  // namespace
}  // namespace nodehook
