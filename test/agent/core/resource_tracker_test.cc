#include <catch2/catch.hpp>

#include "agent/core/resource_tracker.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"

using namespace nodehook;

namespace {

ObjectPtr Obj(const std::string& uid, const std::string& rv) {
  auto o = std::make_shared<KubeObject>();
  o->meta = {uid, "ns", "n-" + uid, rv, false};
  o->json = R"({"metadata":{"uid":")" + uid + R"(","resourceVersion":")" + rv + R"("}})";
  return o;
}

struct Fixture {
  FakeClock clock;
  WorkQueue queue{clock};
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  ResourceTracker tracker{0, "widgets.example.com/v1", queue, *store, clock, nullptr, /*record_events=*/true};

  std::vector<std::string> Events(const std::string& uid) {
    std::vector<std::string> types;
    auto pending = store->PendingEvents(uid);
    for (const auto& e : *pending) types.push_back(e.type);
    return types;
  }
};

}  // namespace

TEST_CASE("every observed change is stored as an event before the object is queued") {
  Fixture f;
  f.tracker.OnListed({Obj("a", "1")});
  f.tracker.OnObject(Obj("a", "2"));
  f.tracker.OnObject(Obj("a", "2"));  // the same resourceVersion again is no change
  f.tracker.OnObject(Obj("b", "3"));
  f.tracker.OnDeleted(Obj("a", "4"));
  REQUIRE(f.Events("a") == std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"});
  REQUIRE(f.Events("b") == std::vector<std::string>{"ADDED"});
  REQUIRE(*f.queue.Get() == ResourceTracker::QueueKey(0, "a"));
}

TEST_CASE("a relist reports what changed since the last view, including deletions") {
  Fixture f;
  f.tracker.OnListed({Obj("a", "1"), Obj("b", "1")});
  f.tracker.OnListed({Obj("a", "5")});  // b vanished while the stream was broken
  REQUIRE(f.Events("a") == std::vector<std::string>{"ADDED", "MODIFIED"});
  REQUIRE(f.Events("b") == std::vector<std::string>{"ADDED", "DELETED"});
  REQUIRE((*f.store->PendingEvents("b"))[1].object.find(R"("uid":"b")") != std::string::npos);
}

TEST_CASE("objects the store remembers but the first list lacks are queued as deleted") {
  Fixture f;
  ObjectRecord handled{"gone-uid", "widgets.example.com/v1", "ns", "old", "{}", R"({"spec":1})", 5};
  REQUIRE(f.store->RecordHandled(handled, "create").ok());
  f.tracker.OnListed({});
  auto cached = f.tracker.cache().Get("gone-uid");
  REQUIRE(cached);
  REQUIRE(cached->gone);
  REQUIRE(f.Events("gone-uid") == std::vector<std::string>{"DELETED"});
  REQUIRE((*f.store->PendingEvents("gone-uid"))[0].object == R"({"spec":1})");
  REQUIRE(*f.queue.Get() == ResourceTracker::QueueKey(0, "gone-uid"));
}
