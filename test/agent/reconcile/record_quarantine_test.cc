// A state record that cannot be read (issue 25, item 5): the object is set aside on its own, said
// once (log line, ObjectQuarantined Event) and counted; no hook runs and it is not retried every
// few seconds; the other objects go on. `nodehook state forget` clears it.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include "test/agent/reconcile/reconciler_fixture.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/temp_dir.h"

using namespace nodehook;

namespace {

struct QuarantineEvents final : EventRecorder {
  std::vector<std::string> messages;
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void Quarantined(const ResourceRef&, const ObjectMeta& o, const std::string& m) override {
    messages.push_back(o.uid + ": " + m);
  }
};

// Another connection edits the file under the store, as a person (or a bad disk) might.
void Corrupt(const std::string& path, const std::string& uid) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  std::string sql = "UPDATE objects SET last_object = 'garbage' WHERE uid = '" + uid + "'";
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace

TEST_CASE("an object whose state record cannot be read is set aside on its own, said once, until forgotten") {
  TempDir dir;
  const std::string path = dir.File("state.db");
  Fixture f;
  f.store = std::move(SqliteStateStore::Open(path, "node-a", {})).value();
  QuarantineEvents events;
  f.events.target = &events;
  f.Restart();
  CapturedLog log;
  auto r = Resource({kReasonCreate, kReasonUpdate});
  f.cache.Upsert(Widget("u1", "1", 1));
  f.cache.Upsert(Widget("u2", "1", 1));
  f.Reconcile(r, "u1");
  f.Reconcile(r, "u2");
  REQUIRE(f.runner.call_count() == 2);

  Corrupt(path, "u1");
  f.cache.Upsert(Widget("u1", "2", 2));
  f.cache.Upsert(Widget("u2", "2", 2));
  CHECK_FALSE(f.Reconcile(r, "u1").has_value());  // not retried on a timer
  CHECK(f.runner.call_count() == 2);              // no hook for it
  f.Reconcile(r, "u2");
  CHECK(f.runner.call_count() == 3);  // the others go on
  CHECK(f.LastReason() == kReasonUpdate);
  // Changed again: still set aside, not said again.
  f.cache.Upsert(Widget("u1", "3", 3));
  CHECK_FALSE(f.Reconcile(r, "u1").has_value());
  CHECK(f.runner.call_count() == 3);
  REQUIRE(events.messages.size() == 1);
  CHECK_THAT(events.messages[0], Catch::Contains("u1: its state record on this node cannot be read (state record "
                                                 "objects[uid u1]: last_object is not a JSON object)"));
  CHECK_THAT(events.messages[0], Catch::Contains("nodehook state forget u1"));
  CHECK(log.Count("state record quarantined") == 1);
  CHECK(f.reconciler->quarantined_records() == 1);

  // A person forgets it: the object is handled as new.
  REQUIRE(f.store->Forget("u1").ok());
  f.Reconcile(r, "u1");
  CHECK(f.runner.call_count() == 4);
  CHECK(f.LastReason() == kReasonCreate);
  CHECK(f.reconciler->quarantined_records() == 0);
  CHECK(log.Count("state record readable again") == 1);
}
