#include <catch2/catch.hpp>

#include <set>

#include "agent/watch/resource_tracker.h"
#include "agent/base/metrics.h"
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

ResourceRef Widgets(const std::string& namespace_name) { return {"example.com", "v1", "widgets", namespace_name, ""}; }

struct Fixture {
  FakeClock clock;
  WorkQueue queue{clock};
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  ResourceTracker tracker{0, Widgets(""), queue, *store, clock, nullptr, /*record_events=*/true};

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
  f.tracker.OnListed({Obj("a", "1")}, {});
  f.tracker.OnObject(Obj("a", "2"));
  f.tracker.OnObject(Obj("a", "2"));  // the same resourceVersion again is no change
  f.tracker.OnObject(Obj("b", "3"));
  f.tracker.OnDeleted(Obj("a", "4"));
  REQUIRE(f.Events("a") == std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"});
  REQUIRE(f.Events("b") == std::vector<std::string>{"ADDED"});
  REQUIRE(*f.queue.Get() == QueueKey{0, "a"});
}

TEST_CASE("a relist reports what changed since the last view, including deletions") {
  Fixture f;
  f.tracker.OnListed({Obj("a", "1"), Obj("b", "1")}, {});
  f.tracker.OnListed({Obj("a", "5")}, {});  // b vanished while the stream was broken
  REQUIRE(f.Events("a") == std::vector<std::string>{"ADDED", "MODIFIED"});
  REQUIRE(f.Events("b") == std::vector<std::string>{"ADDED", "DELETED"});
  REQUIRE((*f.store->PendingEvents("b"))[1].object.find(R"("uid":"b")") != std::string::npos);
}

TEST_CASE("objects the store remembers but the first list lacks are queued as deleted") {
  Fixture f;
  ObjectRecord handled{"gone-uid", "widgets.example.com/v1", "ns", "old", "{}", R"({"spec":1})", 5};
  REQUIRE(f.store->RecordHandled(handled, "create").ok());
  f.tracker.OnListed({}, {});
  auto cached = f.tracker.cache().Get("gone-uid");
  REQUIRE(cached);
  REQUIRE(cached->gone);
  REQUIRE(f.Events("gone-uid") == std::vector<std::string>{"DELETED"});
  REQUIRE((*f.store->PendingEvents("gone-uid"))[0].object == R"({"spec":1})");
  REQUIRE(*f.queue.Get() == QueueKey{0, "gone-uid"});
}

TEST_CASE("an entry's list takes only its own namespace's remembered objects for deleted") {
  // Two entries of one resource in two namespaces share the store's resource id.
  Fixture f;
  ResourceTracker other_ns{1, Widgets("other"), f.queue, *f.store, f.clock, nullptr, /*record_events=*/true};
  ResourceTracker in_ns{2, Widgets("ns"), f.queue, *f.store, f.clock, nullptr, /*record_events=*/true};
  REQUIRE(f.store->RecordHandled({"kept", "widgets.example.com/v1", "ns", "w", "{}", "{}", 5}, "create").ok());
  HandlerRecord retrying;  // a create still retrying: progress but no diffbase yet
  retrying.uid = "retrying";
  retrying.handler = "create";
  retrying.resource = "widgets.example.com/v1";
  retrying.namespace_name = "ns";
  retrying.name = "r";
  REQUIRE(f.store->RecordAttempt(retrying).ok());
  REQUIRE(f.store->AppendEvent(EventRecord{0, "pending", "widgets.example.com/v1", "ns", "p", "ADDED", "{}", 1}).ok());

  other_ns.OnListed({}, {});  // namespace "other" is empty; "ns" is not its business
  CHECK_FALSE(other_ns.cache().Get("kept"));
  CHECK_FALSE(other_ns.cache().Get("retrying"));
  CHECK(f.Events("kept").empty());
  CHECK(f.queue.ReadyCount() == 0);  // nothing queued, not even the pending event

  in_ns.OnListed({}, {});  // its own namespace lost them: deleted while the agent was down
  REQUIRE(in_ns.cache().Get("kept"));
  CHECK(in_ns.cache().Get("kept")->gone);
  CHECK(in_ns.cache().Get("retrying")->gone);
  std::set<std::string> queued;
  while (f.queue.ReadyCount() > 0) {
    std::optional<QueueKey> key = f.queue.Get();
    CHECK(key->resource == 2);
    queued.insert(key->uid);
    f.queue.Done(*key);
  }
  CHECK(queued == std::set<std::string>{"kept", "retrying", "pending"});
}

TEST_CASE("records of the resource in another version are the entry's; other resources' are not") {
  // The config moved from v1beta1 to v1 while the agent was down, and an object went meanwhile.
  Fixture f;
  ResourceTracker v1{1, Widgets("ns"), f.queue, *f.store, f.clock};
  REQUIRE(f.store->RecordHandled({"old-version", "widgets.example.com/v1beta1", "ns", "w", "{}", "{}", 5}, "create").ok());
  for (const char* other : {"widgets.example.org/v1", "widgets.example.com.evil/v1", "gizmos.example.com/v1"}) {
    REQUIRE(f.store->RecordHandled({std::string("other-") + other, other, "ns", "w", "{}", "{}", 5}, "create").ok());
  }
  v1.OnListed({}, {});
  REQUIRE(v1.cache().Get("old-version"));
  CHECK(v1.cache().Get("old-version")->gone);
  CHECK(v1.cache().Uids().size() == 1);
}

namespace {

struct RecordingEvents : EventRecorder {
  std::vector<std::string> quarantined;
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void Quarantined(const ResourceRef&, const ObjectMeta& object, const std::string& message) override {
    quarantined.push_back(object.uid + ": " + message);
  }
};

struct QuarantineFixture : Fixture {
  Metrics metrics;
  RecordingEvents events;
  QuarantineFixture() { tracker.SetQuarantineReporting(ResourceRef{"example.com", "v1", "widgets", "", ""}, &events, metrics); }

  BadObject Bad(const std::string& uid) { return BadObject{{uid, "ns", "n-" + uid, "9", false}, "too_deep", "nested too deep"}; }
  double Gauge() { return metrics.GetGauge("objects_quarantined", "", {{"resource", "widgets.example.com/v1"}}).value(); }
  uint64_t Counted() {
    return metrics.GetCounter("objects_quarantined_total", "", {{"resource", "widgets.example.com/v1"}, {"reason", "too_deep"}})
        .value();
  }
  std::vector<QueueKey> Queued() {
    std::vector<QueueKey> keys;
    while (queue.ReadyCount() > 0) {
      auto key = queue.Get();
      keys.push_back(*key);
      queue.Done(*key);
    }
    return keys;
  }
};

}  // namespace

TEST_CASE("a quarantined object in a relist is reported, not handled, and never taken for deleted") {
  QuarantineFixture f;
  ObjectRecord handled{"bad", "widgets.example.com/v1", "ns", "n-bad", "{}", R"({"spec":1})", 5};
  REQUIRE(f.store->RecordHandled(handled, "create").ok());
  f.tracker.OnListed({Obj("good", "1")}, {f.Bad("bad")});
  CHECK_FALSE(f.tracker.cache().Get("bad"));  // no tombstone: the delete hook must not run
  CHECK(f.Queued() == std::vector<QueueKey>{QueueKey{0, "good"}});
  CHECK(f.Events("bad").empty());
  CHECK(f.Gauge() == 1);
  CHECK(f.Counted() == 1);
  REQUIRE(f.events.quarantined.size() == 1);
  CHECK_THAT(f.events.quarantined[0], Catch::StartsWith("bad: nested too deep"));

  f.tracker.OnListed({Obj("good", "1")}, {f.Bad("bad")});  // the next resync: reported once, not again
  CHECK(f.Counted() == 1);
  CHECK(f.events.quarantined.size() == 1);
}

TEST_CASE("a cached object that turns bad keeps its last good state until it is good again") {
  QuarantineFixture f;
  f.tracker.OnListed({Obj("a", "1")}, {});
  f.Queued();
  f.tracker.OnQuarantined(f.Bad("a"), WatchEventType::kModified);
  CHECK(f.Queued().empty());
  CHECK(f.tracker.cache().Get("a")->object->meta.resource_version == "1");
  CHECK(f.Gauge() == 1);
  f.tracker.OnListed({}, {f.Bad("a")});  // still bad at a relist: still not gone
  CHECK_FALSE(f.tracker.cache().Get("a")->gone);
  f.tracker.OnObject(Obj("a", "3"));  // fixed by its owner
  CHECK(f.Gauge() == 0);
  CHECK(f.Queued() == std::vector<QueueKey>{QueueKey{0, "a"}});
}

TEST_CASE("the DELETED event of a quarantined object queues its deletion with the last handled state") {
  QuarantineFixture f;
  ObjectRecord handled{"bad", "widgets.example.com/v1", "ns", "n-bad", "{}", R"({"spec":1})", 5};
  REQUIRE(f.store->RecordHandled(handled, "create").ok());
  f.tracker.OnQuarantined(f.Bad("bad"), WatchEventType::kModified);
  f.tracker.OnQuarantined(f.Bad("bad"), WatchEventType::kDeleted);
  auto cached = f.tracker.cache().Get("bad");
  REQUIRE(cached);
  CHECK(cached->gone);
  CHECK(f.Gauge() == 0);
  CHECK(f.Events("bad") == std::vector<std::string>{"DELETED"});
  CHECK((*f.store->PendingEvents("bad"))[0].object == R"({"spec":1})");
  CHECK(f.Queued() == std::vector<QueueKey>{QueueKey{0, "bad"}});
}

TEST_CASE("a listed object without a readable uid stops deletions from being inferred from that list") {
  QuarantineFixture f;
  f.tracker.OnListed({Obj("a", "1")}, {});
  f.Queued();
  BadObject unknown{{}, "malformed", "list item 1: field 'metadata.uid': expected a non-empty string"};
  f.tracker.OnListed({}, {unknown});
  CHECK_FALSE(f.tracker.cache().Get("a")->gone);
  CHECK(f.Queued().empty());
}
