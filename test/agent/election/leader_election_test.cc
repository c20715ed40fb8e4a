// LeaderElector against an in-memory Lease with the API server's optimistic concurrency, on a
// FakeClock: each test drives the rounds (TryAcquireOrRenew) and the fence
// (EnforceRenewDeadline) itself, so every instant is exact.
#include "agent/election/leader_election.h"

#include <catch2/catch.hpp>

#include <random>
#include <thread>

#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_lease_server.h"

namespace nodehook {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

LeaderElectionOptions Options(const std::string& identity) {
  LeaderElectionOptions o;
  o.identity = identity;
  o.lease_duration = seconds(15);
  o.renew_deadline = seconds(10);
  o.retry_period = seconds(2);
  o.seed = 7;
  return o;
}

struct Agent {
  Agent(FakeLeaseServer& server, FakeClock& clock, const std::string& identity)
      : connection(server.Connect()), elector(*connection, clock, Options(identity)) {}
  bool MayStart() const { return elector.TermIfMayStart() != nullptr; }
  std::unique_ptr<FakeLeaseServer::Connection> connection;
  LeaderElector elector;
};

// node-a leads; node-b has read the lease once and waits.
struct LeaderAndWaiter {
  LeaderAndWaiter() {
    REQUIRE(a.elector.TryAcquireOrRenew());
    REQUIRE_FALSE(b.elector.TryAcquireOrRenew());
  }
  FakeClock clock;
  FakeLeaseServer server;
  Agent a{server, clock, "node-a"};
  Agent b{server, clock, "node-b"};
};

TEST_CASE("the first agent creates the missing lease and holds it") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  CHECK_FALSE(a.MayStart());
  REQUIRE(a.elector.TryAcquireOrRenew());
  CHECK(a.MayStart());
  auto record = server.record();
  REQUIRE(record);
  CHECK(record->holder == "node-a");
  CHECK(record->lease_duration_seconds == 15);
  CHECK(record->transitions == 0);
  CHECK_FALSE(record->renew_time.empty());
}

TEST_CASE("a leader that renews every retry period keeps one term") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  REQUIRE(a.elector.TryAcquireOrRenew());
  auto term = a.elector.TermIfMayStart();
  for (int i = 0; i < 20; ++i) {
    clock.Advance(seconds(2));
    REQUIRE(a.elector.TryAcquireOrRenew());
    a.elector.EnforceRenewDeadline();
  }
  CHECK(a.elector.TermIfMayStart() == term);
  CHECK_FALSE(term->cancelled());
  CHECK(server.record()->transitions == 0);
  CHECK(server.writes().size() == 21);
}

TEST_CASE("a held lease is taken only after it did not change for its duration on the local clock") {
  FakeClock clock;
  FakeLeaseServer server;
  // A holder whose renewTime, by the wall clock, is long past: that must not matter.
  server.Overwrite(LeaseRecord{"node-gone", 15, "2000-01-01T00:00:00.000000Z", "2000-01-01T00:00:00.000000Z", 3, ""});
  Agent b(server, clock, "node-b");
  CHECK_FALSE(b.elector.TryAcquireOrRenew());  // first sight: the local clock starts here
  clock.Advance(milliseconds(14'999));
  CHECK_FALSE(b.elector.TryAcquireOrRenew());
  CHECK(server.record()->holder == "node-gone");
  clock.Advance(milliseconds(1));
  REQUIRE(b.elector.TryAcquireOrRenew());
  CHECK(server.record()->holder == "node-b");
  CHECK(server.record()->transitions == 4);
  CHECK(server.record()->acquire_time != "2000-01-01T00:00:00.000000Z");
}

TEST_CASE("a lease deleted under its leader is recreated by the leader, not taken by another agent") {
  LeaderAndWaiter t;
  auto term = t.a.elector.TermIfMayStart();
  t.server.Delete();
  t.clock.Advance(seconds(1));
  CHECK_FALSE(t.b.elector.TryAcquireOrRenew());
  CHECK_FALSE(t.server.record());
  t.clock.Advance(seconds(1));
  REQUIRE(t.a.elector.TryAcquireOrRenew());
  CHECK(t.a.elector.TermIfMayStart() == term);  // the same term goes on
  CHECK(t.server.record()->holder == "node-a");
  CHECK_FALSE(t.b.elector.TryAcquireOrRenew());
}

TEST_CASE("a lease deleted after its leader fell is created by another agent once the duration passed") {
  LeaderAndWaiter t;
  t.server.Delete();
  t.clock.Advance(milliseconds(14'999));
  CHECK_FALSE(t.b.elector.TryAcquireOrRenew());
  t.clock.Advance(milliseconds(1));
  REQUIRE(t.b.elector.TryAcquireOrRenew());
  CHECK(t.server.record()->holder == "node-b");
}

TEST_CASE("a renewal seen by a waiting agent restarts its wait") {
  LeaderAndWaiter t;
  t.clock.Advance(seconds(10));
  REQUIRE(t.a.elector.TryAcquireOrRenew());
  t.clock.Advance(seconds(6));  // 16 s since b first saw the lease, 6 s since it changed
  CHECK_FALSE(t.b.elector.TryAcquireOrRenew());
  CHECK(t.server.record()->holder == "node-a");
}

TEST_CASE("a write with a stale resourceVersion loses the race") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  REQUIRE(a.elector.TryAcquireOrRenew());
  Agent b(server, clock, "node-b");
  CHECK_FALSE(b.elector.TryAcquireOrRenew());
  clock.Advance(seconds(16));
  // Between b's read and its write, another agent takes the expired lease.
  auto seen = server.record();
  server.Overwrite(LeaseRecord{"node-c", 15, "", "", seen->transitions + 1, ""});
  LeaseRecord stale = *seen;
  stale.holder = "node-b";
  CHECK(b.connection->Update(stale).status().code() == StatusCode::kConflict);
  // b's own round reads the new holder, which it has just seen change: it waits again.
  CHECK_FALSE(b.elector.TryAcquireOrRenew());
  CHECK_FALSE(b.MayStart());
  CHECK(server.record()->holder == "node-c");
}

TEST_CASE("two agents creating the lease at once: the second create is a lost race") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  auto conn = server.Connect();
  REQUIRE(a.elector.TryAcquireOrRenew());
  CHECK(conn->Create(LeaseRecord{"node-b", 15, "", "", 0, ""}).status().code() == StatusCode::kConflict);
  CHECK(server.record()->holder == "node-a");
}

TEST_CASE("a leader whose renewals fail stops starting hooks at the renew deadline and ends its term") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  bool lost = false;
  a.elector.SetOnChange([&](bool leading) { lost = !leading; });
  REQUIRE(a.elector.TryAcquireOrRenew());
  auto term = a.elector.TermIfMayStart();
  a.connection->Cut(true);
  clock.Advance(milliseconds(9'999));
  CHECK_FALSE(a.elector.TryAcquireOrRenew());
  CHECK(a.MayStart());
  CHECK(a.elector.EnforceRenewDeadline() == clock.Now() + milliseconds(1));
  clock.Advance(milliseconds(1));
  CHECK_FALSE(a.MayStart());  // before the fence ran: the clock alone says no
  a.elector.EnforceRenewDeadline();
  CHECK(term->cancelled());
  CHECK(lost);
  CHECK_FALSE(a.elector.IsLeader());
}

TEST_CASE("a paused leader that resumes starts nothing until it has renewed again") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  REQUIRE(a.elector.TryAcquireOrRenew());
  clock.Advance(seconds(60));  // SIGSTOP: no round, no fence ran
  CHECK_FALSE(a.MayStart());
  Agent b(server, clock, "node-b");  // meanwhile b saw the lease and waited it out
  CHECK_FALSE(b.elector.TryAcquireOrRenew());
  clock.Advance(seconds(15));
  REQUIRE(b.elector.TryAcquireOrRenew());
  // SIGCONT: a's next round reads b's lease.
  CHECK_FALSE(a.elector.TryAcquireOrRenew());
  CHECK_FALSE(a.MayStart());
  CHECK(server.record()->holder == "node-b");
  CHECK(server.record()->transitions == 1);
}

TEST_CASE("a leader that lost its term rejoins when the lease is still its own") {
  FakeClock clock;
  FakeLeaseServer server;
  Agent a(server, clock, "node-a");
  REQUIRE(a.elector.TryAcquireOrRenew());
  a.connection->Cut(true);
  clock.Advance(seconds(11));
  a.elector.EnforceRenewDeadline();
  REQUIRE_FALSE(a.elector.IsLeader());
  a.connection->Cut(false);
  REQUIRE(a.elector.TryAcquireOrRenew());
  CHECK(a.MayStart());
  CHECK(server.record()->transitions == 0);  // still the same holder: no transition
}

TEST_CASE("releasing the lease lets another agent take over at once") {
  LeaderAndWaiter t;
  t.a.elector.Release();
  CHECK(t.server.record()->holder.empty());
  REQUIRE(t.b.elector.TryAcquireOrRenew());
  CHECK(t.server.record()->transitions == 1);
}

TEST_CASE("under random outages and pauses there are never two agents that may start singleton hooks") {
  FakeClock clock;
  FakeLeaseServer server;
  std::vector<std::unique_ptr<Agent>> agents;
  for (const char* name : {"node-a", "node-b", "node-c"}) agents.push_back(std::make_unique<Agent>(server, clock, name));
  std::mt19937 rng(12345);  // NOLINT(cert-msc32-c,cert-msc51-cpp): a fixed schedule, so a failure replays
  std::vector<int> paused_until(agents.size(), 0);
  int takeovers = 0;
  std::string last_holder;
  for (int step = 0; step < 20'000; ++step) {
    clock.Advance(milliseconds(250));
    for (size_t i = 0; i < agents.size(); ++i) {
      Agent& agent = *agents[i];
      if (rng() % 400 == 0) agent.connection->Cut(true);
      if (rng() % 40 == 0) agent.connection->Cut(false);
      if (rng() % 1000 == 0) paused_until[i] = step + static_cast<int>(rng() % 200);
      if (step < paused_until[i]) continue;  // SIGSTOP: neither rounds nor the fence run
      agent.elector.EnforceRenewDeadline();
      if (step % 8 == static_cast<int>(i)) agent.elector.TryAcquireOrRenew();
    }
    int may_start = 0;
    for (auto& agent : agents) may_start += agent->MayStart() ? 1 : 0;
    REQUIRE(may_start <= 1);
    auto record = server.record();
    if (record && record->holder != last_holder) {
      ++takeovers;
      last_holder = record->holder;
    }
  }
  CHECK(takeovers > 10);  // the schedule really moved the lease around
}

TEST_CASE("the standbys the leader names try every retry period, the other candidates every acquire period") {
  FakeClock clock;
  FakeLeaseServer server;
  auto with_acquire_period = [](const std::string& identity) {
    LeaderElectionOptions o = Options(identity);
    o.acquire_period = seconds(60);
    return o;
  };
  auto a_conn = server.Connect(), b_conn = server.Connect(), c_conn = server.Connect();
  LeaderElector a(*a_conn, clock, with_acquire_period("node-a_1"));
  LeaderElector b(*b_conn, clock, with_acquire_period("node-b_2"));
  LeaderElector c(*c_conn, clock, with_acquire_period("node-c_3"));
  std::string standbys;  // none picked yet: a coordinator whose board has not listed
  a.SetNotes([&](LeaseRecord& record) {
    record.standbys = standbys;
    record.fleet_size = 3;
  });
  REQUIRE(a.TryAcquireOrRenew());
  REQUIRE_FALSE(c.TryAcquireOrRenew());
  CHECK(c.AcquireWait() < milliseconds(4400));  // who stands by is not known yet: everyone tries
  standbys = "node-b";
  clock.Advance(seconds(2));
  REQUIRE(a.TryAcquireOrRenew());
  CHECK(server.record()->standbys == "node-b");
  REQUIRE_FALSE(b.TryAcquireOrRenew());
  REQUIRE_FALSE(c.TryAcquireOrRenew());
  CHECK(c.Observed()->fleet_size == 3);  // what the other candidates read of the leader's notes
  for (int i = 0; i < 20; ++i) {  // jittered: client-go's factor [1, 2.2)
    Duration b_wait = b.AcquireWait(), c_wait = c.AcquireWait();
    CHECK(b_wait >= seconds(2));
    CHECK(b_wait < milliseconds(4400));
    CHECK(c_wait >= seconds(60));
    CHECK(c_wait < seconds(132));
  }

  SECTION("the leader renames them at its next renewal") {
    standbys = "node-c";
    clock.Advance(seconds(2));
    REQUIRE(a.TryAcquireOrRenew());
    REQUIRE_FALSE(b.TryAcquireOrRenew());
    REQUIRE_FALSE(c.TryAcquireOrRenew());
    CHECK(b.AcquireWait() >= seconds(60));
    CHECK(c.AcquireWait() < milliseconds(4400));
  }

  SECTION("a standby takes over within the lease and its retry period once the leader stops renewing") {
    // The leader dies; the standby reads every retry period and takes the Lease once it has not
    // changed for its duration; the other candidate would not have read it again by then.
    Duration waited{0};
    while (!b.TryAcquireOrRenew()) {
      Duration wait = b.AcquireWait();
      clock.Advance(wait);
      waited += wait;
      REQUIRE(waited < seconds(30));
    }
    CHECK(waited >= seconds(15));
    CHECK(waited < seconds(15) + milliseconds(4400));
    CHECK(server.record()->holder == "node-b_2");
    CHECK(server.record()->transitions == 1);
  }
}

TEST_CASE("Run acquires, and releases the lease when stopped") {
  FakeLeaseServer server;
  auto conn = server.Connect();
  LeaderElector elector(*conn, MonotonicClock::Instance(), Options("node-a"));
  std::mutex mu;
  std::condition_variable cv;
  bool leading = false;
  elector.SetOnChange([&](bool now) {
    std::lock_guard<std::mutex> lock(mu);
    leading = now;
    cv.notify_all();
  });
  CancelToken stop;
  std::thread run([&] { elector.Run(stop); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return leading; });
  }
  stop.Cancel();
  run.join();
  CHECK_FALSE(leading);
  CHECK(server.record()->holder.empty());
}

TEST_CASE("a candidate that does not take over waits for a held lease to be freed, however stale") {
  FakeClock clock;
  FakeLeaseServer server;
  server.Overwrite(LeaseRecord{"node-gone", 15, "2000-01-01T00:00:00.000000Z", "2000-01-01T00:00:00.000000Z", 3, ""});
  auto connection = server.Connect();
  LeaderElectionOptions options = Options("node-b");
  options.takes_over = false;
  LeaderElector b(*connection, clock, options);
  CHECK_FALSE(b.TryAcquireOrRenew());
  clock.Advance(seconds(3600));
  CHECK_FALSE(b.TryAcquireOrRenew());
  CHECK(server.record()->holder == "node-gone");
  CHECK(server.writes().size() == 1);  // only the test's own write: it never tried
  // The steward frees it (lease_janitor.h): then it is taken.
  LeaseRecord freed = *server.record();
  freed.holder.clear();
  server.Overwrite(freed);
  REQUIRE(b.TryAcquireOrRenew());
  CHECK(server.record()->holder == "node-b");
  CHECK(server.record()->transitions == 4);
}

}  // namespace
}  // namespace nodehook
