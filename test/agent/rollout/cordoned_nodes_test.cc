// The Nodes a rollout keeps cordoned, as the coordinator counts them: cordoned and marked by this
// rollout; a stale mark (schedulable Node) or another rollout's mark counts for nothing.
#include <catch2/catch.hpp>

#include "agent/rollout/coordinator/cordoned_nodes.h"
#include "agent/rollout/rules/rollout_cordons.h"
#include "agent/rollout/rules/rollout_judge.h"

namespace nodehook {
namespace {

ObjectPtr NodeJson(const std::string& name, bool unschedulable, const std::string& annotations) {
  auto node = std::make_shared<KubeObject>();
  node->meta.name = name;
  node->meta.uid = "uid-" + name;
  node->json = R"({"metadata":{"name":")" + name + R"(","annotations":{)" + annotations + R"(}},"spec":{)" +
               (unschedulable ? R"("unschedulable":true)" : "") + "}}";
  return node;
}

const std::string kOurs = R"("nodehook.io/cordoned-abcdef0123.0a0b0c0d0e0f":"{\"object\":\"shop/kernel\",\"uid\":\"u1\",\"state\":\"s1\"}")";
const std::string kTheirs = R"("nodehook.io/cordoned-9999999999.0a0b0c0d0e0f":"{\"object\":\"shop/other\"}")";

TEST_CASE("a cordoned Node with this rollout's mark counts, with the objects its marks name") {
  CHECK(RolloutCordonOf("abcdef0123", NodeJson("a", true, kOurs)->json) == std::optional<std::string>("shop/kernel"));
  CHECK_FALSE(RolloutCordonOf("abcdef0123", NodeJson("a", false, kOurs)->json));  // stale: uncordoned by someone
  CHECK_FALSE(RolloutCordonOf("abcdef0123", NodeJson("a", true, kTheirs)->json));  // another rollout's
  CHECK_FALSE(RolloutCordonOf("abcdef0123", NodeJson("a", true, "")->json));       // someone else's cordon
  CHECK_FALSE(RolloutCordonOf("abcdef0123", "not json"));
}

TEST_CASE("the watch of cordoned Nodes keeps the rollout's: an uncordon takes a Node out") {
  CordonedNodes cordoned("abcdef0123");
  CHECK_FALSE(cordoned.listed());
  cordoned.OnListed({NodeJson("a", true, kOurs), NodeJson("b", true, kTheirs)}, {});
  CHECK(cordoned.listed());
  CHECK(cordoned.Nodes() == std::map<std::string, std::string>{{"a", "shop/kernel"}});
  cordoned.OnObject(NodeJson("c", true, kOurs + "," + kTheirs));
  CHECK(cordoned.Nodes().size() == 2);
  cordoned.OnObject(NodeJson("a", true, ""));  // the mark taken off: a person's cordon now
  cordoned.OnDeleted(NodeJson("c", true, kOurs));  // uncordoned: it left the watch's selector
  CHECK(cordoned.Nodes().empty());
}

TEST_CASE("rollout status says which node the rollout keeps cordoned outside any slot") {
  BoardView board;
  board.nodes["a"];
  board.nodes["b"];
  board.cordoned["a"] = "shop/kernel";
  RolloutPolicy policy;
  policy.max_nodes = NodeCount{1, false};
  const RolloutObject object{"u1", "s1", false, ""};
  std::vector<NodeStatus> statuses = RolloutStatus(policy, board, object, {}, WindowNow{}, 0);
  for (const NodeStatus& s : statuses) {
    if (s.node == "a") {
      CHECK(s.admission.enter);
      CHECK(s.detail == "cordoned by the rollout (shop/kernel), outside any slot");
    } else {
      CHECK(s.admission.wait == WaitReason::kNoFreeSlot);
      CHECK(s.admission.detail == "1 of 1 nodes disrupted (cordoned by the rollout: a)");
    }
  }
}

}  // namespace
}  // namespace nodehook
