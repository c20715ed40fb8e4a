#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "storage/integrity.h"
#include "storage/state_file.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/scratch_mount.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

// A store at `path` holding the handled object `uid` and u1's pending create.
std::unique_ptr<SqliteStateStore> StoreHolding(const std::string& path, const std::string& uid) {
  auto store = OpenStore(path);
  REQUIRE(store->RecordHandled(SampleObject(uid), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "create")).ok());
  return store;
}

void RequireIntact(const std::string& path) {
  auto verdict = QuickCheck(path);
  REQUIRE(verdict.ok());
  CHECK_FALSE(verdict->damaged);
}

TEST_CASE("a write that hits a full disk fails clearly, changes nothing, and succeeds once space returns") {
  TempDir dir;
  auto store = StoreHolding(dir.File("state.db"), "old");
  REQUIRE(store->SetMaxPageCountForTesting(1).ok());  // capped at the current size

  Status full = store->RecordHandled(SizedObject("u1", 256 * 1024), "create");

  CHECK(full.code() == StatusCode::kUnavailable);
  CHECK(full.message() == "sqlite RecordHandled: database or disk is full");
  // Rolled back as a whole: no diffbase, and the handler's progress is still there.
  CHECK_FALSE(store->GetObject("u1")->has_value());
  CHECK(store->GetHandler("u1", "create")->has_value());
  CHECK(store->GetObject("old")->has_value());

  REQUIRE(store->SetMaxPageCountForTesting(0).ok());
  REQUIRE(store->RecordHandled(SizedObject("u1", 256 * 1024), "create").ok());
  CHECK(store->GetObject("u1")->has_value());
  CHECK_FALSE(store->GetHandler("u1", "create")->has_value());
  store.reset();
  RequireIntact(dir.File("state.db"));
}

TEST_CASE("a really full file system fails writes clearly, keeps every stored row, and recovers") {
  ScratchTmpfs disk("1m");
  if (!disk.MountedOrSkipped()) return;
  std::string path = disk.File("state.db");
  auto store = StoreHolding(path, "before");
  FillDisk(disk.File("filler"));

  Status full = Status::Ok();
  for (int i = 0; i < 64 && full.ok(); ++i) full = store->RecordHandled(SizedObject("u1", 64 * 1024), "create");

  CHECK(full.code() == StatusCode::kUnavailable);
  // Named as a full disk, not as SQLite's "database or disk is full" or "disk I/O error".
  CHECK_THAT(full.message(), Catch::StartsWith("sqlite RecordHandled: no space left on " + disk.path() + " (") &&
                                 Catch::EndsWith(" bytes free)"));
  CHECK(store->GetObject("before")->has_value());

  std::filesystem::remove(disk.File("filler"));
  REQUIRE(store->RecordHandled(SampleObject("after"), "create").ok());
  CHECK(store->GetObject("after")->has_value());
  store.reset();
  RequireIntact(path);
}

TEST_CASE("a state directory that became read-only fails writes clearly and recovers when writable again") {
  ScratchTmpfs disk("1m");
  if (!disk.MountedOrSkipped()) return;
  std::string path = disk.File("state.db");
  StoreHolding(path, "before");  // and closed again, before the directory turns read-only
  REQUIRE(disk.SetReadOnly(true));

  StateDirectoryRules tmpfs_allowed;  // the scratch disk is a tmpfs; this test is about read-only
  tmpfs_allowed.allow_volatile = true;
  Status refused = CheckStateDirectory(path, tmpfs_allowed);
  CHECK(refused.code() == StatusCode::kInvalid);
  CHECK(refused.message() == "state directory " + disk.path() + " is not writable: Read-only file system");
  FakeClock clock;
  auto opened = OpenStateForAgent(path, "node-a", StoreOptions{}, clock, tmpfs_allowed);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().message() == refused.message());

  REQUIRE(disk.SetReadOnly(false));
  auto store = OpenStore(path);
  REQUIRE(store->RecordHandled(SampleObject("after"), "create").ok());
  CHECK(store->GetObject("before")->has_value());
}

}  // namespace
}  // namespace nodehook
