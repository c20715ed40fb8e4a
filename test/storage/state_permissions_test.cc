#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <sys/stat.h>

#include "storage/state_lock.h"
#include "storage/state_permissions.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/scoped_umask.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

void MakeFile(const std::string& path, mode_t mode) {
  std::ofstream(path) << "x";
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

// Opens a store at `path` and writes a row, so the -wal and -shm files exist while it is open.
std::unique_ptr<SqliteStateStore> OpenAndWrite(const std::string& path) {
  auto store = OpenStore(path);
  REQUIRE(store->RecordHandled(SampleObject("u1"), "create").ok());
  return store;
}

TEST_CASE("a new state file, its WAL, its shared memory and its lock are 0600 even under umask 000") {
  TempDir dir;
  ScopedUmask permissive(0);
  std::string path = dir.File("state.db");
  auto store = OpenAndWrite(path);
  auto lock = StateLock::TryAcquire(path);
  REQUIRE(lock.ok());
  REQUIRE(lock->has_value());
  for (const std::string& file : StateFilesOf(path)) {
    INFO(file);
    CHECK(ModeOf(file) == 0600);
  }
}

TEST_CASE("a umask that takes the owner's own bits still gives a usable 0600 state file") {
  TempDir dir;
  ScopedUmask strict(0277);
  std::string path = dir.File("state.db");
  auto store = OpenAndWrite(path);
  CHECK(ModeOf(path) == 0600);
  CHECK(ModeOf(path + "-wal") == 0600);
  CHECK(ModeOf(path + "-shm") == 0600);
}

TEST_CASE("loose state files and their directory are tightened, and a second start changes nothing") {
  TempDir parent;
  std::string dir = parent.File("state");
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  REQUIRE(::chmod(dir.c_str(), 0755) == 0);
  std::string path = dir + "/state.db";
  for (const std::string& file : StateFilesOf(path)) MakeFile(file, 0644);
  MakeFile(path + ".corrupt-20261129T163128Z", 0600);
  std::string scratch = dir + "/hook-scratch";
  REQUIRE(::mkdir(scratch.c_str(), 0777) == 0);
  REQUIRE(::chmod(scratch.c_str(), 0777) == 0);

  auto first = TightenStatePermissions(path, scratch);
  REQUIRE(first.ok());
  CHECK(first->changed == std::vector<std::string>{
                              dir + " 0755->0700", scratch + " 0777->0700", path + " 0644->0600",
                              path + "-wal 0644->0600", path + "-shm 0644->0600", path + ".lock 0644->0600"});
  CHECK(first->shared_dirs.empty());
  CHECK(ModeOf(dir) == 0700);
  CHECK(ModeOf(scratch) == 0700);
  for (const std::string& file : StateFilesOf(path)) CHECK(ModeOf(file) == 0600);

  auto second = TightenStatePermissions(path, scratch);
  REQUIRE(second.ok());
  CHECK(second->changed.empty());
}

TEST_CASE("a state directory shared with other files keeps its mode, and the state files are still tightened") {
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  std::string path = dir.File("state.db");
  MakeFile(path, 0644);
  MakeFile(dir.File("someone-elses.conf"), 0644);

  auto result = TightenStatePermissions(path, dir.File("hook-scratch"));
  REQUIRE(result.ok());
  CHECK(result->shared_dirs == std::vector<std::string>{dir.path()});
  CHECK(ModeOf(dir.path()) == 0755);
  CHECK(ModeOf(dir.File("someone-elses.conf")) == 0644);
  CHECK(ModeOf(path) == 0600);
}

TEST_CASE("a sticky directory like /tmp is never made private") {
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 01777) == 0);
  auto result = TightenStatePermissions(dir.File("state.db"), dir.File("hook-scratch"));
  REQUIRE(result.ok());
  CHECK(result->shared_dirs == std::vector<std::string>{dir.path()});
  CHECK(ModeOf(dir.path()) == 01777);
}

TEST_CASE("a scratch directory holding anything but hook run directories keeps its mode") {
  TempDir dir;
  std::string scratch = dir.File("scratch");
  REQUIRE(::mkdir(scratch.c_str(), 0755) == 0);
  REQUIRE(::chmod(scratch.c_str(), 0755) == 0);
  REQUIRE(::mkdir((scratch + "/hook-a1b2c3").c_str(), 0700) == 0);
  MakeFile(scratch + "/notes.txt", 0644);
  auto result = TightenStatePermissions(dir.File("state.db"), scratch);
  REQUIRE(result.ok());
  CHECK(result->shared_dirs == std::vector<std::string>{scratch});
  CHECK(ModeOf(scratch) == 0755);
}

}  // namespace
}  // namespace nodehook
