// LeaseJanitor frees a Lease only once it has not changed for its duration on the local clock.
#include <catch2/catch.hpp>

#include "agent/election/lease_janitor.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_lease_server.h"

using namespace nodehook;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("a lease renewed in time is left alone; one left unchanged for its duration is freed") {
  FakeClock clock;
  FakeLeaseServer server;
  server.Overwrite(LeaseRecord{"node-a", 15, "2000-01-01T00:00:00.000000Z", "2000-01-01T00:00:00.000000Z", 2, ""});
  auto connection = server.Connect();
  LeaseJanitor janitor(*connection, clock, seconds(2));
  CHECK_FALSE(janitor.Tick());  // first sight: the local clock starts here, whatever renewTime says
  clock.Advance(seconds(14));
  LeaseRecord renewed = *server.record();
  renewed.renew_time = "2000-01-01T00:00:14.000000Z";
  server.Overwrite(renewed);
  CHECK_FALSE(janitor.Tick());  // changed: counts again from now
  clock.Advance(milliseconds(14'999));
  CHECK_FALSE(janitor.Tick());
  CHECK(server.record()->holder == "node-a");
  clock.Advance(milliseconds(1));
  REQUIRE(janitor.Tick());
  auto freed = server.record();
  CHECK(freed->holder.empty());
  CHECK(freed->transitions == 2);  // the next holder counts the transition
  CHECK(freed->renew_time == "2000-01-01T00:00:14.000000Z");
  clock.Advance(seconds(60));
  CHECK_FALSE(janitor.Tick());  // a free Lease stays as it is
  CHECK(server.writes().size() == 3);
}

TEST_CASE("no lease, or a write that lost a race, frees nothing") {
  FakeClock clock;
  FakeLeaseServer server;
  auto connection = server.Connect();
  LeaseJanitor janitor(*connection, clock, seconds(2));
  CHECK_FALSE(janitor.Tick());
  server.Overwrite(LeaseRecord{"node-a", 5, "", "", 0, ""});
  CHECK_FALSE(janitor.Tick());
  clock.Advance(seconds(5));
  connection->Cut(true);
  CHECK_FALSE(janitor.Tick());
  connection->Cut(false);
  CHECK(server.record()->holder == "node-a");
}
