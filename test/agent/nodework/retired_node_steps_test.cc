// RetiredNodeSteps at the agent's start, over NodeSteps' own records: a deleted object whose
// cordon could not be given back, and a rollout that no longer has node steps.
#include <catch2/catch.hpp>

#include "agent/nodework/node_cordon.h"
#include "agent/nodework/retired_node_steps.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_node_api.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

const std::string kWidgets = "widgets.example.com/v1";

std::vector<ResourceScope> Stepping(const std::string& plural, const std::string& namespace_name = "") {
  return {ResourceScope(ResourceRef{"example.com", "v1", plural, namespace_name, ""})};
}

NodeStepsRecord Record(const std::string& uid, const std::string& step, bool cordoned = true) {
  NodeStepsRecord r;
  r.uid = uid;
  r.resource = kWidgets;
  r.state = "s1";
  r.step = step;
  r.cordoned = cordoned;
  return r;
}

struct Node {
  Node() : store(std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value()) {}
  // A record, and its mark on the Node as NodeSteps leaves them.
  void Holds(const std::string& uid, const std::string& step, const std::string& rid = "abcdef0123") {
    REQUIRE(store->PutNodeSteps(Record(uid, step)).ok());
    REQUIRE(TakeCordon(api, CordonMarkKey(rid, uid), "{}")->ours);
  }
  size_t Records() { return store->ListNodeSteps()->size(); }
  TempDir dir;
  std::unique_ptr<SqliteStateStore> store;
  FakeNodeApi api;
};

TEST_CASE("records of rollouts that still step are left to them, with no API call") {
  Node n;
  n.Holds("u1", "draining");
  n.Holds("u2", "failed");
  n.api.FailGets(true);  // any call would fail
  RetiredStepsOutcome outcome = GiveBackRetiredSteps(*n.store, n.api, Stepping("widgets"));
  CHECK(outcome.given_back + outcome.kept + outcome.left == 0);
  CHECK(n.Records() == 2);
}

TEST_CASE("a deleted object's cordon is given back at the next start, under whichever rollout's mark") {
  Node n;
  n.Holds("u1", "deleted", "0123456789");
  RetiredStepsOutcome outcome = GiveBackRetiredSteps(*n.store, n.api, Stepping("widgets"));
  CHECK(outcome.given_back == 1);
  CHECK_FALSE(n.api.node().unschedulable);
  CHECK(n.api.node().marks.empty());
  CHECK(n.Records() == 0);
}

TEST_CASE("a rollout without node steps now gives back its work's cordon and keeps a failed node's") {
  Node n;
  n.Holds("u1", "draining");
  n.Holds("u2", "failed");
  REQUIRE(n.store->PutNodeSteps(Record("u3", "running", false)).ok());  // someone else's cordon: nothing held
  RetiredStepsOutcome outcome = GiveBackRetiredSteps(*n.store, n.api, Stepping("gadgets"));
  CHECK(outcome.given_back == 2);
  CHECK(outcome.kept == 1);
  CHECK(n.api.node().unschedulable);  // the failed node's mark holds it for a person
  CHECK(n.api.node().marks.size() == 1);
  CHECK(n.api.node().marks.count(CordonMarkKey("abcdef0123", "u2")) == 1);
  CHECK(n.Records() == 0);
}

TEST_CASE("entries of one resource in two namespaces: the one that stopped stepping gives its cordon back") {
  Node n;
  n.Holds("in-a", "draining");
  n.Holds("in-b", "draining");
  n.Holds("unknown", "draining");  // no record of its object: its namespace is not known
  REQUIRE(n.store->RecordHandled({"in-a", kWidgets, "a", "w1", "{}", "{}", 5}, "create").ok());
  HandlerRecord progress;  // a create under way: progress, no diffbase
  progress.uid = "in-b";
  progress.handler = "create";
  progress.resource = kWidgets;
  progress.namespace_name = "b";
  progress.name = "w2";
  REQUIRE(n.store->RecordAttempt(progress).ok());
  RetiredStepsOutcome outcome = GiveBackRetiredSteps(*n.store, n.api, Stepping("widgets", "a"));
  CHECK(outcome.given_back == 1);  // "b" no longer steps
  CHECK(n.api.node().marks.count(CordonMarkKey("abcdef0123", "in-b")) == 0);
  CHECK(n.api.node().marks.count(CordonMarkKey("abcdef0123", "in-a")) == 1);
  CHECK(n.api.node().marks.count(CordonMarkKey("abcdef0123", "unknown")) == 1);
  CHECK(n.Records() == 2);
  // An entry of every namespace holds them all, without reading the objects.
  CHECK(GiveBackRetiredSteps(*n.store, n.api, Stepping("widgets")).given_back == 0);
}

TEST_CASE("a cordon that cannot be given back now stays recorded for the next start") {
  Node n;
  n.Holds("u1", "deleted");
  n.api.FailGets(true);
  CHECK(GiveBackRetiredSteps(*n.store, n.api, {}).left == 1);
  CHECK(n.Records() == 1);
  n.api.FailGets(false);
  CHECK(GiveBackRetiredSteps(*n.store, n.api, {}).given_back == 1);
  CHECK_FALSE(n.api.node().unschedulable);
  CHECK(n.Records() == 0);
}

}  // namespace
}  // namespace nodehook
