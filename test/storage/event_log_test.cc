#include <catch2/catch.hpp>

#include "storage/sqlite_state_store.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

using namespace nodehook;

TEST_CASE("events of an object come back in the order they were observed, and survive a reopen") {
  TempDir dir;
  {
    auto store = OpenStore(dir.File("state.db"));
    REQUIRE(store->AppendEvent(SampleEvent("u1", "ADDED", 1)).ok());
    REQUIRE(store->AppendEvent(SampleEvent("u2", "ADDED", 7)).ok());
    REQUIRE(store->AppendEvent(SampleEvent("u1", "MODIFIED", 2)).ok());
    REQUIRE(store->AppendEvent(SampleEvent("u1", "DELETED", 2)).ok());
  }
  auto store = OpenStore(dir.File("state.db"));
  auto events = store->PendingEvents("u1");
  REQUIRE(events.ok());
  REQUIRE(events->size() == 3);
  CHECK((*events)[0].type == "ADDED");
  CHECK((*events)[1].type == "MODIFIED");
  CHECK((*events)[2].type == "DELETED");
  CHECK((*events)[0].seq < (*events)[1].seq);
  CHECK((*events)[1].object == R"({"spec":{"size":2}})");
  CHECK(*store->UidsWithPendingEvents("widgets.example.com/v1", "") == std::vector<std::string>{"u1", "u2"});
}

TEST_CASE("pending events are found by resource and namespace: entries of one resource in two namespaces") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"));
  EventRecord other = SampleEvent("u2", "ADDED", 1);
  other.namespace_name = "other";
  REQUIRE(store->AppendEvent(SampleEvent("u1", "ADDED", 1)).ok());
  REQUIRE(store->AppendEvent(other).ok());
  CHECK(*store->UidsWithPendingEvents("widgets.example.com/v1", "ns") == std::vector<std::string>{"u1"});
  CHECK(*store->UidsWithPendingEvents("widgets.example.com/v1", "other") == std::vector<std::string>{"u2"});
  CHECK(*store->UidsWithPendingEvents("widgets.example.com/v1", "") == std::vector<std::string>{"u1", "u2"});
  CHECK(store->UidsWithPendingEvents("gadgets.example.com/v1", "")->empty());
}

TEST_CASE("a failed event keeps its place with its retry state; a completed one is gone") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"));
  REQUIRE(store->AppendEvent(SampleEvent("u1", "ADDED", 1)).ok());
  REQUIRE(store->AppendEvent(SampleEvent("u1", "MODIFIED", 2)).ok());
  auto first = (*store->PendingEvents("u1"))[0];
  REQUIRE(store->RecordEventAttempt(first.seq, 1, 5000, "exited 1").ok());
  auto again = *store->PendingEvents("u1");
  CHECK(again[0].seq == first.seq);
  CHECK(again[0].retries == 1);
  CHECK(again[0].next_attempt_ms == 5000);
  CHECK(again[0].last_message == "exited 1");
  REQUIRE(store->CompleteEvent(first.seq).ok());
  REQUIRE(store->PendingEvents("u1")->size() == 1);
}

TEST_CASE("events of another node are invisible") {
  TempDir dir;
  auto a = OpenStore(dir.File("state.db"), "node-a");
  auto b = OpenStore(dir.File("state.db"), "node-b");
  REQUIRE(a->AppendEvent(SampleEvent("u1", "ADDED", 1)).ok());
  CHECK(b->PendingEvents("u1")->empty());
  CHECK(a->PendingEvents("u1")->size() == 1);
}

TEST_CASE("garbage collection keeps a gone object while it has unhandled events") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"));
  REQUIRE(store->AppendEvent(SampleEvent("u1", "DELETED", 1)).ok());
  REQUIRE(store->MarkGone("u1", 0).ok());
  REQUIRE(store->CollectGarbage(10'000'000, 1000).ok());
  CHECK(store->PendingEvents("u1")->size() == 1);
}
