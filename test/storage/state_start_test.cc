// What a start finds on the node before it opens the state: a file gone where an agent ran, a
// full disk, and what the lock file remembers.
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include "storage/disk_space.h"
#include "storage/state_file.h"
#include "storage/state_lock.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/scratch_mount.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

namespace fs = std::filesystem;

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

StateLock MustTake(const std::string& state_file) {
  auto lock = StateLock::TryAcquire(state_file);
  REQUIRE(lock.ok());
  REQUIRE(lock->has_value());
  return std::move(**lock);
}

TEST_CASE("a new lock file has no history; a cleanly released one has no holder; a killed holder is named") {
  TempDir dir;
  std::string file = dir.File("state.db");
  {
    StateLock first = MustTake(file);
    CHECK_FALSE(first.lock_file_existed());
    CHECK(first.previous_holder().empty());
  }
  {
    StateLock second = MustTake(file);
    CHECK(second.lock_file_existed());
    CHECK(second.previous_holder().empty());  // released cleanly: the holder cleared its name
  }
  WriteFile(file + ".lock", "pid 4242 on host node-a\n");  // what a killed holder leaves
  StateLock third = MustTake(file);
  CHECK(third.lock_file_existed());
  CHECK(third.previous_holder() == "pid 4242 on host node-a");
}

TEST_CASE("a state file gone where an agent held the lock is logged at warn and starts empty") {
  TempDir dir;
  std::string path = dir.File("state.db");
  FakeClock clock;
  CapturedLog log;

  auto opened = OpenStateForAgent(path, "node-a", StoreOptions{}, clock, {}, PriorUse{true, "pid 7 on host a"});

  REQUIRE(opened.ok());
  CHECK(opened->state_file_missing);
  CHECK(opened->store->ListAllObjects()->empty());
  CHECK_FALSE(*opened->store->AdoptExistingPending());  // unlike a recovery: nothing says what was handled
  REQUIRE(log.Count("state file is gone; starting with an empty state: every create hook runs again") == 1);
  CHECK(log.Count("level=warn") == 1);
  CHECK(log.Count("last_holder=\"pid 7 on host a\"") == 1);
}

TEST_CASE("a first start, with no lock file before it, is not a missing state file") {
  TempDir dir;
  FakeClock clock;
  CapturedLog log;
  auto opened = OpenStateForAgent(dir.File("state.db"), "node-a", StoreOptions{}, clock, {}, PriorUse{});
  REQUIRE(opened.ok());
  CHECK_FALSE(opened->state_file_missing);
  CHECK(log.Count("is gone") == 0);
}

TEST_CASE("a WAL left without its state file is moved aside, never applied to the new file") {
  TempDir dir;
  std::string path = dir.File("state.db");
  WriteFile(path + "-wal", "frames of a file that is gone");
  WriteFile(path + "-shm", "its index");
  FakeClock clock;  // 2023-11-14T22:13:20Z

  auto opened = OpenStateForAgent(path, "node-a", StoreOptions{}, clock, {}, PriorUse{true, ""});

  REQUIRE(opened.ok());
  CHECK(opened->state_file_missing);
  CHECK(fs::exists(path + ".orphan-20231114T221320Z-wal"));
  CHECK(fs::exists(path + ".orphan-20231114T221320Z-shm"));
  REQUIRE(opened->store->RecordHandled(SampleObject("u1"), "create").ok());
}

TEST_CASE("the no-space message names the directory and the bytes free") {
  CHECK(NoSpaceMessage("/var/lib/nodehook", 12288) == "no space left on /var/lib/nodehook (12288 bytes free)");
  TempDir roomy;  // the test machine's temp directory has room, so nothing is called full
  CHECK(NoSpaceIfFull(roomy.path(), 0).empty());
  CHECK_THAT(NoSpaceIfFull(roomy.path(), ENOSPC), Catch::StartsWith("no space left on " + roomy.path() + " ("));
}

TEST_CASE("a full file system names itself in writes and refuses a start, after a clean stop or a kill alike") {
  ScratchTmpfs disk("4m");  // room for a start (1 MiB) once the filler is gone
  if (!disk.MountedOrSkipped()) return;
  StateDirectoryRules tmpfs_allowed;
  tmpfs_allowed.allow_volatile = true;
  FakeClock clock;
  std::string clean = disk.File("clean.db");
  std::string killed = disk.File("killed.db");
  { REQUIRE(OpenStore(clean)->RecordHandled(SampleObject("u1"), "create").ok()); }  // closed: no -wal left
  auto running = OpenStore(killed);  // stays open: its -wal and -shm stay, as after a kill
  REQUIRE(running->RecordHandled(SampleObject("u1"), "create").ok());
  FillDisk(disk.File("filler"));

  Status write = running->RecordHandled(SizedObject("u2", 256 * 1024), "create");
  CHECK_THAT(write.message(), Catch::StartsWith("sqlite RecordHandled: no space left on " + disk.path() + " ("));

  for (const std::string& path : {clean, killed}) {
    INFO(path);
    auto opened = OpenStateForAgent(path, "node-a", StoreOptions{}, clock, tmpfs_allowed);
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().code() == StatusCode::kUnavailable);
    CHECK_THAT(opened.status().message(),
               Catch::StartsWith("no space left on " + disk.path() + " (") &&
                   Catch::EndsWith(" bytes free); the agent needs 1048576 bytes free to start"));
  }
  fs::remove(disk.File("filler"));
  auto reopened = OpenStateForAgent(clean, "node-a", StoreOptions{}, clock, tmpfs_allowed);
  REQUIRE(reopened.ok());
  CHECK(reopened->store->GetObject("u1")->has_value());
}

}  // namespace
}  // namespace nodehook
