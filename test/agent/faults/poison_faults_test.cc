// A real Agent against the fake API server: one bad object is quarantined on its own and
// never stalls the rest (issue 8, item 1).
#include <catch2/catch.hpp>

#include "test/agent/faults/agent_harness.h"

using namespace nodehook;

namespace {

// A widget nested `depth` levels from its own brace: deeper than the default max_object_depth.
void PutDeep(AgentHarness& h, const std::string& name, int depth) {
  std::string spec;
  for (int i = 2; i < depth; ++i) spec += R"({"x":)";
  spec += "{}";
  for (int i = 2; i < depth; ++i) spec += "}";
  h.server.PutObject(kWidgets, R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name +
                                   R"(","namespace":"ns","uid":"uid-)" + name + R"("},"spec":)" + spec + "}");
}

// Lists of the collection (not watches, not the GET of one object the Event recorder makes).
size_t ListRequests(AgentHarness& h) {
  size_t n = 0;
  for (const auto& r : h.server.requests()) {
    n += r.method == "GET" && !r.is_watch() && r.target.rfind(std::string(kWidgets) + "?", 0) == 0 ? 1 : 0;
  }
  return n;
}

}  // namespace

TEST_CASE("a poison widget in the first list is skipped and the rest is handled") {
  AgentHarness h;
  h.Put("a", 1);
  PutDeep(h, "poison", 3000);
  h.Put("b", 1);
  h.Start();
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  REQUIRE(h.WaitForRun("b", kReasonCreate));
  REQUIRE(h.Settle());
  CHECK(h.Runs("poison", kReasonCreate) == 0);
  CHECK(h.WaitForSynced());
}

TEST_CASE("a poison event between two good events neither restarts the watch nor holds back the good ones") {
  AgentHarness h;
  h.Put("a", 1);
  h.Start();
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  size_t lists = ListRequests(h);
  h.Put("before", 1);
  PutDeep(h, "poison", 3000);
  h.Put("after", 1);
  REQUIRE(h.WaitForRun("before", kReasonCreate));
  REQUIRE(h.WaitForRun("after", kReasonCreate));
  REQUIRE(h.Settle());
  CHECK(h.Runs("poison", kReasonCreate) == 0);
  CHECK(ListRequests(h) == lists);  // no relist: the poison event did not fail the watch
  CHECK(h.agent->HealthSnapshot()[0].consecutive_failures == 0);
}

TEST_CASE("a handled widget that turns poison keeps its delete hook, and a fixed one is handled again") {
  AgentHarness h;
  h.Put("a", 1);
  PutDeep(h, "fixed-later", 3000);
  h.Start();
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  PutDeep(h, "a", 3000);  // MODIFIED to a state nobody can handle
  REQUIRE(h.Settle());
  CHECK(h.Runs("a", kReasonUpdate) == 0);

  h.Put("fixed-later", 2);
  h.Delete("a");
  REQUIRE(h.WaitForRun("fixed-later", kReasonCreate));
  REQUIRE(h.WaitForRun("a", kReasonDelete));
  REQUIRE(h.Settle());
  CHECK(h.Runs("a", kReasonDelete) == 1);
}
