#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include "test/fakes/temp_dir.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kNow = 1'700'000'000'000;

uintmax_t FileBytes(const std::string& path) {
  uintmax_t total = 0;
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    uintmax_t size = std::filesystem::file_size(path + suffix, ec);
    if (!ec) total += size;
  }
  return total;
}

int64_t CountHandlers(SqliteStateStore& store) { return static_cast<int64_t>(store.ListAllHandlers()->size()); }

TEST_CASE("an object gone longer than the TTL with only stale handler progress is purged") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordAttempt(SampleHandler("failed-create", "create")).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("failed-create", "resume")).ok());
  REQUIRE(store->MarkGone("failed-create", kNow - 2 * kHour).ok());

  auto stats = store->CollectGarbage(kNow, kHour);

  REQUIRE(stats.ok());
  CHECK(stats->objects_purged == 1);
  CHECK(stats->handler_rows_purged == 2);
  CHECK(store->ListHandlers("failed-create")->empty());
  // Nothing left to purge: a second run is a no-op.
  CHECK(store->CollectGarbage(kNow, kHour)->objects_purged == 0);
}

TEST_CASE("garbage collection keeps everything that may still have work to do") {
  auto store = OpenStore(":memory:");
  // Gone, but not long enough.
  REQUIRE(store->RecordAttempt(SampleHandler("recent", "create")).ok());
  REQUIRE(store->MarkGone("recent", kNow - kHour + 1).ok());
  // Gone long ago, but its diffbase is a tombstone: the delete hook must still run.
  REQUIRE(store->RecordHandled(SampleObject("tombstone"), "create").ok());
  REQUIRE(store->MarkGone("tombstone", kNow - 2 * kHour).ok());
  // Gone long ago, with a delete in progress.
  REQUIRE(store->RecordAttempt(SampleHandler("deleting", "delete")).ok());
  REQUIRE(store->MarkGone("deleting", kNow - 2 * kHour).ok());
  // Never marked gone.
  REQUIRE(store->RecordAttempt(SampleHandler("alive", "create")).ok());

  auto stats = store->CollectGarbage(kNow, kHour);

  REQUIRE(stats.ok());
  CHECK(stats->objects_purged == 0);
  CHECK(stats->handler_rows_purged == 0);
  CHECK(CountHandlers(*store) == 3);
  CHECK(store->GetObject("tombstone")->has_value());
}

TEST_CASE("an object that comes back after being marked gone is no longer garbage") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->MarkGone("u1", kNow - 2 * kHour).ok());
  // e.g. it left a label selector and matched again: new progress clears the mark.
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "update")).ok());
  CHECK(store->CollectGarbage(kNow, kHour)->objects_purged == 0);
  CHECK(store->GetHandler("u1", "update")->has_value());
}

TEST_CASE("marking gone twice keeps the earliest time") {
  auto store = OpenStore(":memory:");
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "create")).ok());
  REQUIRE(store->MarkGone("u1", kNow - 2 * kHour).ok());
  REQUIRE(store->MarkGone("u1", kNow).ok());
  CHECK(store->CollectGarbage(kNow, kHour)->objects_purged == 1);
}

TEST_CASE("garbage collection never touches another node's rows") {
  TempDir dir;
  auto a = OpenStore(dir.File("state.db"), "node-a");
  auto b = OpenStore(dir.File("state.db"), "node-b");
  REQUIRE(a->RecordAttempt(SampleHandler("u1", "create")).ok());
  REQUIRE(b->RecordAttempt(SampleHandler("u1", "create")).ok());
  REQUIRE(a->MarkGone("u1", kNow - 2 * kHour).ok());
  REQUIRE(b->MarkGone("u1", kNow - 2 * kHour).ok());

  CHECK(a->CollectGarbage(kNow, kHour)->objects_purged == 1);
  CHECK(a->ListAllHandlers()->empty());
  CHECK(b->ListAllHandlers()->size() == 1);
}

TEST_CASE("garbage collection gives the space of forgotten objects back to the file system") {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto store = OpenStore(path);
  for (int i = 0; i < 2000; ++i) REQUIRE(store->RecordHandled(SizedObject("u" + std::to_string(i), 2048), "create").ok());
  REQUIRE(store->CollectGarbage(kNow, kHour).ok());  // checkpoint, so the peak is in the main file
  uintmax_t peak = FileBytes(path);
  REQUIRE(peak > 4'000'000);
  for (int i = 0; i < 2000; ++i) REQUIRE(store->Forget("u" + std::to_string(i)).ok());

  REQUIRE(store->CollectGarbage(kNow, kHour).ok());

  INFO("peak " << peak << " bytes, after " << FileBytes(path));
  CHECK(FileBytes(path) < peak / 10);
}

TEST_CASE("5,000 create/forget cycles with periodic garbage collection keep the file size bounded") {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto store = OpenStore(path);
  constexpr int kCycles = 5000;
  constexpr int kLive = 100;  // objects alive at any time
  uintmax_t baseline = 0;
  uintmax_t largest = 0;
  int64_t now = kNow;

  for (int i = 0; i < kCycles; ++i) {
    now += 1000;
    std::string uid = "c" + std::to_string(i);
    REQUIRE(store->RecordAttempt(SampleHandler(uid, "create")).ok());
    if (i % 2 == 0) {
      // Handled, later deleted: the delete hook's success forgets it.
      REQUIRE(store->RecordHandled(SizedObject(uid, 2048), "create").ok());
    }  // else: its create keeps failing, and it will vanish with only progress rows left
    if (i >= kLive) {
      std::string old = "c" + std::to_string(i - kLive);
      REQUIRE(store->MarkGone(old, now).ok());
      if ((i - kLive) % 2 == 0) REQUIRE(store->Forget(old).ok());
    }
    if (i % 500 == 499) {
      REQUIRE(store->CollectGarbage(now, /*ttl_ms=*/60'000).ok());
      uintmax_t size = FileBytes(path);
      if (i == 999) baseline = size;
      largest = std::max(largest, size);
    }
  }

  INFO("after 1,000 cycles " << baseline << " bytes, largest after a collection " << largest);
  CHECK(largest <= baseline + baseline / 4);
  // Left: the live window's rows plus those gone less than a TTL ago; nothing older.
  CHECK(CountHandlers(*store) <= kLive / 2 + 60);
  CHECK(store->ListAllObjects()->size() <= static_cast<size_t>(kLive / 2));
}

}  // namespace

TEST_CASE("tombstones whose delete hook kept failing are forgotten once their time-to-live is over; "
          "those whose hook has not run yet are kept") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"));
  REQUIRE(store->RecordHandled(SampleObject("old"), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("old", "delete")).ok());  // failed twice
  REQUIRE(store->MarkGone("old", 1000).ok());
  // Gone as long, but its delete hook never ran (waiting for a rollout slot, say): kept.
  REQUIRE(store->RecordHandled(SampleObject("waiting"), "create").ok());
  REQUIRE(store->MarkGone("waiting", 1000).ok());
  REQUIRE(store->RecordHandled(SampleObject("recent"), "create").ok());
  REQUIRE(store->RecordAttempt(SampleHandler("recent", "delete")).ok());
  REQUIRE(store->MarkGone("recent", 9000).ok());
  REQUIRE(store->RecordHandled(SampleObject("alive"), "create").ok());

  auto expired = store->ExpireTombstones(10'000, 5000);
  REQUIRE(expired.ok());
  REQUIRE(*expired == std::vector<std::string>{"old"});
  CHECK_FALSE(store->GetObject("old")->has_value());
  CHECK(store->ListHandlers("old")->empty());
  CHECK(store->GetObject("waiting")->has_value());
  CHECK(store->GetObject("recent")->has_value());
  CHECK(store->GetObject("alive")->has_value());
  // Its age is what the summary (nodehook_oldest_tombstone_seconds) shows.
  CHECK(store->Summarize()->oldest_tombstone_since_ms == 1000);
  REQUIRE(store->Forget("waiting").ok());  // `nodehook state forget`
  CHECK(store->Summarize()->oldest_tombstone_since_ms == 9000);
  REQUIRE(store->Forget("recent").ok());  // its delete hook succeeded at last
  CHECK(store->Summarize()->oldest_tombstone_since_ms == 0);
}

TEST_CASE("a failing delete hook's attempts keep the tombstone's age; another handler's attempt clears it") {
  TempDir dir;
  auto store = OpenStore(dir.File("state.db"));
  REQUIRE(store->RecordHandled(SampleObject("u1"), "create").ok());
  REQUIRE(store->MarkGone("u1", 1000).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "delete")).ok());  // after the deletion was seen
  REQUIRE(store->RecordAttempt(SampleHandler("u1", "delete")).ok());
  CHECK(store->Summarize()->oldest_tombstone_since_ms == 1000);
  auto expired = store->ExpireTombstones(10'000, 5000);
  REQUIRE(expired.ok());
  CHECK(*expired == std::vector<std::string>{"u1"});  // its time-to-live counts from the deletion

  // An object seen again (an update attempt) is no longer gone.
  REQUIRE(store->RecordHandled(SampleObject("u2"), "create").ok());
  REQUIRE(store->MarkGone("u2", 1000).ok());
  REQUIRE(store->RecordAttempt(SampleHandler("u2", "update")).ok());
  CHECK(store->Summarize()->oldest_tombstone_since_ms == 0);
}

}  // namespace nodehook
