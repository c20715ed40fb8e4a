#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "storage/migrations.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

Result<std::string> UserVersion(const std::string& path) {
  auto db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  return (*db)->QueryText("test", "PRAGMA user_version");
}

TEST_CASE("migrations are numbered from 1 without gaps") {
  const auto& migrations = StateMigrations();
  REQUIRE_FALSE(migrations.empty());
  for (size_t i = 0; i < migrations.size(); ++i) CHECK(migrations[i].version == static_cast<int>(i) + 1);
  CHECK(LatestSchemaVersion() == migrations.back().version);
}

TEST_CASE("a new state file is created at the latest schema version") {
  TempDir dir;
  OpenStore(dir.File("state.db"));
  auto version = UserVersion(dir.File("state.db"));
  REQUIRE(version.ok());
  CHECK(*version == std::to_string(LatestSchemaVersion()));
}

TEST_CASE("a state file from a newer nodehook is refused, untouched") {
  TempDir dir;
  std::string path = dir.File("state.db");
  RawExec(path, "test", {"PRAGMA user_version = 70"});
  auto store = SqliteStateStore::Open(path, "node-a", StoreOptions{});
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kInvalid);
  CHECK(store.status().message() ==
        "state file " + path + " has schema version 70 but this nodehook understands up to " +
            std::to_string(LatestSchemaVersion()) + "; refusing to open it (downgrade?)");
  CHECK(*UserVersion(path) == "70");
}

TEST_CASE("a version 1 file keeps its rows when migrated to the latest version and gains incremental vacuum") {
  TempDir dir;
  std::string path = dir.File("state.db");
  RawExec(path, "v1",
          {"PRAGMA journal_mode = WAL", StateMigrations()[0].sql, "PRAGMA user_version = 1",
           "INSERT INTO objects VALUES ('u1', 'node-a', 'widgets.example.com/v1', 'ns', 'w', '{}', '{}', 5)"});
  REQUIRE(*SqliteDb::Open(path).value()->QueryText("v1", "PRAGMA auto_vacuum") == "0");

  auto store = OpenStore(path);

  CHECK(*UserVersion(path) == std::to_string(LatestSchemaVersion()));
  auto object = store->GetObject("u1");
  REQUIRE(object->has_value());
  CHECK((*object)->handled_at_ms == 5);
  REQUIRE(store->MarkGone("u1", 1).ok());
  REQUIRE(store->SetAdoptExisting(true).ok());
  auto raw = SqliteDb::Open(path);
  REQUIRE(raw.ok());
  CHECK(*(*raw)->QueryText("test", "PRAGMA auto_vacuum") == "2");
  CHECK(*(*raw)->QueryText("test", "SELECT count(*) FROM retry_requests") == "0");
}

TEST_CASE("a version 7 file keeps its node steps at version 8, with nothing counted against their timeouts yet") {
  TempDir dir;
  std::string path = dir.File("state.db");
  std::vector<std::string> v7 = {"PRAGMA journal_mode = WAL"};
  for (int v = 0; v < 7; ++v) v7.emplace_back(StateMigrations()[v].sql);
  v7.emplace_back("PRAGMA user_version = 7");
  v7.emplace_back("INSERT INTO node_steps VALUES ('u1', 'node-a', 'widgets.example.com/v1', 's1', "
                  "'draining', 1, 0, '', 0, 5, 'default/db-0\n', 2, '')");
  RawExec(path, "v7", v7);
  auto store = OpenStore(path);
  CHECK(*UserVersion(path) == std::to_string(LatestSchemaVersion()));
  auto steps = store->GetNodeSteps("u1");
  REQUIRE(steps.ok());
  REQUIRE(steps->has_value());
  CHECK((*steps)->step == "draining");
  CHECK((*steps)->step_started_ms == 5);
  CHECK((*steps)->pods_left == "default/db-0\n");
  CHECK((*steps)->step_spent_ms == 0);
  CHECK((*steps)->step_seen_ms == 0);
}

TEST_CASE("a new state file uses incremental vacuum") {
  TempDir dir;
  OpenStore(dir.File("state.db"));
  auto raw = SqliteDb::Open(dir.File("state.db"));
  REQUIRE(raw.ok());
  CHECK(*(*raw)->QueryText("test", "PRAGMA auto_vacuum") == "2");
}

TEST_CASE("a store opened with full synchronous commits works like the default") {
  TempDir dir;
  StoreOptions options;
  options.synchronous_full = true;
  auto store = SqliteStateStore::Open(dir.File("state.db"), "node-a", options);
  REQUIRE(store.ok());
  REQUIRE((*store)->RecordHandled(SampleObject("u1"), "create").ok());
  CHECK((*store)->GetObject("u1")->has_value());
}

}  // namespace
}  // namespace nodehook
