#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

// The fields a record is compared by, one per element, so a failed CHECK shows both sides whole.
std::vector<std::string> Fields(const ObjectRecord& r) {
  return {r.uid, r.resource, r.namespace_name, r.name, r.essence, r.last_object, std::to_string(r.handled_at_ms)};
}

std::vector<std::string> Fields(const HandlerRecord& r) {
  return {r.uid,  r.handler, r.resource, r.namespace_name, r.name, std::to_string(r.retries),
          std::to_string(r.first_start_ms), std::to_string(r.next_attempt_ms), r.last_outcome, r.last_message,
          r.target};
}

TEST_CASE("an object record reads back exactly as it was handled") {
  auto store = OpenStore(":memory:");
  ObjectRecord object = SampleObject("u1");
  REQUIRE(store->RecordHandled(object, "create").ok());

  auto got = store->GetObject("u1");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK(Fields(**got) == Fields(object));

  object.essence = R"({"spec":{"size":4}})";
  object.handled_at_ms += 1000;
  REQUIRE(store->RecordHandled(object, "update").ok());
  CHECK(Fields(**store->GetObject("u1")) == Fields(object));
  // Its summary (the /v1/objects snapshot's read): the same without the two bodies.
  object.essence.clear();
  object.last_object.clear();
  CHECK(Fields(**store->GetObjectSummary("u1")) == Fields(object));
}

TEST_CASE("a handler record reads back exactly as it was recorded, and a new attempt replaces it") {
  auto store = OpenStore(":memory:");
  HandlerRecord attempt = SampleHandler("u1", "create");
  REQUIRE(store->RecordAttempt(attempt).ok());

  auto got = store->GetHandler("u1", "create");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK(Fields(**got) == Fields(attempt));

  attempt.retries = 3;
  attempt.last_outcome = "timeout";
  attempt.next_attempt_ms += 5000;
  REQUIRE(store->RecordAttempt(attempt).ok());
  CHECK(Fields(**store->GetHandler("u1", "create")) == Fields(attempt));
  REQUIRE(store->ListAllHandlers()->size() == 1);
}

TEST_CASE("unknown uids and handlers read as absent, not as errors") {
  auto store = OpenStore(":memory:");
  auto object = store->GetObject("nope");
  REQUIRE(object.ok());
  CHECK_FALSE(object->has_value());
  CHECK_FALSE(store->GetObjectSummary("nope")->has_value());
  auto handler = store->GetHandler("nope", "create");
  REQUIRE(handler.ok());
  CHECK_FALSE(handler->has_value());
}

TEST_CASE("what a handled change reads of one object is its diffbase and its handlers, nothing of others") {
  auto store = OpenStore(":memory:");
  const ObjectRecord object = SampleObject("u1");
  REQUIRE(store->RecordHandled(object, "create").ok());
  const HandlerRecord update = SampleHandler("u1", "update");
  const HandlerRecord event = SampleHandler("u1", "event");
  REQUIRE(store->RecordAttempt(update).ok());
  REQUIRE(store->RecordAttempt(event).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u2", "create")).ok());

  auto state = store->ReadObjectState("u1");
  REQUIRE(state.ok());
  REQUIRE(state->record.has_value());
  CHECK(Fields(*state->record) == Fields(object));
  REQUIRE(state->progress.size() == 2);
  CHECK(Fields(state->progress[0]) == Fields(event));  // by handler name
  CHECK(Fields(state->progress[1]) == Fields(update));

  auto other = store->ReadObjectState("u2");
  REQUIRE(other.ok());
  CHECK_FALSE(other->record.has_value());
  CHECK(other->progress.size() == 1);
  auto unknown = store->ReadObjectState("nope");
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->record.has_value());
  CHECK(unknown->progress.empty());
  // The read's transaction is over: a write begins its own.
  REQUIRE(store->RecordHandled(SampleObject("u2"), "create").ok());
  CHECK(store->ReadObjectState("u2")->progress.empty());
}

TEST_CASE("recording a handler as handled clears only that handler's progress") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "create")).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "event")).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u2", "create")).ok());

  REQUIRE(store->RecordHandled(SampleObject("u1"), "create").ok());

  CHECK_FALSE(store->GetHandler("u1", "create")->has_value());
  auto left = store->ListHandlers("u1");
  REQUIRE(left.ok());
  REQUIRE(left->size() == 1);
  CHECK((*left)[0].handler == "event");
  CHECK(store->GetHandler("u2", "create")->has_value());
}

TEST_CASE("forgetting an object removes its diffbase and all its handlers, and nothing else") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordHandled(SampleObject("u1"), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "delete")).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "event")).ok());
  REQUIRE(store->RecordHandled(SampleObject("u2"), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u2", "delete")).ok());

  REQUIRE(store->Forget("u1").ok());

  CHECK_FALSE(store->GetObject("u1")->has_value());
  CHECK(store->ListHandlers("u1")->empty());
  CHECK(store->GetObject("u2")->has_value());
  CHECK(store->ListHandlers("u2")->size() == 1);
}

TEST_CASE("listing objects returns only those of the asked resource") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordHandled(SampleObject("w1", "widgets.example.com/v1"), "create").ok());
  REQUIRE(store->RecordHandled(SampleObject("w2", "widgets.example.com/v1"), "create").ok());
  REQUIRE(store->RecordHandled(SampleObject("g1", "gadgets.example.com/v1"), "create").ok());

  auto widgets = store->ListObjects("widgets.example.com/v1");
  REQUIRE(widgets.ok());
  REQUIRE(widgets->size() == 2);
  CHECK((*widgets)[0].uid == "w1");
  CHECK((*widgets)[1].uid == "w2");
  auto gadgets = store->ListObjects("gadgets.example.com/v1");
  REQUIRE(gadgets->size() == 1);
  CHECK((*gadgets)[0].uid == "g1");
}

TEST_CASE("an object handled again under another resource id is listed under that one only") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordHandled(SampleObject("w1", "widgets.example.com/v1"), "create").ok());
  ObjectRecord moved = SampleObject("w1", "widgets.example.com/v2");
  moved.essence = R"({"spec":{"moved":true}})";
  REQUIRE(store->RecordHandled(moved, "update").ok());

  CHECK(store->ListObjects("widgets.example.com/v1")->empty());
  auto v2 = store->ListObjects("widgets.example.com/v2");
  REQUIRE(v2->size() == 1);
  CHECK(Fields((*v2)[0]) == Fields(moved));
  CHECK(Fields(**store->GetObject("w1")) == Fields(moved));
}

TEST_CASE("all handlers are listed earliest next attempt first") {
  auto store = OpenStore(":memory:");
  HandlerRecord late = SampleHandler("u1", "create");
  late.next_attempt_ms = 300;
  HandlerRecord early = SampleHandler("u2", "delete");
  early.next_attempt_ms = 100;
  REQUIRE(store->RecordAttempt(late).ok());
  REQUIRE(store->RecordAttempt(early).ok());

  auto all = store->ListAllHandlers();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].uid == "u2");
  CHECK((*all)[1].uid == "u1");
}

TEST_CASE("records of another node in the same file are invisible") {
  TempDir dir;
  auto node_a = OpenStore(dir.File("state.db"), "node-a");
  auto node_b = OpenStore(dir.File("state.db"), "node-b");
  REQUIRE(node_a->RecordHandled(SampleObject("u1"), "create").ok());
  REQUIRE(node_a->RecordAttempt(SampleHandler("u1", "event")).ok());

  CHECK_FALSE(node_b->GetObject("u1")->has_value());
  CHECK(node_b->ListObjects("widgets.example.com/v1")->empty());
  CHECK_FALSE(node_b->GetHandler("u1", "event")->has_value());
  CHECK(node_b->ListHandlers("u1")->empty());
  CHECK(node_b->ListAllHandlers()->empty());

  // Node b's forget must not touch node a's rows for the same uid.
  REQUIRE(node_b->RecordHandled(SampleObject("u1"), "create").ok());
  REQUIRE(node_b->Forget("u1").ok());
  CHECK(node_a->GetObject("u1")->has_value());
  CHECK(node_a->GetHandler("u1", "event")->has_value());
}

TEST_CASE("records survive closing and reopening the state file") {
  TempDir dir;
  {
    auto store = OpenStore(dir.File("state.db"));
    REQUIRE(store->RecordHandled(SampleObject("u1"), "create").ok());
    REQUIRE(store->RecordAttempt(SampleHandler("u1", "event")).ok());
  }
  auto reopened = OpenStore(dir.File("state.db"));
  auto object = reopened->GetObject("u1");
  REQUIRE(object.ok());
  REQUIRE(object->has_value());
  CHECK(Fields(**object) == Fields(SampleObject("u1")));
  auto handler = reopened->GetHandler("u1", "event");
  REQUIRE(handler->has_value());
  CHECK(Fields(**handler) == Fields(SampleHandler("u1", "event")));
}

TEST_CASE("a state file is put in WAL mode") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"));
  // WAL is a property of the file, so a second, plain connection sees it.
  auto raw = SqliteDb::Open(dir.File("state.db"));
  REQUIRE(raw.ok());
  auto mode = (*raw)->QueryText("test", "PRAGMA journal_mode");
  REQUIRE(mode.ok());
  CHECK(*mode == "wal");
}

TEST_CASE("a file that is not a database is refused as damaged") {
  TempDir dir;
  {
    std::FILE* f = std::fopen(dir.File("state.db").c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("this is not a sqlite file, it is just some text long enough to have a header....", f);
    std::fclose(f);
  }
  auto store = SqliteStateStore::Open(dir.File("state.db"), "node-a", StoreOptions{});
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kInternal);
  CHECK_THAT(store.status().message(), Catch::Contains("sqlite Open: file is not a database"));
  CHECK_THAT(store.status().message(), Catch::Contains(dir.File("state.db")));
}

}  // namespace
}  // namespace nodehook
