// The agent heals itself from every fault issue 3 lists. Each test: objects a and b exist and
// were created; during the fault a is updated, b deleted and c created; afterwards every final
// state was handled exactly once, and the same Agent kept running throughout.
#include <catch2/catch.hpp>

#include <functional>

#include "test/agent/faults/agent_harness.h"

using namespace nodehook;

namespace {

void RunThroughFault(AgentHarness& h, const std::function<void()>& start_fault,
                     const std::function<void()>& end_fault = [] {}) {
  h.Put("a", 1);
  h.Put("b", 1);
  h.Start();
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  REQUIRE(h.WaitForRun("b", kReasonCreate));

  start_fault();
  h.Put("a", 2);
  h.Delete("b");
  h.Put("c", 1);
  end_fault();

  REQUIRE(h.WaitForRun("a", kReasonUpdate));
  REQUIRE(h.WaitForRun("b", kReasonDelete));
  REQUIRE(h.WaitForRun("c", kReasonCreate));
  REQUIRE(h.Settle());
  // No completed hook ran twice for the same change.
  CHECK(h.Runs("a", kReasonCreate) == 1);
  CHECK(h.Runs("a", kReasonUpdate) == 1);
  CHECK(h.Runs("b", kReasonCreate) == 1);
  CHECK(h.Runs("b", kReasonDelete) == 1);
  CHECK(h.Runs("c", kReasonCreate) == 1);
}

// Arms a watch fault and waits until the watch that gets it is open, so the changes that follow
// happen during the fault.
std::function<void()> OnNextWatch(AgentHarness& h, FakeFault::Kind kind) {
  return [&h, kind] {
    size_t seen = h.WatchRequests();
    h.server.InjectFault(FakeFault::OnWatch(kind));
    REQUIRE(h.WaitForWatchAfter(seen));
  };
}

}  // namespace

// Each watch fault, one agent each: the watch is reopened (from the last resourceVersion), or
// the agent relists, and misses nothing.
TEST_CASE("a watch fault is recovered from without missing a change") {
  auto [kind, what] = GENERATE(table<FakeFault::Kind, const char*>({
      {FakeFault::Kind::kCutMidEvent, "a stream cut in the middle of an event is reopened from the last resourceVersion"},
      {FakeFault::Kind::kStallAfterHeaders, "a stalled watch (headers, then silence) is dropped and reopened"},
      {FakeFault::Kind::kStallBeforeHeaders, "a watch that stalls before its headers is dropped and reopened"},
      {FakeFault::Kind::kGoneInStream,
       "an expired resourceVersion inside the stream leads to a relist that misses nothing"},
  }));
  INFO(what);
  AgentHarness h;
  RunThroughFault(h, OnNextWatch(h, kind));
}

TEST_CASE("an HTTP 410 on watch leads to a relist that misses nothing") {
  AgentHarness h;
  RunThroughFault(h, [&] {
    size_t seen = h.WatchRequests();
    h.server.InjectFault(FakeFault::Http(410, 0, FakeFault::Target::kWatch));
    REQUIRE(h.WaitForWatchAfter(seen));
  });
}

TEST_CASE("a compacted history (watch from an old resourceVersion) is relisted") {
  AgentHarness h;
  RunThroughFault(h, [&] { h.server.GoOffline(); }, [&] {
    h.server.CompactHistory();
    h.server.GoOnline();
  });
}

TEST_CASE("server errors 500, 503 and 429 with Retry-After are retried") {
  AgentHarness h;
  RunThroughFault(h, [&] {
    size_t seen = h.WatchRequests();
    h.server.InjectFault(FakeFault::Http(500), 2);
    h.server.InjectFault(FakeFault::Http(503, 1), 1);
    h.server.InjectFault(FakeFault::Http(429, 1), 1);
    REQUIRE(h.WaitForWatchAfter(seen));
  });
}

TEST_CASE("401 until the token file changes: the new token is read and used") {
  AgentHarness h;
  RunThroughFault(h, [&] {
    size_t seen = h.WatchRequests();
    h.server.RequireToken("token-2");
    REQUIRE(h.server.WaitForRequests(h.server.requests().size() + 2, std::chrono::seconds(10)));
    REQUIRE(h.WatchRequests() >= seen);
  }, [&] { std::ofstream(h.dir.File("token")) << "token-2\n"; });
}

TEST_CASE("a line of garbage in the stream is logged and the stream restarted") {
  AgentHarness h;
  RunThroughFault(h, OnNextWatch(h, FakeFault::Kind::kGarbageLine));
}

TEST_CASE("an unreachable server is retried until it is back") {
  AgentHarness h;
  RunThroughFault(h, [&] { h.server.GoOffline(); }, [&] {
    REQUIRE(h.WaitForFailures(2));  // the agent saw the server gone and kept trying
    h.server.GoOnline();
  });
}

TEST_CASE("health: ready after the first list, live while the watch is fine") {
  AgentHarness h;
  h.Put("a", 1);
  h.Start();
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  REQUIRE(h.WaitForSynced());
  auto health = h.agent->HealthSnapshot();
  REQUIRE(health.size() == 1);
  REQUIRE(health[0].consecutive_failures == 0);
}
