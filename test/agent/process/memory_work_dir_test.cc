#include <catch2/catch.hpp>

#include <stdlib.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <filesystem>

#include "agent/process/memory_work_dir.h"
#include "test/agent/process/hook_test_util.h"

using namespace nodehook;
namespace fs = std::filesystem;

namespace {

// A fresh directory under /dev/shm (tmpfs on Linux), standing in for a memory root.
class MemoryRoot {
 public:
  MemoryRoot() {
    char pattern[] = "/dev/shm/nodehook-test-root-XXXXXX";
    if (mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~MemoryRoot() {
    if (!path_.empty()) fs::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("the memory work directory is private and named by the state file's absolute path") {
  MemoryRoot root;
  REQUIRE_FALSE(root.path().empty());
  auto dir = PrivateMemoryWorkDir(root.path(), "/var/lib/nodehook/state.db");
  REQUIRE(dir.ok());
  REQUIRE(*dir == root.path() + "/" + MemoryWorkDirName("/var/lib/nodehook/state.db"));
  REQUIRE(ModeOf(*dir) == 0700);
  REQUIRE(MemoryWorkDirName("/var/lib/nodehook/state.db").size() == std::string("nodehook-").size() + 16);
  REQUIRE(MemoryWorkDirName("/var/lib/nodehook/state.db") != MemoryWorkDirName("/var/lib/other/state.db"));
  const std::string cwd = fs::current_path().string();
  REQUIRE(MemoryWorkDirName("state.db") == MemoryWorkDirName(cwd + "/state.db"));
  // Taken again at the next start; a loosened one is made private again.
  REQUIRE(chmod(dir->c_str(), 0755) == 0);
  REQUIRE(PrivateMemoryWorkDir(root.path(), "/var/lib/nodehook/state.db").ok());
  REQUIRE(ModeOf(*dir) == 0700);
}

TEST_CASE("a memory work directory owned by another user is refused, not used") {
  if (geteuid() != 0) return;  // only root can make a directory someone else's
  MemoryRoot root;
  const std::string squatted = root.path() + "/" + MemoryWorkDirName("/s/state.db");
  REQUIRE(mkdir(squatted.c_str(), 0777) == 0);
  REQUIRE(chown(squatted.c_str(), 65534, 65534) == 0);
  auto dir = PrivateMemoryWorkDir(root.path(), "/s/state.db");
  REQUIRE_FALSE(dir.ok());
  REQUIRE_THAT(dir.status().message(), Catch::Contains("is owned by uid 65534, not by this agent"));
}

TEST_CASE("a symbolic link in place of the memory work directory is refused and not followed") {
  MemoryRoot root;
  TempDir elsewhere;
  const std::string target = elsewhere.File("target");
  REQUIRE(mkdir(target.c_str(), 0700) == 0);
  REQUIRE(chmod(target.c_str(), 0777) == 0);
  const std::string name = root.path() + "/" + MemoryWorkDirName("/l/state.db");
  REQUIRE(symlink(target.c_str(), name.c_str()) == 0);
  auto dir = PrivateMemoryWorkDir(root.path(), "/l/state.db");
  REQUIRE_FALSE(dir.ok());
  REQUIRE_THAT(dir.status().message(), Catch::Contains("exists and is not a directory"));
  REQUIRE(ModeOf(target) == 0777);
}

TEST_CASE("a root on a disk file system is passed over for the next memory-backed one") {
  TempDir disk;
  struct statfs fs_info {};
  REQUIRE(statfs(disk.File("").c_str(), &fs_info) == 0);
  if (fs_info.f_type == TMPFS_MAGIC) return;  // a /tmp in memory has no disk root to pass over
  MemoryRoot root;
  auto on_disk = PrivateMemoryWorkDir(disk.File(""), "/d/state.db");
  REQUIRE_FALSE(on_disk.ok());
  REQUIRE_THAT(on_disk.status().message(), Catch::Contains("not a memory-backed file system"));

  std::vector<std::string> refused;
  auto chosen = ChooseMemoryWorkDir({"", disk.File(""), root.path()}, "/d/state.db", &refused);
  REQUIRE(chosen == root.path() + "/" + MemoryWorkDirName("/d/state.db"));
  REQUIRE(refused.size() == 1);
  REQUIRE_FALSE(ChooseMemoryWorkDir({disk.File("")}, "/d/state.db", nullptr).has_value());
}
