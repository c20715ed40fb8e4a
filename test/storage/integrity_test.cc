#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "agent/base/log.h"
#include "storage/integrity.h"
#include "storage/state_file.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

namespace fs = std::filesystem;

// FakeClock's default start, 1'700'000'000'000 ms, is 2023-11-14T22:13:20Z.
constexpr const char* kStamp = "20231114T221320Z";

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}


// A state file with enough rows to span many pages, closed cleanly (WAL checkpointed away).
void WriteHealthyStateFile(const std::string& path, int objects = 200) {
  auto store = OpenStore(path);
  for (int i = 0; i < objects; ++i) {
    REQUIRE(store->RecordHandled(SizedObject("u" + std::to_string(i), 300), "create").ok());
  }
}

OpenedState MustOpenForAgent(const std::string& path, const Clock& clock) {
  auto opened = OpenStateForAgent(path, "node-a", StoreOptions{}, clock);
  INFO(opened.status().ToString());
  REQUIRE(opened.ok());
  return std::move(*opened);
}

// The recovered store is empty, usable, and marked to adopt existing objects.
void RequireFreshAdoptingStore(OpenedState& opened) {
  REQUIRE(opened.store != nullptr);
  CHECK(opened.store->ListAllObjects()->empty());
  CHECK(*opened.store->AdoptExistingPending());
  REQUIRE(opened.store->RecordHandled(SampleObject("new"), "create").ok());
  CHECK(opened.store->GetObject("new")->has_value());
}

TEST_CASE("a file that is not a database is moved aside with a timestamp and the agent starts fresh") {
  TempDir dir;
  std::string path = dir.File("state.db");
  WriteFile(path, std::string(8192, 'g'));
  FakeClock clock;
  CapturedLog log;

  OpenedState opened = MustOpenForAgent(path, clock);

  CHECK(opened.recovered_from_corruption);
  CHECK(opened.moved_aside_to == path + ".corrupt-" + kStamp);
  CHECK(opened.corruption_detail == "file is not a database");
  CHECK(fs::file_size(opened.moved_aside_to) == 8192);  // the evidence is kept as it was
  RequireFreshAdoptingStore(opened);

  auto lines = log.Lines();
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("level=error event=\"state file is damaged; moved it aside and starting "
                                       "with an empty state\" state_file=" + path +
                                       " moved_to=" + path + ".corrupt-" + kStamp +
                                       " detail=\"file is not a database\" next=\"adopt existing objects"));
}

TEST_CASE("a file with a corrupted page is moved aside and the agent starts fresh") {
  TempDir dir;
  std::string path = dir.File("state.db");
  WriteHealthyStateFile(path);
  REQUIRE(fs::file_size(path) > 8 * 4096);
  {
    // Scribble over the middle of the file: b-tree pages that quick_check walks.
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2 / 4096 * 4096));
    std::string junk(4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  FakeClock clock;
  CapturedLog log;

  OpenedState opened = MustOpenForAgent(path, clock);

  CHECK(opened.recovered_from_corruption);
  CHECK(opened.moved_aside_to == path + ".corrupt-" + kStamp);
  CHECK_FALSE(opened.corruption_detail.empty());
  RequireFreshAdoptingStore(opened);
  CHECK(log.Lines().size() == 1);
}

TEST_CASE("a truncated file is moved aside and the agent starts fresh") {
  TempDir dir;
  std::string path = dir.File("state.db");
  WriteHealthyStateFile(path);
  fs::resize_file(path, fs::file_size(path) / 2);
  FakeClock clock;
  CapturedLog log;

  OpenedState opened = MustOpenForAgent(path, clock);

  CHECK(opened.recovered_from_corruption);
  INFO(opened.corruption_detail);
  RequireFreshAdoptingStore(opened);
}

TEST_CASE("a healthy file is kept as it is and nothing is adopted") {
  TempDir dir;
  std::string path = dir.File("state.db");
  WriteHealthyStateFile(path, 3);
  FakeClock clock;
  CapturedLog log;

  OpenedState opened = MustOpenForAgent(path, clock);

  CHECK_FALSE(opened.recovered_from_corruption);
  CHECK(opened.moved_aside_to.empty());
  CHECK(opened.store->ListAllObjects()->size() == 3);
  CHECK_FALSE(*opened.store->AdoptExistingPending());
  CHECK(log.Lines().empty());
}

TEST_CASE("a missing file is created without any integrity complaint") {
  TempDir dir;
  FakeClock clock;
  OpenedState opened = MustOpenForAgent(dir.File("state.db"), clock);
  CHECK_FALSE(opened.recovered_from_corruption);
  CHECK_FALSE(*opened.store->AdoptExistingPending());
}

TEST_CASE("a file from a newer nodehook is refused, not moved aside as damaged") {
  TempDir dir;
  std::string path = dir.File("state.db");
  RawExec(path, "test", {"CREATE TABLE future (x); PRAGMA user_version = 99"});
  FakeClock clock;
  auto opened = OpenStateForAgent(path, "node-a", StoreOptions{}, clock);
  REQUIRE_FALSE(opened.ok());
  CHECK_THAT(opened.status().message(), Catch::Contains("has schema version 99"));
  CHECK(fs::exists(path));
  CHECK_FALSE(fs::exists(path + ".corrupt-" + kStamp));
}

TEST_CASE("moving aside takes the WAL and shared-memory files along and never overwrites an earlier one") {
  TempDir dir;
  std::string path = dir.File("state.db");
  for (const char* suffix : {"", "-wal", "-shm"}) WriteFile(path + suffix, suffix);
  WriteFile(path + ".corrupt-" + kStamp, "an earlier recovery in the same second");
  FakeClock clock;

  auto moved = MoveAside(path, clock.Now());
  REQUIRE(moved.ok());
  CHECK(*moved == path + ".corrupt-" + kStamp + ".2");
  for (const char* suffix : {"", "-wal", "-shm"}) {
    CHECK_FALSE(fs::exists(path + suffix));
    CHECK(fs::exists(*moved + suffix));
  }
}

TEST_CASE("the adopt flag is per node and can be cleared") {
  TempDir dir;
  auto a = OpenStore(dir.File("state.db"), "node-a");
  auto b = OpenStore(dir.File("state.db"), "node-b");
  REQUIRE(a->SetAdoptExisting(true).ok());
  CHECK(*a->AdoptExistingPending());
  CHECK_FALSE(*b->AdoptExistingPending());
  REQUIRE(a->SetAdoptExisting(false).ok());
  CHECK_FALSE(*a->AdoptExistingPending());
}

}  // namespace
}  // namespace nodehook
