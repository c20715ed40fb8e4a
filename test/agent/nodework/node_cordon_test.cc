#include <catch2/catch.hpp>

#include "agent/nodework/node_cordon.h"
#include "test/fakes/fake_node_api.h"

namespace nodehook {
namespace {

const std::string kMark = "nodehook.io/cordoned-aaaaaaaaaa";
const std::string kOther = "nodehook.io/cordoned-bbbbbbbbbb";

TEST_CASE("a schedulable node is cordoned under the rollout's mark and given back") {
  FakeNodeApi api;
  auto taken = TakeCordon(api, kMark, "v1");
  REQUIRE(taken.ok());
  REQUIRE(taken->ours);
  REQUIRE(api.node().unschedulable);
  REQUIRE(api.node().marks.at(kMark) == "v1");
  auto given = GiveCordonBack(api, kMark);
  REQUIRE(given.ok());
  REQUIRE(*given == CordonGiven::kUncordoned);
  REQUIRE_FALSE(api.node().unschedulable);
  REQUIRE(api.node().marks.empty());
}

TEST_CASE("a node someone else cordoned is left to them: no mark, never uncordoned") {
  FakeNodeApi api;
  api.SetUnschedulable(true);
  auto taken = TakeCordon(api, kMark, "v1");
  REQUIRE(taken.ok());
  REQUIRE_FALSE(taken->ours);
  REQUIRE(taken->someone_elses);
  REQUIRE(api.node().marks.empty());
  REQUIRE(api.node_writes() == 0);
  auto given = GiveCordonBack(api, kMark);
  REQUIRE(*given == CordonGiven::kNotOurs);
  REQUIRE(api.node().unschedulable);
}

TEST_CASE("two rollouts share a cordon: the first to finish leaves the node cordoned for the other") {
  FakeNodeApi api;
  REQUIRE(TakeCordon(api, kOther, "other")->ours);
  auto taken = TakeCordon(api, kMark, "v1");
  REQUIRE(taken->ours);  // cordoned by nodehook, not by a person: this rollout marks it too
  REQUIRE(*GiveCordonBack(api, kMark) == CordonGiven::kOthersHold);
  REQUIRE(api.node().unschedulable);
  REQUIRE(*GiveCordonBack(api, kOther) == CordonGiven::kUncordoned);
  REQUIRE_FALSE(api.node().unschedulable);
}

TEST_CASE("an uncordon by someone else during the work is theirs: only the mark comes off") {
  FakeNodeApi api;
  REQUIRE(TakeCordon(api, kMark, "v1")->ours);
  api.SetUnschedulable(false);
  REQUIRE_FALSE(*CordonHeld(api, kMark));
  REQUIRE(*GiveCordonBack(api, kMark) == CordonGiven::kUncordonedBefore);
  REQUIRE(api.node().marks.empty());
}

TEST_CASE("a mark on a schedulable node is stale: the cordon removes it, and the uncordon gives the node back") {
  FakeNodeApi api;
  api.SetMark(kOther, "left by kubectl uncordon");
  auto taken = TakeCordon(api, kMark, "v1");
  REQUIRE(taken->ours);
  REQUIRE(taken->stale_marks == std::vector<std::string>{kOther});
  REQUIRE(api.node().marks == std::map<std::string, std::string>{{kMark, "v1"}});
  REQUIRE(api.node_writes() == 1);  // in the cordon's own write
  REQUIRE(*GiveCordonBack(api, kMark) == CordonGiven::kUncordoned);
  REQUIRE_FALSE(api.node().unschedulable);
}

TEST_CASE("a mark on a cordoned node is another rollout's live cordon, never stale") {
  FakeNodeApi api;
  REQUIRE(TakeCordon(api, kOther, "other")->ours);
  auto taken = TakeCordon(api, kMark, "v1");
  REQUIRE(taken->stale_marks.empty());
  REQUIRE(api.node().marks.count(kOther) == 1);
}

TEST_CASE("a mark taken off by someone means the cordon is theirs now") {
  FakeNodeApi api;
  REQUIRE(TakeCordon(api, kMark, "v1")->ours);
  api.RemoveMark(kMark);
  REQUIRE(*GiveCordonBack(api, kMark) == CordonGiven::kNotOurs);
  REQUIRE(api.node().unschedulable);
}

TEST_CASE("a newer object state takes the rollout's own cordon over by rewriting its mark") {
  FakeNodeApi api;
  REQUIRE(TakeCordon(api, kMark, "v1")->ours);
  auto again = TakeCordon(api, kMark, "v2");
  REQUIRE(again->ours);
  REQUIRE(api.node().marks.at(kMark) == "v2");
  const int writes = api.node_writes();
  REQUIRE(TakeCordon(api, kMark, "v2")->ours);  // a restart after the cordon: nothing to write
  REQUIRE(api.node_writes() == writes);
}

TEST_CASE("a failed node's mark says so only while the node is still cordoned under it") {
  FakeNodeApi api;
  REQUIRE(TakeCordon(api, kMark, "v1")->ours);
  REQUIRE(MarkCordonFailed(api, kMark, "v1 failed").ok());
  REQUIRE(api.node().marks.at(kMark) == "v1 failed");
  REQUIRE(api.node().unschedulable);
  const int writes = api.node_writes();
  REQUIRE(MarkCordonFailed(api, kMark, "v1 failed").ok());  // already says so
  REQUIRE(api.node_writes() == writes);
  api.SetUnschedulable(false);  // someone uncordoned it: not cordoned again
  REQUIRE(MarkCordonFailed(api, kMark, "v1 failed again").ok());
  REQUIRE_FALSE(api.node().unschedulable);
  REQUIRE(api.node().marks.at(kMark) == "v1 failed");
  REQUIRE(MarkCordonFailed(api, kOther, "x").ok());  // not ours: nothing
  REQUIRE(api.node().marks.count(kOther) == 0);
}

TEST_CASE("a conflict is read again and decided again; a lasting one is returned") {
  FakeNodeApi api;
  api.ConflictNext(2);
  REQUIRE(TakeCordon(api, kMark, "v1")->ours);
  api.ConflictNext(3);
  auto given = GiveCordonBack(api, kMark);
  REQUIRE_FALSE(given.ok());
  REQUIRE(given.status().code() == StatusCode::kConflict);
  REQUIRE(api.node().unschedulable);
}

}  // namespace
}  // namespace nodehook
