// One record that is not what the store writes (edited by hand, damaged) is kCorrupt for reads
// of its own uid, and left out of lists across objects: the rest of the file reads as before
// (issue 25, item 5). The row itself is kept: nothing is deleted behind a person's back.
#include <catch2/catch.hpp>

#include <string>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {

TEST_CASE("a corrupt record is kCorrupt for its own uid and left out of lists; the others read as before") {
  TempDir dir;
  const std::string path = dir.File("state.db");
  {
    auto store = OpenStore(path);
    for (const char* uid : {"u1", "u2", "u3"}) {
      REQUIRE(store->RecordHandled(SampleObject(uid), "create").ok());
      REQUIRE(store->RecordAttempt(SampleHandler(uid, "update")).ok());
    }
  }
  std::string what;
  size_t summaries = 3;  // a summary leaves last_object out, so only a bad handled_at_ms drops it
  SECTION("a stored object that is not a JSON object") {
    RawExec(path, "corrupt", {"UPDATE objects SET last_object = 'garbage' WHERE uid = 'u2'"});
    what = "state record objects[uid u2]: last_object is not a JSON object";
  }
  SECTION("a time that is not a number") {
    RawExec(path, "corrupt", {"UPDATE objects SET handled_at_ms = 'yesterday' WHERE uid = 'u2'"});
    what = "state record objects[uid u2]: handled_at_ms is not an integer";
    summaries = 2;
  }
  SECTION("a handler's retry count that is not a number") {
    RawExec(path, "corrupt", {"UPDATE handlers SET retries = 'many' WHERE uid = 'u2'"});
    what = "state record handlers[uid u2]: handler update: retries, first_start_ms and next_attempt_ms must be integers";
  }
  auto store = OpenStore(path);
  auto object = store->GetObject("u2");
  auto handlers = store->ListHandlers("u2");
  const Status& bad = object.ok() ? handlers.status() : object.status();
  CHECK(bad.code() == StatusCode::kCorrupt);
  CHECK(bad.message() == what);
  // The read a handled change makes (one transaction for both) says the same, and ends its
  // transaction on the way out: the writes below could not begin theirs otherwise.
  auto state = store->ReadObjectState("u2");
  CHECK(state.status().code() == StatusCode::kCorrupt);
  CHECK(state.status().message() == what);
  CHECK(store->ReadObjectState("u1")->record.has_value());
  CHECK(store->GetObject("u1")->has_value());
  CHECK(store->ListHandlers("u3")->size() == 1);
  size_t readable_objects = object.ok() ? 3 : 2;
  size_t readable_handlers = handlers.ok() ? 3 : 2;
  CHECK(store->ListAllObjects()->size() == readable_objects);
  CHECK(store->ListObjects("widgets.example.com/v1")->size() == readable_objects);
  CHECK(store->ListObjectSummaries()->size() == summaries);
  CHECK(store->ListAllHandlers()->size() == readable_handlers);
  // Kept, and counted, until a person forgets it; then the object reads as new.
  CHECK(store->Summarize()->rows.at("objects") == 3);
  REQUIRE(store->Forget("u2").ok());
  CHECK(store->GetObject("u2").ok());
  CHECK_FALSE(store->GetObject("u2")->has_value());
  CHECK(store->ListHandlers("u2")->empty());
}

}  // namespace nodehook
