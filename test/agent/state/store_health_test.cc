#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "agent/state/observed_state_store.h"
#include "agent/state/store_health.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

using std::chrono::seconds;

ObjectRecord BigObject(const std::string& uid) {
  ObjectRecord o = SampleObject(uid);
  o.last_object = "{" + std::string(256 * 1024, 'b') + "}";
  return o;
}

// A real store in memory whose "disk" fills up on demand (PRAGMA max_page_count), seen through
// the decorator.
struct Observed {
  FakeClock clock;
  Metrics metrics;
  StoreHealth health;
  std::unique_ptr<SqliteStateStore> inner;
  ObservedStateStore store;
  std::vector<StoreHealthChange> changes;

  explicit Observed(StoreHealthOptions options = Options())
      : health(clock, options, metrics),
        inner(OpenStore(":memory:")),
        store(*inner, *inner, health) {
    health.SetListener([this](const StoreHealthChange& c) { changes.push_back(c); });
  }
  static StoreHealthOptions Options() {
    StoreHealthOptions o;
    o.state_file = "/var/lib/nodehook/state.db";
    o.retry_base = seconds(5);
    o.retry_max = seconds(60);
    return o;
  }
  void Fill() { REQUIRE(inner->SetMaxPageCountForTesting(1).ok()); }
  void Free() { REQUIRE(inner->SetMaxPageCountForTesting(0).ok()); }
  uint64_t Failures(const char* operation) {
    return metrics.GetCounter("state_write_failures_total", "", {{"operation", operation}}).value();
  }
  double FailingGauge() {
    return metrics.GetGauge("state_write_failing", "", {{"state_file", "/var/lib/nodehook/state.db"}}).value();
  }
};

TEST_CASE("a healthy store is ready, is not failing and retries at the base delay") {
  Observed o;
  REQUIRE(o.store.RecordHandled(SampleObject("u1"), "create").ok());
  CHECK(o.health.ReadinessProblem().empty());
  CHECK_FALSE(o.health.failing());
  CHECK(o.health.RetryDelay() == seconds(5));
  CHECK(o.FailingGauge() == 0);
  CHECK(o.changes.empty());
}

TEST_CASE("failed writes are counted by operation and the change is told once, not once per write") {
  Observed o;
  REQUIRE(o.store.RecordHandled(SampleObject("u1"), "create").ok());
  o.Fill();

  Status first = o.store.RecordHandled(BigObject("u2"), "create");
  Status second = o.store.RecordHandled(BigObject("u3"), "create");
  REQUIRE_FALSE(first.ok());
  REQUIRE_FALSE(second.ok());

  CHECK(o.Failures("RecordHandled") == 2);
  CHECK(o.FailingGauge() == 1);
  CHECK(o.health.failures_in_streak() == 2);
  REQUIRE(o.changes.size() == 1);
  CHECK(o.changes[0].failing);
  CHECK(o.changes[0].note == "state file /var/lib/nodehook/state.db does not take writes (RecordHandled): " +
                                 first.message() + "; hook outcomes are not kept and the work is retried with backoff");
}

TEST_CASE("readiness names the file, how long and the last error while writes keep failing") {
  Observed o;
  o.Fill();
  Status failed = o.store.RecordHandled(BigObject("u1"), "create");
  REQUIRE_FALSE(failed.ok());
  o.clock.Advance(seconds(42));
  REQUIRE_FALSE(o.store.RecordHandled(BigObject("u1"), "create").ok());

  CHECK(o.health.ReadinessProblem() ==
        "state file /var/lib/nodehook/state.db: writes failing for 42s (2 failed; failing: RecordHandled): " +
            failed.message());
}

TEST_CASE("the first write that succeeds again clears readiness; the recovery is told once it has held") {
  StoreHealthOptions options = Observed::Options();
  options.event_hold = seconds(10);
  Observed o(options);
  o.Fill();
  Status failed = o.store.RecordHandled(BigObject("u1"), "create");
  REQUIRE_FALSE(failed.ok());
  REQUIRE_FALSE(o.store.RecordHandled(BigObject("u1"), "create").ok());
  o.clock.Advance(seconds(7));
  o.Free();

  REQUIRE(o.store.RecordHandled(BigObject("u1"), "create").ok());
  REQUIRE(o.store.RecordHandled(SampleObject("u2"), "create").ok());

  CHECK(o.health.ReadinessProblem().empty());
  CHECK(o.FailingGauge() == 0);
  CHECK(o.Failures("RecordHandled") == 2);  // a counter: it does not go back down
  CHECK(o.changes.size() == 1);             // not told yet: it has not held
  o.clock.Advance(seconds(10));
  REQUIRE(o.store.GetObject("u2").ok());  // any attempt looks (the agent reads every second)
  REQUIRE(o.changes.size() == 2);
  CHECK_FALSE(o.changes[1].failing);
  CHECK(o.changes[1].reason == "StateWritesRecovered");
  CHECK(o.changes[1].note == "state file /var/lib/nodehook/state.db takes reads and writes again after 2 failed in "
                             "17s (last error: " + failed.message() + ")");
}

TEST_CASE("small writes that still fit do not clear the failure of the writes that do not") {
  Observed o;
  REQUIRE(o.store.RecordHandled(SampleObject("u1"), "create").ok());
  o.Fill();
  REQUIRE_FALSE(o.store.RecordHandled(BigObject("u2"), "create").ok());
  o.clock.Advance(seconds(3));
  REQUIRE(o.store.TakeRetryRequests().ok());  // a housekeeping pass that changes nothing
  REQUIRE(o.store.Forget("u1").ok());         // frees pages: a small write fits

  CHECK(o.health.failing());
  CHECK(o.health.RetryDelay() == seconds(5));
  CHECK(o.changes.size() == 1);  // still only the failing change
  CHECK_THAT(o.health.ReadinessProblem(), Catch::Contains("failing: RecordHandled)"));
}

TEST_CASE("an operation that stopped failing long ago is let go once other writes succeed") {
  StoreHealthOptions options = Observed::Options();
  options.forget_after = seconds(120);
  Observed o(options);
  o.Fill();
  REQUIRE_FALSE(o.store.RecordHandled(BigObject("u1"), "create").ok());  // and never tried again
  o.Free();
  o.clock.Advance(seconds(119));
  REQUIRE(o.store.RecordAttempt(SampleHandler("u2", "create")).ok());
  CHECK(o.health.failing());  // not long enough: its retry may still be due
  o.clock.Advance(seconds(1));
  REQUIRE(o.store.RecordAttempt(SampleHandler("u2", "create")).ok());
  CHECK_FALSE(o.health.failing());
  o.clock.Advance(options.event_hold);
  REQUIRE(o.store.RecordAttempt(SampleHandler("u2", "create")).ok());
  REQUIRE(o.changes.size() == 2);
  CHECK_FALSE(o.changes[1].failing);
}

TEST_CASE("answers that say nothing about the file are not write failures") {
  Observed o;
  auto retried = o.store.RequestRetry("no-such-uid", "", 1);
  REQUIRE(retried.status().code() == StatusCode::kNotFound);
  CHECK_FALSE(o.health.failing());
  CHECK(o.changes.empty());
}

TEST_CASE("a read that works does not clear a failing write") {
  Observed o;
  REQUIRE(o.store.RecordHandled(SampleObject("u1"), "create").ok());
  o.Fill();
  REQUIRE_FALSE(o.store.RecordHandled(BigObject("u2"), "create").ok());
  auto read = o.store.GetObject("u1");
  REQUIRE(read.ok());
  CHECK(read->has_value());
  CHECK(o.health.failing());  // a read that works says nothing about writes
}

// Reads as the decorator reports them, for failures a real SQLite file in memory cannot show.
struct Direct {
  FakeClock clock;
  Metrics metrics;
  StoreHealth health{clock, Observed::Options(), metrics};
  std::vector<StoreHealthChange> changes;
  Direct() {
    health.SetListener([this](const StoreHealthChange& c) { changes.push_back(c); });
  }
  void Read(const Status& result) { health.Observe("GetObject", result, StoreAccess::kRead); }
};

TEST_CASE("failed reads count like failed writes: readiness, their own metrics, StateReadsFailing") {
  Direct d;
  d.Read(UnavailableError("sqlite GetObject: disk I/O error"));
  d.clock.Advance(seconds(3));
  d.Read(UnavailableError("sqlite GetObject: disk I/O error"));
  CHECK(d.metrics.GetCounter("state_read_failures_total", "", {{"operation", "GetObject"}}).value() == 2);
  CHECK(d.metrics.GetGauge("state_read_failing", "", {{"state_file", "/var/lib/nodehook/state.db"}}).value() == 1);
  CHECK(d.metrics.GetGauge("state_write_failing", "", {{"state_file", "/var/lib/nodehook/state.db"}}).value() == 0);
  CHECK(d.health.ReadinessProblem() ==
        "state file /var/lib/nodehook/state.db: reads failing for 3s (2 failed; failing: GetObject): sqlite "
        "GetObject: disk I/O error");
  // Reads back off with the streak like writes.
  d.clock.Advance(seconds(20));
  CHECK(d.health.RetryDelay() == seconds(23));
  REQUIRE(d.changes.size() == 1);
  CHECK(d.changes[0].reason == "StateReadsFailing");
  d.Read(Status::Ok());
  CHECK(d.health.ReadinessProblem().empty());
  d.clock.Advance(seconds(60));
  d.Read(Status::Ok());
  REQUIRE(d.changes.size() == 2);
  CHECK(d.changes[1].reason == "StateReadsRecovered");
}

TEST_CASE("one corrupt record says nothing about the file: it is not a failure") {
  Direct d;
  d.Read(Status(StatusCode::kCorrupt, "state record objects[uid u1]: last_object is not a JSON object"));
  CHECK_FALSE(d.health.failing());
  CHECK(d.health.ReadinessProblem().empty());
  CHECK(d.changes.empty());
}

TEST_CASE("an operation that fails every other time posts one failing Event, and recovered once it held") {
  Direct d;
  for (int i = 0; i < 60; ++i) {  // five minutes of flapping
    d.Read(UnavailableError("database is locked"));
    d.clock.Advance(seconds(2));
    d.Read(Status::Ok());
    d.clock.Advance(seconds(3));
  }
  REQUIRE(d.changes.size() == 1);
  CHECK(d.changes[0].failing);
  // It works for good now: told once it has worked for the hold time.
  for (int i = 0; i < 12; ++i) {
    d.clock.Advance(seconds(5));
    d.Read(Status::Ok());
  }
  REQUIRE(d.changes.size() == 2);
  CHECK_FALSE(d.changes[1].failing);
  CHECK_THAT(d.changes[1].note, Catch::Contains("after 60 failed in "));
  // A new failure soon after that recovery is told only once it has lasted the hold time.
  d.Read(UnavailableError("database is locked"));
  d.clock.Advance(seconds(59));
  d.Read(UnavailableError("database is locked"));
  CHECK(d.changes.size() == 2);
  CHECK(d.health.failing());  // readiness follows at once
  d.clock.Advance(seconds(1));
  d.Read(UnavailableError("database is locked"));
  REQUIRE(d.changes.size() == 3);
  CHECK(d.changes[2].failing);
}

TEST_CASE("the retry delay grows with the failing streak's age, from the base to the cap") {
  Observed o;
  o.Fill();
  REQUIRE_FALSE(o.store.RecordHandled(BigObject("u1"), "create").ok());
  CHECK(o.health.RetryDelay() == seconds(5));  // at the start of the streak: the base
  o.clock.Advance(seconds(5));
  CHECK(o.health.RetryDelay() == seconds(5));
  o.clock.Advance(seconds(5));
  CHECK(o.health.RetryDelay() == seconds(10));  // one retry at 5 s, the next waits 10 s, then 20 s...
  o.clock.Advance(seconds(10));
  CHECK(o.health.RetryDelay() == seconds(20));
  o.clock.Advance(seconds(100));
  CHECK(o.health.RetryDelay() == seconds(60));  // capped by retry_max
  o.Free();
  REQUIRE(o.store.RecordHandled(BigObject("u1"), "create").ok());
  CHECK(o.health.RetryDelay() == seconds(5));
}

TEST_CASE("many objects failing at once do not push the delay to the cap in one round") {
  Observed o;
  o.Fill();
  for (int i = 0; i < 40; ++i) REQUIRE_FALSE(o.store.RecordHandled(BigObject("u" + std::to_string(i)), "create").ok());
  CHECK(o.health.failures_in_streak() == 40);
  CHECK(o.health.RetryDelay() == seconds(5));
}

TEST_CASE("every write of the schedule store is observed too") {
  Observed o;
  o.Fill();
  SnapshotRecord big;
  big.resource = "widgets.example.com/v1";
  big.last_message = std::string(256 * 1024, 'm');
  Status put = o.store.PutSnapshot(big);
  REQUIRE_FALSE(put.ok());
  CHECK(o.Failures("PutSnapshot") == 1);
  CHECK(o.health.failing());
}

TEST_CASE("each write that may change an object's view names its uid; one that may change any names none") {
  Observed o;
  std::vector<std::string> written;
  o.store.SetOnObjectWritten([&written](const std::string& uid) { written.push_back(uid); });
  REQUIRE(o.store.RecordAttempt(SampleHandler("u1", "create")).ok());
  REQUIRE(o.store.RecordHandled(SampleObject("u2"), "create").ok());
  REQUIRE(o.store.MarkGone("u2", 5).ok());
  REQUIRE(o.store.RequestRetry("u1", "", 6).ok());
  REQUIRE(o.store.Forget("u1").ok());
  CHECK(written == std::vector<std::string>{"u1", "u2", "u2", "u1", "u1"});
  written.clear();
  REQUIRE(o.store.TakeRetryRequests().ok());  // none waiting: nothing changed
  REQUIRE(o.store.WriteNote("k", "v").ok());  // not an object's view
  CHECK(written.empty());
  REQUIRE(o.store.CollectGarbage(10, 1).ok());
  REQUIRE(o.store.ExpireTombstones(10, 1).ok());
  CHECK(written == std::vector<std::string>{"", ""});
}

}  // namespace
}  // namespace nodehook
