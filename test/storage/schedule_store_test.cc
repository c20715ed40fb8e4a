#include <catch2/catch.hpp>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;
const std::string kResource = "widgets.example.com/v1";

TEST_CASE("check due times are stored per object and read back per resource") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->SetCheckDue("u1", kResource, kNow + 1000).ok());
  REQUIRE(store->SetCheckDue("u2", kResource, kNow + 2000).ok());
  REQUIRE(store->SetCheckDue("u3", "gadgets.example.com/v1", kNow).ok());
  REQUIRE(store->SetCheckDue("u1", kResource, kNow + 5000).ok());  // the latest plan wins
  auto due = store->CheckSchedule(kResource);
  REQUIRE(due.ok());
  CHECK(*due == std::map<std::string, int64_t>{{"u1", kNow + 5000}, {"u2", kNow + 2000}});
  REQUIRE(store->DropCheck("u2").ok());
  CHECK(store->CheckSchedule(kResource)->size() == 1);
}

TEST_CASE("check due times survive reopening the file and belong to their node only") {
  TempDir dir;
  std::string path = dir.File("state.db");
  REQUIRE(OpenStore(path, "node-a")->SetCheckDue("u1", kResource, kNow).ok());
  CHECK(OpenStore(path, "node-a")->CheckSchedule(kResource)->at("u1") == kNow);
  CHECK(OpenStore(path, "node-b")->CheckSchedule(kResource)->empty());
}

TEST_CASE("forgetting an object, expiring its tombstone or collecting it as garbage drops its check time") {
  auto store = OpenStore(":memory:");
  for (const char* uid : {"forgotten", "expired", "garbage"}) REQUIRE(store->SetCheckDue(uid, kResource, kNow).ok());
  REQUIRE(store->Forget("forgotten").ok());
  REQUIRE(store->RecordHandled(SampleObject("expired"), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("expired", "delete")).ok());  // its delete hook kept failing
  REQUIRE(store->MarkGone("expired", kNow - 10'000).ok());
  REQUIRE(store->ExpireTombstones(kNow, 1000).ok());
  REQUIRE(store->MarkGone("garbage", kNow - 10'000).ok());
  REQUIRE(store->CollectGarbage(kNow, 1000).ok());
  CHECK(store->CheckSchedule(kResource)->empty());
}

TEST_CASE("a snapshot's progress is stored per resource and replaced as a whole") {
  auto store = OpenStore(":memory:");
  CHECK_FALSE(store->GetSnapshot(kResource)->has_value());
  SnapshotRecord r;
  r.resource = kResource;
  r.done_digest = "d1";
  r.target = "d2";
  r.retries = 3;
  r.first_start_ms = kNow;
  r.next_attempt_ms = kNow + 4000;
  r.last_outcome = "failed";
  r.last_message = "exited 1";
  REQUIRE(store->PutSnapshot(r).ok());
  auto read = *store->GetSnapshot(kResource);
  REQUIRE(read.has_value());
  CHECK(read->done_digest == "d1");
  CHECK(read->target == "d2");
  CHECK(read->retries == 3);
  CHECK(read->next_attempt_ms == kNow + 4000);
  CHECK(read->last_message == "exited 1");
  r.done_digest = "d2";
  r.target.clear();
  REQUIRE(store->PutSnapshot(r).ok());
  CHECK((*store->GetSnapshot(kResource))->done_digest == "d2");
  CHECK_FALSE(store->GetSnapshot("gadgets.example.com/v1")->has_value());
}

}  // namespace
}  // namespace nodehook
