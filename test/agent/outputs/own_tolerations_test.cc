// A hook's NoExecute taint is judged by the agent's own pod's tolerations: one the pod does not
// tolerate for good would evict the agent, which could then never take it off.
#include <catch2/catch.hpp>

#include "agent/outputs/own_tolerations.h"

namespace nodehook {
namespace {

OutputTaint Taint(const std::string& key, const std::string& value, const std::string& effect) {
  return OutputTaint{key, value, effect};
}

PublishedOutputs Taints(std::vector<OutputTaint> taints) {
  PublishedOutputs outputs;
  outputs.taints = std::move(taints);
  return outputs;
}

OwnTolerations Own(std::vector<Toleration> tolerations) {
  return OwnTolerations{"nodehook/nodehook-x1", std::move(tolerations), ""};
}

TEST_CASE("a toleration matches a taint as the scheduler and the taint manager match them") {
  const OutputTaint t = Taint("widgets.example.com/t", "v", "NoExecute");
  CHECK(Tolerates({"", "Exists", "", "", std::nullopt}, t));  // the shipped one: every taint
  CHECK(Tolerates({"widgets.example.com/t", "Exists", "", "NoExecute", std::nullopt}, t));
  CHECK(Tolerates({"widgets.example.com/t", "Equal", "v", "", std::nullopt}, t));
  CHECK(Tolerates({"widgets.example.com/t", "", "v", "NoExecute", std::nullopt}, t));  // "" is Equal
  CHECK_FALSE(Tolerates({"widgets.example.com/t", "Equal", "w", "NoExecute", std::nullopt}, t));
  CHECK_FALSE(Tolerates({"widgets.example.com/t", "Exists", "", "NoSchedule", std::nullopt}, t));
  CHECK_FALSE(Tolerates({"widgets.example.com/other", "Exists", "", "", std::nullopt}, t));
}

TEST_CASE("a pod's tolerations are read from its spec, tolerationSeconds included") {
  auto read = ParseTolerations(
      R"({"spec":{"tolerations":[{"operator":"Exists"},)"
      R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}})");
  REQUIRE(read.ok());
  REQUIRE(read->size() == 2);
  CHECK((*read)[0].op == "Exists");
  CHECK((*read)[0].key.empty());
  CHECK((*read)[1].seconds == 300);
  CHECK(ParseTolerations(R"({"spec":{}})")->empty());
  CHECK(ParseTolerations("[").status().code() == StatusCode::kInvalid);
}

TEST_CASE("a NoExecute taint the own pod does not tolerate for good is refused, naming the taint and the pod") {
  const PublishedOutputs outputs = Taints({Taint("widgets.example.com/quiet", "", "NoSchedule"),
                                           Taint("widgets.example.com/drain", "", "NoExecute")});
  CHECK(CheckOwnPodTolerates(outputs, Own({{"", "Exists", "", "", std::nullopt}})).ok());
  CHECK(CheckOwnPodTolerates(outputs, Own({{"widgets.example.com/drain", "Exists", "", "NoExecute", std::nullopt}})).ok());
  // NoSchedule and PreferNoSchedule never evict: only NoExecute is judged.
  CHECK(CheckOwnPodTolerates(Taints({Taint("widgets.example.com/quiet", "", "NoSchedule")}), Own({})).ok());

  Status refused = CheckOwnPodTolerates(outputs, Own({{"widgets.example.com/other", "Exists", "", "", std::nullopt}}));
  CHECK(refused.code() == StatusCode::kInvalid);
  CHECK(refused.message() ==
        "taints[1]: \"widgets.example.com/drain\" with effect NoExecute would evict this agent's own pod "
        "nodehook/nodehook-x1, which does not tolerate it, and no agent would be left on the node to take it off; "
        "tolerate it in the agents' DaemonSet (the shipped tolerations, [{operator: Exists}], tolerate every taint) "
        "or publish it as NoSchedule");
  // Tolerated for a while only: evicted all the same, later.
  refused = CheckOwnPodTolerates(outputs, Own({{"widgets.example.com/drain", "Exists", "", "NoExecute", 60},
                                               {"", "Exists", "", "NoExecute", 300}}));
  CHECK(refused.message().find("which tolerates it for 300 s only (tolerationSeconds)") != std::string::npos);
}

TEST_CASE("with the own tolerations unknown, every NoExecute taint is refused, saying why") {
  OwnTolerations unknown{"nodehook/nodehook-x1", std::nullopt, "its pod nodehook/nodehook-x1 could not be read: HTTP 403"};
  Status refused = CheckOwnPodTolerates(Taints({Taint("widgets.example.com/drain", "", "NoExecute")}), unknown);
  CHECK(refused.message().find("taints[0]: \"widgets.example.com/drain\" with effect NoExecute is refused: this "
                               "agent's own tolerations are not known (its pod nodehook/nodehook-x1 could not be "
                               "read: HTTP 403)") == 0);
  CHECK(CheckOwnPodTolerates(Taints({Taint("widgets.example.com/quiet", "", "PreferNoSchedule")}), unknown).ok());
}

}  // namespace
}  // namespace nodehook
