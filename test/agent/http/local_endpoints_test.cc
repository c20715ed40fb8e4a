// HealthService with a real Agent (AgentHarness): the HTTP thread never waits for the store.
#include <catch2/catch.hpp>

#include <thread>

#include "agent/app/health_service.h"
#include "storage/sqlite_db.h"
#include "test/agent/faults/agent_harness.h"
#include "test/agent/http/raw_client.h"

namespace nodehook {
namespace {

std::unique_ptr<HealthService> StartEndpoints(LocalEndpointsConfig config) {
  auto service = HealthService::Start(config);
  REQUIRE(service.ok());
  return std::move(service).value();
}

// The body of GET `target` once it contains `wanted` (the snapshot follows the store at the next
// housekeeping tick); the last body seen when it never does within 10 s.
std::string PollUntil(int port, const std::string& target, const std::string& wanted) {
  std::string body;
  for (int i = 0; i < 200; ++i) {
    std::string response = HttpGet(port, target);
    body = StatusOf(response) == 200 ? BodyOf(response) : "";
    if (body.find(wanted) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // polling a condition, with a deadline
  }
  return body;
}

TEST_CASE("with the state file write-locked, POST /v1/retry and /healthz answer, and the retry runs once it is free") {
  AgentHarness h;
  h.config.tuning.in_progress_delay_seconds = 3600;  // only the retry can make the hook run again
  h.runner.QueueExitCodes({100});                    // the create hook says "in progress"
  h.Put("a", 1);
  h.Start();
  auto endpoints = StartEndpoints({"127.0.0.1:0", "127.0.0.1:0", "", std::chrono::seconds(150)});
  endpoints->Attach(h.agent.get());
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  REQUIRE(h.Settle());  // one worker, FIFO: the in-progress outcome of "a" is committed

  auto other_writer = SqliteDb::Open(h.dir.File("state.db"));
  REQUIRE(other_writer.ok());
  REQUIRE((*other_writer)->Exec("test", "PRAGMA busy_timeout = 10000").ok());
  REQUIRE((*other_writer)->Exec("test", "BEGIN IMMEDIATE").ok());
  // The retry first, unanswered, so a server thread stuck on the store would also hold up /healthz.
  RawClient retry(endpoints->admin_port());
  REQUIRE(retry.Send("POST /v1/retry?uid=uid-a HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  CHECK(StatusOf(HttpGet(endpoints->port(), "/healthz")) == 200);
  CHECK(StatusOf(retry.ReadUntilClosed()) == 202);
  CHECK(h.Runs("a", kReasonCreate) == 1);  // nothing could be written yet
  REQUIRE((*other_writer)->Exec("test", "ROLLBACK").ok());

  CHECK(h.WaitForRun("a", kReasonCreate, 2));
  endpoints->Detach();
}

TEST_CASE("before the agent runs, a retry is answered 503 and liveness passes") {
  auto endpoints = StartEndpoints({"127.0.0.1:0", "127.0.0.1:0", "", std::chrono::seconds(150)});
  endpoints->SetWaiting("state lock /tmp/state.db");
  CHECK(StatusOf(HttpGet(endpoints->port(), "/healthz")) == 200);
  std::string ready = HttpGet(endpoints->port(), "/readyz");
  CHECK(StatusOf(ready) == 503);
  CHECK_THAT(BodyOf(ready), Catch::Contains("state lock /tmp/state.db"));
  std::string retry = HttpCall(endpoints->admin_port(), "POST", "/v1/retry?uid=u");
  CHECK(StatusOf(retry) == 503);
  CHECK(BodyOf(retry) == "not running yet: state lock /tmp/state.db\n");
}

TEST_CASE("the probe listener has no retry endpoint, the admin listener no probes") {
  auto endpoints = StartEndpoints({"127.0.0.1:0", "127.0.0.1:0", "", std::chrono::seconds(150)});
  CHECK(StatusOf(HttpCall(endpoints->port(), "POST", "/v1/retry?uid=u")) == 404);
  CHECK(StatusOf(HttpGet(endpoints->admin_port(), "/healthz")) == 404);
}

TEST_CASE("GET /v1/objects on the probe listener shows what the running agent recorded") {
  AgentHarness h;
  h.runner.QueueExitCodes({100});  // the create hook says "in progress"
  h.Put("a", 1);
  h.Start();
  auto endpoints = StartEndpoints({"127.0.0.1:0", "", "", std::chrono::seconds(150)});
  endpoints->Attach(h.agent.get());
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  std::string body = PollUntil(endpoints->port(), "/v1/objects/ns/a", R"("outcome":"in_progress")");
  CHECK_THAT(body, Catch::Contains(R"("node":"node-a")") && Catch::Contains(R"("uid":"uid-a")") &&
                       Catch::Contains(R"("handler":"create")") && Catch::Contains(R"("outcome":"in_progress")"));
  endpoints->Detach();
}

TEST_CASE("before the agent runs, GET /v1/objects answers 503 saying what it waits for") {
  auto endpoints = StartEndpoints({"127.0.0.1:0", "", "", std::chrono::seconds(150)});
  endpoints->SetWaiting("state lock /tmp/state.db");
  std::string response = HttpGet(endpoints->port(), "/v1/objects");
  CHECK(StatusOf(response) == 503);
  CHECK_THAT(BodyOf(response), Catch::Contains("not running yet: state lock /tmp/state.db"));
}

TEST_CASE("with objects_endpoint off there is no /v1/objects, and no_messages hides hook output") {
  auto off = StartEndpoints({"127.0.0.1:0", "", "", std::chrono::seconds(150), "off"});
  CHECK(StatusOf(HttpGet(off->port(), "/v1/objects")) == 404);
  CHECK(StatusOf(HttpGet(off->port(), "/healthz")) == 200);

  AgentHarness h;
  h.config.tuning.retry_base_seconds = 3600;  // it stays failed while the test looks
  h.config.tuning.retry_max_seconds = 3600;
  h.runner.QueueExitCodes({1});  // the create hook fails
  h.Put("a", 1);
  h.Start();
  auto hidden = StartEndpoints({"127.0.0.1:0", "", "", std::chrono::seconds(150), "no_messages"});
  hidden->Attach(h.agent.get());
  REQUIRE(h.WaitForRun("a", kReasonCreate));
  std::string body = PollUntil(hidden->port(), "/v1/objects?failing=true", R"("outcome":"failed")");
  CHECK_THAT(body, Catch::Contains(R"("messages":"hidden")") && Catch::Contains(R"("last_message":"")"));
  hidden->Detach();
}

TEST_CASE("an admin listener that would face the network without a token is refused at start") {
  auto refused = HealthService::Start({"", "0.0.0.0:0", "", std::chrono::seconds(150)});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalid);
  CHECK_THAT(refused.status().message(), Catch::Contains("set admin_token_file"));
  TempDir dir;
  std::ofstream(dir.File("token")) << "0123456789abcdef0123456789abcdef";
  auto allowed = HealthService::Start({"", "0.0.0.0:0", dir.File("token"), std::chrono::seconds(150)});
  CHECK(allowed.ok());
  std::ofstream(dir.File("short")) << "abc";
  auto weak = HealthService::Start({"", "127.0.0.1:0", dir.File("short"), std::chrono::seconds(150)});
  REQUIRE_FALSE(weak.ok());
  CHECK_THAT(weak.status().message(), Catch::Contains("admin_token_file"));
}

}  // namespace
}  // namespace nodehook
