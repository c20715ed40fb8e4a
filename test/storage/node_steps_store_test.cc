// A rollout's node steps in the state file: one record per object and node, replaced whole,
// listed per node whatever the resource, and dropped on their own.
#include <catch2/catch.hpp>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

NodeStepsRecord Steps(const std::string& uid, const std::string& step, const std::string& resource) {
  NodeStepsRecord r;
  r.uid = uid;
  r.resource = resource;
  r.state = "s1";
  r.step = step;
  r.cordoned = true;
  r.step_started_ms = 1'700'000'000'000;
  return r;
}

std::vector<std::string> Listed(StateStore& store) {
  auto listed = store.ListNodeSteps();
  REQUIRE(listed.ok());
  std::vector<std::string> out;
  for (const NodeStepsRecord& r : *listed) out.push_back(r.uid + " " + r.resource + " " + r.step);
  return out;
}

TEST_CASE("node steps are listed for this node across resources, replaced whole and dropped") {
  TempDir dir;
  const std::string path = dir.File("state.db");
  auto a = OpenStore(path, "node-a");
  auto b = OpenStore(path, "node-b");
  REQUIRE(a->PutNodeSteps(Steps("u2", "draining", "widgets.example.com/v1")).ok());
  REQUIRE(a->PutNodeSteps(Steps("u1", "running", "gadgets.example.com/v1")).ok());
  REQUIRE(b->PutNodeSteps(Steps("u1", "failed", "gadgets.example.com/v1")).ok());
  CHECK(Listed(*a) == std::vector<std::string>{"u1 gadgets.example.com/v1 running", "u2 widgets.example.com/v1 draining"});
  CHECK(Listed(*b) == std::vector<std::string>{"u1 gadgets.example.com/v1 failed"});
  REQUIRE(a->PutNodeSteps(Steps("u2", "deleted", "widgets.example.com/v1")).ok());
  REQUIRE(a->DropNodeSteps("u1").ok());
  CHECK(Listed(*a) == std::vector<std::string>{"u2 widgets.example.com/v1 deleted"});
  CHECK(Listed(*b).size() == 1);
}

TEST_CASE("the time a step counted against its timeout is kept with it") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"), "node-a");
  NodeStepsRecord r = Steps("u1", "draining", "widgets.example.com/v1");
  r.step_spent_ms = 42'000;
  r.step_seen_ms = 1'700'000'042'000;
  r.step_wait_ms = 2'000;
  REQUIRE(store->PutNodeSteps(r).ok());
  auto back = store->GetNodeSteps("u1");
  REQUIRE(back.ok());
  REQUIRE(back->has_value());
  CHECK((*back)->step_spent_ms == 42'000);
  CHECK((*back)->step_seen_ms == 1'700'000'042'000);
  CHECK((*back)->step_wait_ms == 2'000);
}

}  // namespace
}  // namespace nodehook
