#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "agent/process/scratch_pool.h"
#include "test/agent/process/hook_test_util.h"

using namespace nodehook;
namespace fs = std::filesystem;

TEST_CASE("a scratch directory given back clean is the next run's, emptied of the last run's files") {
  TempDir work;
  ScratchPool pool(work.File("scratch"));
  auto first = pool.Acquire();
  REQUIRE(first.ok());
  const std::string path = first->path();
  REQUIRE(first->WriteFile("new.json", "{\"secret\": 1}").ok());
  REQUIRE(pool.Release(std::move(*first)).ok());
  REQUIRE(pool.IdleCount() == 1);

  auto second = pool.Acquire();
  REQUIRE(second.ok());
  REQUIRE(second->path() == path);
  REQUIRE(fs::is_empty(path));
  REQUIRE(second->WriteFile("new.json", "{}").ok());  // O_EXCL: nothing left under that name
}

TEST_CASE("two runs at once never share a scratch directory") {
  TempDir work;
  ScratchPool pool(work.File("scratch"));
  auto a = pool.Acquire();
  auto b = pool.Acquire();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->path() != b->path());
}

TEST_CASE("a scratch directory the hook left files in is removed with them, not reused") {
  TempDir work;
  ScratchPool pool(work.File("scratch"));
  auto dir = pool.Acquire();
  REQUIRE(dir.ok());
  const std::string path = dir->path();
  REQUIRE(dir->WriteFile("new.json", "{}").ok());
  fs::create_directories(path + "/a/b");
  std::ofstream(path + "/a/b/left.txt") << "left";
  fs::create_symlink(work.File("outside"), path + "/link");
  std::ofstream(work.File("outside")) << "keep";
  REQUIRE(pool.Release(std::move(*dir)).ok());
  REQUIRE(pool.IdleCount() == 0);
  REQUIRE_FALSE(fs::exists(path));
  REQUIRE(fs::exists(work.File("outside")));
}

TEST_CASE("a scratch directory the hook opened to others is removed, not reused") {
  TempDir work;
  ScratchPool pool(work.File("scratch"));
  auto dir = pool.Acquire();
  REQUIRE(dir.ok());
  const std::string path = dir->path();
  REQUIRE(chmod(path.c_str(), 0777) == 0);
  REQUIRE(pool.Release(std::move(*dir)).ok());
  REQUIRE(pool.IdleCount() == 0);
  REQUIRE_FALSE(fs::exists(path));
}

TEST_CASE("a scratch directory the hook moved away is not reused") {
  TempDir work;
  ScratchPool pool(work.File("scratch"));
  auto dir = pool.Acquire();
  REQUIRE(dir.ok());
  fs::rename(dir->path(), work.File("scratch/moved"));
  fs::create_directory(dir->path(), work.File("scratch"));  // a look-alike under the old name
  (void)pool.Release(std::move(*dir));
  REQUIRE(pool.IdleCount() == 0);
}
