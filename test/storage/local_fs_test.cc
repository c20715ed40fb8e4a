#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "storage/local_fs.h"
#include "storage/state_file.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/scratch_mount.h"

namespace nodehook {
namespace {

constexpr int64_t kNfs = 0x6969;
constexpr int64_t kCifs = 0xFF534D42;
constexpr int64_t kFuse = 0x65735546;
constexpr int64_t kExt4 = 0xEF53;
constexpr int64_t kTmpfs = 0x01021994;
constexpr int64_t kOverlay = 0x794C7630;
constexpr int64_t kXfs = 0x58465342;
constexpr int64_t kBtrfs = 0x9123683E;

constexpr int64_t kRamfs = 0x858458F6;

StateDirectoryRules Pretend(int64_t type, bool allow_volatile = false) {
  StateDirectoryRules rules;
  rules.allow_volatile = allow_volatile;
  rules.probe = [type](const std::string&) -> Result<int64_t> { return type; };
  return rules;
}

// A state file in a fresh directory on file system `type` is refused as kInvalid, with
// "state directory <the directory>" and `reason`.
void CheckRefused(int64_t type, const std::string& reason) {
  TempDir dir;
  Status status = CheckStateDirectory(dir.File("state.db"), Pretend(type));
  CHECK(status.code() == StatusCode::kInvalid);
  CHECK(status.message() == "state directory " + dir.path() + reason);
}

TEST_CASE("a state directory on NFS is refused with a message naming the file system and the path") {
  CheckRefused(kNfs,
               " is on nfs (statfs type 0x6969), a network or FUSE file system where SQLite's WAL locking and shared "
               "memory are unsafe; put state_file on a local disk (e.g. a hostPath)");
}

TEST_CASE("CIFS and FUSE state directories are refused too") {
  TempDir dir;
  CHECK_THAT(CheckStateDirectory(dir.File("state.db"), Pretend(kCifs)).message(),
             Catch::Contains(" is on cifs (statfs type 0xff534d42)"));
  CHECK_THAT(CheckStateDirectory(dir.File("state.db"), Pretend(kFuse)).message(),
             Catch::Contains(" is on fuse (statfs type 0x65735546)"));
}

TEST_CASE("local disk file systems are accepted, overlay included") {
  TempDir dir;
  for (int64_t type : {kExt4, kOverlay, kXfs, kBtrfs}) {
    INFO(type);
    CHECK(CheckStateDirectory(dir.File("state.db"), Pretend(type)).ok());
    CHECK(UnsafeFileSystemName(type) == nullptr);
  }
}

TEST_CASE("the real temp directory is accepted") {
  TempDir dir;
  auto type = StatfsType(dir.path());
  REQUIRE(type.ok());
  INFO("temp dir file system type " << *type);
  CHECK(CheckStateDirectory(dir.File("state.db")).ok());
}

TEST_CASE("a state directory in memory is refused by default, naming the file system and the opt-in knob") {
  CheckRefused(kTmpfs,
               " is on tmpfs (statfs type 0x1021994), which is emptied on every reboot: every object would then look "
               "new and its create hook would run again; put state_file on a disk (e.g. a hostPath), or accept this "
               "with allow_volatile_state (--allow-volatile-state, NODEHOOK_ALLOW_VOLATILE_STATE)");
  TempDir dir;
  CHECK_THAT(CheckStateDirectory(dir.File("state.db"), Pretend(kRamfs)).message(),
             Catch::Contains(" is on ramfs (statfs type 0x858458f6), which is emptied on every reboot"));
}

TEST_CASE("a state directory in memory is accepted when the user opted in") {
  TempDir dir;
  CHECK(CheckStateDirectory(dir.File("state.db"), Pretend(kTmpfs, true)).ok());
  CHECK(CheckStateDirectory(dir.File("state.db"), Pretend(kRamfs, true)).ok());
}

TEST_CASE("opting in to volatile state still refuses a network file system") {
  TempDir dir;
  CHECK_THAT(CheckStateDirectory(dir.File("state.db"), Pretend(kNfs, true)).message(), Catch::Contains(" is on nfs "));
}

TEST_CASE("a real tmpfs is recognised, refused by default and accepted with the opt-in") {
  ScratchTmpfs tmpfs("4m");  // room for a start: 1 MiB must be free
  if (!tmpfs.MountedOrSkipped()) return;
  auto type = StatfsType(tmpfs.path());
  REQUIRE(type.ok());
  CHECK(*type == kTmpfs);
  CHECK(CheckStateDirectory(tmpfs.File("state.db")).code() == StatusCode::kInvalid);
  StateDirectoryRules allow;
  allow.allow_volatile = true;
  CHECK(CheckStateDirectory(tmpfs.File("state.db"), allow).ok());
  FakeClock clock;
  CHECK_FALSE(OpenStateForAgent(tmpfs.File("state.db"), "node-a", StoreOptions{}, clock).ok());
  CHECK_FALSE(std::filesystem::exists(tmpfs.File("state.db")));
  CHECK(OpenStateForAgent(tmpfs.File("state.db"), "node-a", StoreOptions{}, clock, allow).ok());
}

TEST_CASE("a missing state directory is refused naming it") {
  Status status = CheckStateDirectory("/nonexistent-nodehook-dir/state.db");
  CHECK(status.code() == StatusCode::kInvalid);
  CHECK(status.message() ==
        "state directory /nonexistent-nodehook-dir of state file /nonexistent-nodehook-dir/state.db: "
        "No such file or directory");
}

TEST_CASE("the state directory is the path's directory part") {
  CHECK(StateDirectoryOf("/var/lib/nodehook/state.db") == "/var/lib/nodehook");
  CHECK(StateDirectoryOf("/state.db") == "/");
  CHECK(StateDirectoryOf("state.db") == ".");
}

TEST_CASE("the agent refuses to open a state file on a network file system, creating nothing") {
  TempDir dir;
  FakeClock clock;
  auto opened = OpenStateForAgent(dir.File("state.db"), "node-a", StoreOptions{}, clock, Pretend(kNfs));
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(opened.status().message(), Catch::Contains(" is on nfs "));
  CHECK_FALSE(std::filesystem::exists(dir.File("state.db")));
}

}  // namespace
}  // namespace nodehook
