// CoordinatorObserver: a node that does not coordinate learns the fleet's size from the
// coordinator's Lease note, read at start and every period, and never writes.
#include "agent/rollout/coordinator/coordinator_observer.h"

#include <catch2/catch.hpp>

#include <thread>

#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_lease_server.h"

namespace nodehook {
namespace {

using std::chrono::seconds;

LeaseRecord CoordinatorWithFleet(int nodes) {
  LeaseRecord record{"steward-1", 15, "", "", 0, ""};
  record.fleet_size = nodes;
  return record;
}

TEST_CASE("the fleet size is the coordinator's note: 0 without a coordinator, the last one read while reads fail") {
  FakeLeaseServer server;
  auto connection = server.Connect();
  FakeClock clock;
  CoordinatorObserver observer(*connection, clock, seconds(60));
  observer.ReadOnce();
  CHECK(observer.FleetSize() == 0);  // no coordinator Lease yet

  server.Overwrite(CoordinatorWithFleet(40));
  observer.ReadOnce();
  CHECK(observer.FleetSize() == 40);

  CapturedLog log;
  connection->Cut(true);
  observer.ReadOnce();
  observer.ReadOnce();
  CHECK(observer.FleetSize() == 40);  // a stale size spreads the asks about as well as a fresh one
  CHECK(log.Count("rollout coordinator not read") == 1);  // once, until a read succeeds
  connection->Cut(false);
  server.Overwrite(CoordinatorWithFleet(41));
  observer.ReadOnce();
  CHECK(observer.FleetSize() == 41);
  CHECK(server.writes().size() == 2);  // the test's own: the observer never writes
}

TEST_CASE("run reads at start, then once every period until stopped") {
  FakeLeaseServer server;
  server.Overwrite(CoordinatorWithFleet(6));
  auto connection = server.Connect();
  FakeClock clock;
  CoordinatorObserver observer(*connection, clock, seconds(60));
  CancelToken stop;
  std::thread run([&] { observer.Run(stop); });
  while (clock.waiters() == 0) std::this_thread::yield();  // the first read is done; it sleeps
  CHECK(observer.FleetSize() == 6);

  server.Overwrite(CoordinatorWithFleet(7));
  const size_t sleeps = clock.sleeps();
  clock.Advance(seconds(59));
  while (clock.sleeps() == sleeps) std::this_thread::yield();  // it saw the time, and sleeps on
  CHECK(observer.FleetSize() == 6);
  clock.Advance(seconds(1));
  while (observer.FleetSize() != 7) std::this_thread::yield();
  stop.Cancel();
  run.join();
}

}  // namespace
}  // namespace nodehook
