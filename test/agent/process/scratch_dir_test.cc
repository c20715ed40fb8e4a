#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "agent/process/remove_tree.h"
#include "agent/process/scratch_dir.h"
#include "test/agent/process/hook_test_util.h"

using namespace nodehook;
namespace fs = std::filesystem;

TEST_CASE("a scratch directory is private, named hook-XXXXXX and gone after Remove") {
  TempDir work;
  auto dir = ScratchDir::Create(work.File("scratch"));
  REQUIRE(dir.ok());
  REQUIRE(IsScratchDirName(fs::path(dir->path()).filename()));
  REQUIRE((fs::status(dir->path()).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
  REQUIRE(dir->WriteFile("new.json", "{}").ok());
  REQUIRE(dir->Remove().ok());
  REQUIRE_FALSE(fs::exists(dir->path()));
}

TEST_CASE("an input file is never written through something the directory already holds") {
  TempDir work;
  auto dir = ScratchDir::Create(work.File("scratch"));
  REQUIRE(dir.ok());
  fs::create_symlink(work.File("elsewhere"), dir->PathOf("new.json"));
  REQUIRE_FALSE(dir->WriteFile("new.json", "{}").ok());
  REQUIRE_FALSE(fs::exists(work.File("elsewhere")));
}

TEST_CASE("reading what the hook wrote: absent, regular, or refused with the reason") {
  TempDir work;
  auto dir = ScratchDir::Create(work.File("scratch"));
  REQUIRE(dir.ok());
  auto read = [&] { return dir->ReadHookFile("result.json", "result file", 16); };

  REQUIRE(read().ok());
  REQUIRE_FALSE(read()->has_value());

  std::ofstream(dir->PathOf("result.json")) << "{\"a\": 1}";
  REQUIRE(**read() == "{\"a\": 1}");

  std::ofstream(dir->PathOf("result.json")) << std::string(17, 'x');
  REQUIRE(read().status().message() == "result file is 17 bytes, the limit is 16");

  fs::remove(dir->PathOf("result.json"));
  fs::create_directory(dir->PathOf("result.json"));
  REQUIRE(read().status().message() == "result file is not a regular file (a directory)");

  fs::remove(dir->PathOf("result.json"));
  REQUIRE(mkfifo(dir->PathOf("result.json").c_str(), 0600) == 0);
  REQUIRE(read().status().message() == "result file is not a regular file (a FIFO)");
}

TEST_CASE("sweeping removes leftover hook-XXXXXX directories and nothing else") {
  TempDir work;
  const fs::path root = work.File("scratch");
  fs::create_directories(root / "hook-a1B2c3" / "nested");
  std::ofstream(root / "hook-a1B2c3" / "nested" / "file") << "x";
  fs::create_directories(root / "hook-zzzzzz");
  fs::create_directories(root / "hook-keep-me");
  std::ofstream(root / "notes.txt") << "operator's file";
  fs::create_directories(work.File("target"));
  fs::create_directory_symlink(work.File("target"), root / "hook-link01");
  std::ofstream(work.File("target") + "/precious") << "x";

  auto swept = SweepScratchDirs(root);
  REQUIRE(swept.ok());
  REQUIRE(*swept == 3);
  REQUIRE_FALSE(fs::exists(root / "hook-a1B2c3"));
  REQUIRE_FALSE(fs::exists(root / "hook-zzzzzz"));
  REQUIRE_FALSE(fs::is_symlink(root / "hook-link01"));
  REQUIRE(fs::exists(root / "hook-keep-me"));
  REQUIRE(fs::exists(root / "notes.txt"));
  REQUIRE(fs::exists(work.File("target") + "/precious"));
}

TEST_CASE("sweeping a work dir that does not exist yet removes nothing") {
  TempDir work;
  auto swept = SweepScratchDirs(work.File("never-created"));
  REQUIRE(swept.ok());
  REQUIRE(*swept == 0);
}

TEST_CASE("a tree nested deeper than the limit is reported, not followed down") {
  TempDir work;
  fs::path deep = work.File("hook-deep01");
  for (int i = 0; i < kMaxRemoveDepth + 2; ++i) deep /= "d";
  fs::create_directories(deep);
  UniqueFd parent(open(work.File("").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  Status removed = RemoveEntryAt(parent.get(), "hook-deep01", work.File("hook-deep01"));
  REQUIRE_FALSE(removed.ok());
  REQUIRE(removed.message().find("nested deeper than 64 levels") != std::string::npos);
}

TEST_CASE("remove takes away whatever the hook left beside the known files, nested directories too") {
  TempDir work;
  auto dir = ScratchDir::Create(work.File("scratch"));
  REQUIRE(dir.ok());
  REQUIRE(dir->WriteFile("new.json", "{}").ok());
  fs::create_directories(dir->PathOf("left/behind"));
  std::ofstream(dir->PathOf("left/behind/file")) << "x";
  std::ofstream(dir->PathOf("stray")) << "x";
  REQUIRE(dir->Remove().ok());
  REQUIRE_FALSE(fs::exists(dir->path()));
}

TEST_CASE("remove never follows a known name the hook replaced by a link, and still removes the directory") {
  TempDir work;
  std::ofstream(work.File("precious")) << "keep";
  auto dir = ScratchDir::Create(work.File("scratch"));
  REQUIRE(dir.ok());
  REQUIRE(dir->WriteFile("new.json", "{}").ok());
  fs::remove(dir->PathOf("new.json"));
  fs::create_symlink(work.File("precious"), dir->PathOf("new.json"));
  fs::create_directory(dir->PathOf("result.json"));  // a directory under a known name
  REQUIRE(dir->ReadHookFile("result.json", "result file", 16).status().ok() == false);
  REQUIRE(dir->Remove().ok());
  REQUIRE_FALSE(fs::exists(dir->path()));
  REQUIRE(fs::exists(work.File("precious")));
}
