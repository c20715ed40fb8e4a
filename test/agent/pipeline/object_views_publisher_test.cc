// ObjectViewsPublisher: the snapshot behind GET /v1/objects is read on the housekeeping thread,
// only when the store changed (or it is old), only for the objects announced as changed, and
// never carries stored object bodies.
#include <catch2/catch.hpp>

#include <random>

#include "agent/pipeline/object_views_publisher.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

using std::chrono::seconds;

struct Fixture {
  TempDir dir;
  FakeClock clock;
  std::unique_ptr<SqliteStateStore> store =
      std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value();
  ObjectViewsPublisher publisher{*store, clock, ObjectViewsPublisherOptions{seconds(1), seconds(30)}};

  void Handle(const std::string& name) {
    ObjectRecord o{"uid-" + name, "widgets.example.com/v1", "ns", name, R"({"spec":{"secret":"essence"}})",
                   R"({"spec":{"secret":"last object"}})", ToMillis(clock.Now())};
    REQUIRE(store->RecordHandled(o, kCreate).ok());
  }
  void Fail(const std::string& name) {
    HandlerRecord h;
    h.uid = "uid-" + name;
    h.handler = kCreate;
    h.resource = "widgets.example.com/v1";
    h.namespace_name = "ns";
    h.name = name;
    h.retries = 2;
    h.last_outcome = "failed";
    h.last_message = "exit 1";
    h.last_object = R"({"spec":{"secret":"handler object"}})";
    REQUIRE(store->RecordAttempt(h).ok());
  }
  size_t Count() { return publisher.Latest().value()->objects.size(); }
  // A second later: a refresh is due for whatever was announced; the snapshot after it.
  ObjectViewsPtr RefreshedLater() {
    clock.Advance(seconds(1));
    publisher.RefreshIfDue();
    return publisher.Latest().value();
  }
  // The served form of the latest snapshot's objects, to compare two snapshots by content.
  static std::string Served(const ObjectViewsSnapshot& snapshot) {
    std::vector<ObjectView> views;
    for (const SharedSnapshotObject& v : snapshot.objects) views.push_back(AsObjectView(*v));
    return ObjectsToJson(views, 0, false);
  }

  static constexpr const char* kCreate = "create";
};

TEST_CASE("until the first refresh there is no snapshot, and the answer says why") {
  Fixture f;
  auto latest = f.publisher.Latest();
  REQUIRE_FALSE(latest.ok());
  CHECK(latest.status().code() == StatusCode::kUnavailable);
}

TEST_CASE("a snapshot is read again only after a change, and at most once per min_interval") {
  Fixture f;
  f.Handle("a");
  f.publisher.RefreshIfDue();
  CHECK(f.Count() == 1);

  f.Handle("b");  // not announced: the snapshot stays as it was
  f.publisher.RefreshIfDue();
  CHECK(f.Count() == 1);

  f.publisher.MarkChanged("uid-b");
  f.publisher.RefreshIfDue();  // still within min_interval of the last read
  CHECK(f.Count() == 1);
  f.clock.Advance(seconds(1));
  f.publisher.RefreshIfDue();
  CHECK(f.Count() == 2);
}

TEST_CASE("an unannounced change (nodehook state forget from outside) shows once the snapshot is max_age old") {
  Fixture f;
  f.Handle("a");
  f.publisher.RefreshIfDue();
  REQUIRE(f.store->Forget("uid-a").ok());
  f.clock.Advance(seconds(29));
  f.publisher.RefreshIfDue();
  CHECK(f.Count() == 1);
  f.clock.Advance(seconds(1));
  f.publisher.RefreshIfDue();
  CHECK(f.Count() == 0);
}

TEST_CASE("at rest the store is not read again at max_age; a change from another process is") {
  Fixture f;
  f.Handle("a");
  f.publisher.RefreshIfDue();
  const ObjectViewsPtr first = f.publisher.Latest().value();
  f.clock.Advance(seconds(90));
  f.publisher.RefreshIfDue();
  CHECK(f.publisher.Latest().value() == first);  // nothing written since: the same snapshot

  // `nodehook state forget` from outside the agent: another connection writes the file.
  RawExec(f.dir.File("state.db"), "outside", {"DELETE FROM objects WHERE uid = 'uid-a'"});
  f.publisher.RefreshIfDue();
  CHECK(f.Count() == 0);
}

TEST_CASE("a refresh reads only the objects announced by uid; the others are the previous snapshot's views") {
  Fixture f;
  f.Handle("a");
  f.Handle("c");
  auto first = f.RefreshedLater();
  f.Fail("a");    // a change nobody announced: a's view is kept as it was
  f.Handle("b");  // sorted between a and c
  f.publisher.MarkChanged("uid-b");
  auto next = f.RefreshedLater();
  REQUIRE(next->objects.size() == 3);
  CHECK(next->objects[0] == first->objects[0]);  // the same view, not read again
  CHECK(next->objects[0]->handlers.empty());
  CHECK(next->objects[1]->uid.str() == "uid-b");
  CHECK(next->objects[2] == first->objects[1]);
  // Announced, a is read again; forgotten and announced, c leaves the snapshot.
  REQUIRE(f.store->Forget("uid-c").ok());
  f.publisher.MarkChanged("uid-a");
  f.publisher.MarkChanged("uid-c");
  auto last = f.RefreshedLater();
  REQUIRE(last->objects.size() == 2);
  CHECK(last->objects[0]->handlers.size() == 1);
  CHECK(last->objects[1] == next->objects[1]);
}

TEST_CASE("an announced object whose record cannot be read keeps its view; the others are read") {
  Fixture f;
  f.Handle("a");
  f.Fail("b");
  auto first = f.RefreshedLater();
  RawExec(f.dir.File("state.db"), "corrupt", {"UPDATE handlers SET retries = 'many' WHERE uid = 'uid-b'"});
  f.Handle("c");
  f.publisher.MarkChanged("uid-b");
  f.publisher.MarkChanged("uid-c");
  auto next = f.RefreshedLater();
  REQUIRE(next->objects.size() == 3);
  CHECK(next->objects[1] == first->objects[1]);  // b as it was
  CHECK(next->objects[2]->uid.str() == "uid-c");
}

TEST_CASE("MarkAllChanged reads the whole store again (garbage collection, retry requests)") {
  Fixture f;
  f.Handle("a");
  f.RefreshedLater();
  REQUIRE(f.store->Forget("uid-a").ok());
  f.Handle("b");
  f.publisher.MarkAllChanged();
  auto snapshot = f.RefreshedLater();
  REQUIRE(snapshot->objects.size() == 1);
  CHECK(snapshot->objects[0]->uid.str() == "uid-b");
}

TEST_CASE("announced changes in any order give the snapshot a whole read gives (random operations)") {
  const uint32_t seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  Fixture f;
  f.publisher.RefreshIfDue();
  for (int round = 0; round < 25; ++round) {  // within max_age: every refresh after the first is partial
    const int changes = std::uniform_int_distribution<int>(1, 6)(rng);
    for (int i = 0; i < changes; ++i) {
      const std::string name = "o" + std::to_string(std::uniform_int_distribution<int>(0, 14)(rng));
      switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
        case 0: f.Handle(name); break;
        case 1: f.Fail(name); break;
        default: REQUIRE(f.store->Forget("uid-" + name).ok()); break;
      }
      f.publisher.MarkChanged("uid-" + name);
    }
    ObjectViewsPtr partial = f.RefreshedLater();
    ObjectViewsPublisher whole{*f.store, f.clock, ObjectViewsPublisherOptions{}};
    whole.RefreshIfDue();
    REQUIRE(Fixture::Served(*partial) == Fixture::Served(*whole.Latest().value()));
  }
}

// A clock whose every reading is `step` later than the one before: each store read "takes" a step.
class TickingClock final : public Clock {
 public:
  explicit TickingClock(Duration step) : step_(step) {}
  TimePoint Now() const override {
    TimePoint now = now_;
    now_ += step_;
    return now;
  }
  bool WaitUntil(std::condition_variable&, std::unique_lock<std::mutex>&, TimePoint,
                 const std::function<bool()>&) override {
    return false;
  }
  void Advance(Duration d) { now_ += d; }

 private:
  Duration step_;
  mutable TimePoint now_ = FromMillis(1'700'000'000'000);
};

TEST_CASE("after a slow read, the store is read again only when 1/max_busy_share times as long has passed") {
  TempDir dir;
  auto store = std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value();
  TickingClock clock(std::chrono::milliseconds(100));  // every read takes 100 ms
  ObjectViewsPublisher publisher(*store, clock, ObjectViewsPublisherOptions{seconds(1), seconds(30), 0.05});
  publisher.RefreshIfDue();
  TimePoint first = publisher.Latest().value()->taken_at;
  publisher.MarkAllChanged();
  clock.Advance(std::chrono::milliseconds(1500));  // past min_interval, short of 20 x 100 ms
  publisher.RefreshIfDue();
  CHECK(publisher.Latest().value()->taken_at == first);
  clock.Advance(std::chrono::milliseconds(500));
  publisher.RefreshIfDue();
  CHECK(publisher.Latest().value()->taken_at > first);
}

TEST_CASE("the snapshot holds progress and identity but no stored object bodies") {
  Fixture f;
  f.Handle("a");
  f.Fail("b");
  f.publisher.RefreshIfDue();
  auto snapshot = f.publisher.Latest().value();
  REQUIRE(snapshot->objects.size() == 2);
  CHECK(snapshot->node == "node-a");
  const SnapshotObject& a = *snapshot->objects[0];
  // When it was handled, not the diffbase (SnapshotObject has no place for one).
  CHECK(a.uid.str() == "uid-a");
  CHECK(a.handled_at_ms == ToMillis(f.clock.Now()));
  const SnapshotObject& b = *snapshot->objects[1];
  CHECK(b.handled_at_ms == -1);  // never handled: only its progress row
  REQUIRE(b.handlers.size() == 1);
  CHECK(b.handlers[0].retries == 2);
  CHECK(b.handlers[0].last_message == "exit 1");
}

TEST_CASE("a snapshot keeps one copy of each handler's name and outcome and serves handlers with their object's identity") {
  Fixture f;
  f.Fail("a");
  f.Fail("b");
  f.publisher.RefreshIfDue();
  auto snapshot = f.publisher.Latest().value();
  REQUIRE(snapshot->objects.size() == 2);
  const SnapshotHandler& a = snapshot->objects[0]->handlers.at(0);
  const SnapshotHandler& b = snapshot->objects[1]->handlers.at(0);
  CHECK(a.handler == b.handler);
  CHECK(a.handler.data() == b.handler.data());
  CHECK(a.last_outcome.data() == b.last_outcome.data());
  ObjectView served = AsObjectView(*snapshot->objects[1]);
  REQUIRE(served.handlers.size() == 1);
  CHECK(served.handlers[0].uid == "uid-b");
  CHECK(served.handlers[0].name == "b");
  CHECK(served.handlers[0].resource == served.resource);
  CHECK(served.handlers[0].handler == std::string(b.handler));
  CHECK(served.handlers[0].retries == 2);
  CHECK(served.handlers[0].last_object.empty());
}

}  // namespace
}  // namespace nodehook
