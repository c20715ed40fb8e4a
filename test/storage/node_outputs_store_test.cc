// Node outputs in the state file: per object and node, listed by resource, replaced whole, and
// gone with the object (Forget, garbage collection, tombstone expiry).
#include <catch2/catch.hpp>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

NodeOutputsRecord Outputs(const std::string& uid, const std::string& json,
                          const std::string& resource = "widgets.example.com/v1") {
  return NodeOutputsRecord{uid, resource, "ns", "widget-" + uid, json, 1'700'000'000'000};
}

std::vector<std::string> Uids(StateStore& store, const std::string& resource) {
  auto listed = store.ListNodeOutputs(resource);
  REQUIRE(listed.ok());
  std::vector<std::string> uids;
  for (const NodeOutputsRecord& r : *listed) uids.push_back(r.uid + "=" + r.outputs);
  return uids;
}

TEST_CASE("node outputs are kept per object, listed by resource, and replaced whole") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->PutNodeOutputs(Outputs("u2", R"({"labels":{"a/b":"2"}})")).ok());
  REQUIRE(store->PutNodeOutputs(Outputs("u1", R"({"labels":{"a/b":"1"}})")).ok());
  REQUIRE(store->PutNodeOutputs(Outputs("g1", "{}", "gadgets.example.com/v1")).ok());
  CHECK(Uids(*store, "widgets.example.com/v1") ==
        std::vector<std::string>{R"(u1={"labels":{"a/b":"1"}})", R"(u2={"labels":{"a/b":"2"}})"});

  REQUIRE(store->PutNodeOutputs(Outputs("u1", R"({"taints":[]})")).ok());
  auto got = store->GetNodeOutputs("u1");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((*got)->outputs == R"({"taints":[]})");
  CHECK((*got)->name == "widget-u1");

  REQUIRE(store->PutNodeOutputs(Outputs("u1", "")).ok());  // empty: removed
  CHECK_FALSE(store->GetNodeOutputs("u1")->has_value());
  CHECK(Uids(*store, "gadgets.example.com/v1") == std::vector<std::string>{"g1={}"});
}

TEST_CASE("node outputs belong to one node of a shared file") {
  TempDir dir;
  const std::string path = dir.File("state.db");
  auto a = OpenStore(path, "node-a");
  auto b = OpenStore(path, "node-b");
  REQUIRE(a->PutNodeOutputs(Outputs("u1", R"({"labels":{"a/b":"1"}})")).ok());
  CHECK(Uids(*b, "widgets.example.com/v1").empty());
  CHECK_FALSE(b->GetNodeOutputs("u1")->has_value());
  REQUIRE(b->Forget("u1").ok());
  CHECK(a->GetNodeOutputs("u1")->has_value());
}

TEST_CASE("forgetting an object takes its node outputs with it") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordHandled(SampleObject("u1"), "create").ok());
  REQUIRE(store->PutNodeOutputs(Outputs("u1", R"({"labels":{"a/b":"1"}})")).ok());
  REQUIRE(store->Forget("u1").ok());
  CHECK_FALSE(store->GetNodeOutputs("u1")->has_value());
  CHECK(store->Summarize()->rows.at("node_outputs") == 0);
}

TEST_CASE("garbage collection and tombstone expiry take the node outputs of what they purge") {
  constexpr int64_t kHour = 3'600'000;
  constexpr int64_t kNow = 1'700'000'000'000 + 10 * kHour;
  auto store = OpenStore(":memory:");
  // u1: gone long ago with nothing left to do. u2: a delete hook that keeps failing.
  REQUIRE(store->PutNodeOutputs(Outputs("u1", R"({"labels":{"a/b":"1"}})")).ok());
  REQUIRE(store->MarkGone("u1", kNow - 2 * kHour).ok());
  REQUIRE(store->RecordHandled(SampleObject("u2"), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u2", "delete")).ok());
  REQUIRE(store->PutNodeOutputs(Outputs("u2", R"({"labels":{"a/b":"2"}})")).ok());
  REQUIRE(store->MarkGone("u2", kNow - 2 * kHour).ok());
  CHECK(store->Summarize()->rows.at("node_outputs") == 2);

  REQUIRE(store->CollectGarbage(kNow, kHour).ok());
  CHECK_FALSE(store->GetNodeOutputs("u1")->has_value());
  CHECK(store->GetNodeOutputs("u2")->has_value());  // its delete hook is still owed

  auto expired = store->ExpireTombstones(kNow, kHour);
  REQUIRE(expired.ok());
  CHECK(*expired == std::vector<std::string>{"u2"});
  CHECK_FALSE(store->GetNodeOutputs("u2")->has_value());
}

}  // namespace
}  // namespace nodehook
