// kubectl nodehook: finding the agents, asking each through the pod proxy, and printing one
// table in which a pod that did not answer is shown, never dropped.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <sstream>

#include "agent/app/fleet_command.h"
#include "agent/kubectl/fleet_report.h"
#include "agent/kubectl/fleet_survey.h"
#include "agent/kube/client/rest_kube_client.h"
#include "test/agent/kube/transport/fake_http_transport.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

// An agent's /v1/objects answer with the given objects (JSON text of each).
std::string Answer(const std::string& node, const std::string& objects, bool truncated = false, int total = -1) {
  int count = 0;
  for (size_t at = objects.find("\"uid\""); at != std::string::npos; at = objects.find("\"uid\"", at + 1)) ++count;
  return R"({"node":")" + node + R"(","snapshot_at_ms":1000,"snapshot_age_ms":0,"messages":"shown","total":)" +
         std::to_string(total >= 0 ? total : count) + R"(,"truncated":)" + (truncated ? "true" : "false") +
         R"(,"objects":[)" + objects + "]}";
}

std::string Obj(const std::string& name, const std::string& handlers = "") {
  return R"({"resource":"widgets.example.com/v1","namespace":"ns","name":")" + name + R"(","uid":"uid-)" + name +
         R"(","handled":true,"handled_at_ms":900,"handled_at_ms_relative":"now","handlers":[)" + handlers + "]}";
}

std::string Handler(const std::string& handler, const std::string& outcome, int retries, const std::string& message,
                    int64_t next_ms = 61000) {
  return R"({"handler":")" + handler + R"(","outcome":")" + outcome + R"(","retries":)" + std::to_string(retries) +
         R"(,"next_attempt_ms":)" + std::to_string(next_ms) +
         R"(,"next_attempt_ms_relative":"","first_start_ms":500,"first_start_ms_relative":"","last_message":")" +
         message + R"(","target":"t"})";
}

// Pods with scripted answers; thread-safe, as Survey asks in parallel.
class FakeFleet final : public FleetSource {
 public:
  void Add(const std::string& pod, const std::string& node, Result<std::string> answer, const std::string& ip = "10.0.0.1") {
    pods_.push_back(AgentPod{pod, node, ip, ip.empty() ? "Pending" : "Running"});
    answers_.emplace(pod, std::move(answer));
  }
  Result<std::vector<AgentPod>> ListAgents() override { return pods_; }
  Result<std::string> Ask(const AgentPod& pod, const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    asked_.push_back(pod.name + path);
    return answers_.at(pod.name);
  }
  std::vector<std::string> asked() {
    std::lock_guard<std::mutex> lock(mu_);
    return asked_;
  }

 private:
  std::vector<AgentPod> pods_;
  std::map<std::string, Result<std::string>> answers_;
  std::mutex mu_;
  std::vector<std::string> asked_;
};

TEST_CASE("an agent's answer is read back with identity, handled time and every handler field") {
  auto parsed = ParseObjectsAnswer(Answer("node-a", Obj("a") + "," + Obj("b", Handler("update", "failed", 3, "exit 1"))));
  REQUIRE(parsed.ok());
  CHECK(parsed->node == "node-a");
  REQUIRE(parsed->objects.size() == 2);
  CHECK(parsed->objects[0].Key() == "ns/a");
  CHECK(parsed->objects[0].handled_at_ms == 900);
  const HandlerRecord& h = parsed->objects[1].handlers.at(0);
  CHECK(h.handler == "update");
  CHECK(h.last_outcome == "failed");
  CHECK(h.retries == 3);
  CHECK(h.next_attempt_ms == 61000);
  CHECK(h.last_message == "exit 1");
}

TEST_CASE("an answer missing a field is refused naming the field") {
  auto parsed = ParseObjectsAnswer(Answer("node-a", R"({"resource":"r","namespace":"ns","name":"a","uid":"u","handled":false,"handlers":[{"handler":"create"}]})"));
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().message() == "answer.objects[0].handlers[0].outcome: expected a string");
  CHECK_FALSE(ParseObjectsAnswer("<html>502 Bad Gateway</html>").ok());
}

TEST_CASE("the fleet table has one row per object and one column per node, unreachable nodes as ?") {
  FakeFleet fleet;
  fleet.Add("nodehook-a", "node-a", Answer("node-a", Obj("w1") + "," + Obj("w2", Handler("update", "failed", 3, "x"))));
  fleet.Add("nodehook-b", "node-b", Answer("node-b", Obj("w1")));
  fleet.Add("nodehook-c", "node-c", Status(StatusCode::kUnavailable, "GET /v1/objects: HTTP 503: no endpoints"));
  auto answers = Survey(fleet, "/v1/objects?limit=500", 2);
  REQUIRE(answers.ok());
  CHECK(FormatFleetTable(*answers) ==
        "OBJECT  RESOURCE                node-a            node-b  node-c\n"
        "ns/w1   widgets.example.com/v1  ok                ok      ?\n"
        "ns/w2   widgets.example.com/v1  update:failed(3)  -       ?\n"
        "unreachable: node-c (pod nodehook-c): GET /v1/objects: HTTP 503: no endpoints\n");
}

TEST_CASE("a pod without an IP and a garbled answer are listed as unreachable with the reason") {
  FakeFleet fleet;
  fleet.Add("nodehook-p", "node-p", std::string("{}"), "");
  fleet.Add("nodehook-q", "", std::string("<html>"));
  auto answers = Survey(fleet, "/v1/objects", 4);
  REQUIRE(answers.ok());
  std::string notes = FormatSurveyNotes(*answers);
  CHECK_THAT(notes, Catch::Contains("unreachable: node-p (pod nodehook-p): pod has no IP yet (phase Pending)"));
  CHECK_THAT(notes, Catch::Contains("unreachable: pod/nodehook-q (pod nodehook-q): unexpected answer:"));
  CHECK(fleet.asked() == std::vector<std::string>{"nodehook-q/v1/objects"});  // nobody to ask at no IP
}

TEST_CASE("a node that sent fewer objects than it has says so under the table") {
  FakeFleet fleet;
  fleet.Add("nodehook-a", "node-a", Answer("node-a", Obj("w1"), true, 7));
  auto answers = Survey(fleet, "/v1/objects?limit=1", 1);
  REQUIRE(answers.ok());
  CHECK_THAT(FormatFleetTable(*answers), Catch::Contains("node-a: showing 1 of 7 objects; raise --limit to see more"));
}

TEST_CASE("each node says under the table whether the node-bound rules confine it; older agents say nothing") {
  FakeFleet fleet;
  auto with_bound = [](const std::string& node, const std::string& bound) {
    std::string answer = Answer(node, Obj("w1"));
    return answer.insert(1, R"("node_bound":")" + bound + R"(",)");
  };
  fleet.Add("nodehook-a", "node-a", with_bound("node-a", "protected"));
  fleet.Add("nodehook-b", "node-b", with_bound("node-b", "unprotected"));
  fleet.Add("nodehook-c", "node-c", Answer("node-c", Obj("w1")));
  auto answers = Survey(fleet, "/v1/objects", 3);
  REQUIRE(answers.ok());
  CHECK_THAT(FormatFleetTable(*answers),
             Catch::Contains("confined to its node (node-bound rules): node-a protected, node-b unprotected\n"));
  auto parsed = ParseObjectsAnswer(with_bound("node-a", "unknown"));
  REQUIRE(parsed.ok());
  CHECK(parsed->node_bound == "unknown");
}

TEST_CASE("failing lists node, object, handler, retries, next attempt and the escaped last message") {
  FakeFleet fleet;
  fleet.Add("nodehook-a", "node-a", Answer("node-a", Obj("w2", Handler("update", "failed", 3, "exit 1: \\u001b[2Jdisk"))));
  fleet.Add("nodehook-b", "node-b",
            Answer("node-b", Obj("w3", Handler("delete", "permanent_failure", 5, "gave up", 0))));
  auto answers = Survey(fleet, "/v1/objects?failing=true", 1);
  REQUIRE(answers.ok());
  CHECK(FormatFailingTable(*answers, 1000) ==
        "NODE    OBJECT  RESOURCE                HANDLER  OUTCOME            RETRIES  NEXT ATTEMPT  MESSAGE\n"
        "node-a  ns/w2   widgets.example.com/v1  update   failed             3        in 1m         exit 1: \\x1b[2Jdisk\n"
        "node-b  ns/w3   widgets.example.com/v1  delete   permanent_failure  5        -             gave up\n");
}

TEST_CASE("pods are listed by namespace and label selector, and asked through the API server's pod proxy") {
  auto list_transport = std::make_unique<FakeHttpTransport>();
  auto proxy_transport = std::make_unique<FakeHttpTransport>();
  FakeHttpTransport& listed = *list_transport;
  FakeHttpTransport& proxied = *proxy_transport;
  listed.PushResponse(200, R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[
      {"metadata":{"name":"nodehook-b","namespace":"nodehook","uid":"u2"},"spec":{"nodeName":"node-b"},"status":{"phase":"Running","podIP":"10.1.0.2"}},
      {"metadata":{"name":"nodehook-a","namespace":"nodehook","uid":"u1"},"spec":{"nodeName":"node-a"},"status":{"phase":"Running","podIP":"10.1.0.1"}}]})");
  proxied.PushResponse(200, "answer");
  proxied.PushResponse(503, R"({"kind":"Status","message":"error trying to reach service: dial tcp 10.1.0.2:8090: connect: connection refused"})");
  FleetTarget target;
  auto source = NewKubeFleetSource(std::make_unique<RestKubeClient>(std::move(list_transport)),
                                   std::move(proxy_transport), target);
  auto pods = source->ListAgents();
  REQUIRE(pods.ok());
  REQUIRE(pods->size() == 2);
  CHECK((*pods)[0].name == "nodehook-a");  // by node
  CHECK((*pods)[0].ip == "10.1.0.1");
  CHECK_THAT(listed.requests().at(0).path_and_query,
             Catch::StartsWith("/api/v1/namespaces/nodehook/pods?") &&
                 Catch::Contains("labelSelector=app.kubernetes.io%2Fname%3Dnodehook"));
  CHECK(source->Ask((*pods)[0], "/v1/objects?limit=5").value() == "answer");
  CHECK(proxied.requests().at(0).path_and_query == "/api/v1/namespaces/nodehook/pods/nodehook-a:8090/proxy/v1/objects?limit=5");
  auto refused = source->Ask((*pods)[1], "/v1/objects");
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("HTTP 503") && Catch::Contains("connection refused"));
}

TEST_CASE("the command exits 3 when an agent did not answer, 1 when there are no agents") {
  FakeClock clock;
  FleetCommandArgs args;
  auto fleet = std::make_shared<FakeFleet>();
  fleet->Add("nodehook-a", "node-a", Answer("node-a", Obj("w1")));
  fleet->Add("nodehook-b", "node-b", Status(StatusCode::kTimeout, "no answer in 10s"));
  auto factory = [&fleet](const FleetCommandArgs&) -> Result<std::unique_ptr<FleetSource>> {
    struct Borrowed final : FleetSource {
      std::shared_ptr<FakeFleet> f;
      Result<std::vector<AgentPod>> ListAgents() override { return f->ListAgents(); }
      Result<std::string> Ask(const AgentPod& p, const std::string& path) override { return f->Ask(p, path); }
    };
    auto b = std::make_unique<Borrowed>();
    b->f = fleet;
    return std::unique_ptr<FleetSource>(std::move(b));
  };
  std::ostringstream out, err;
  CHECK(RunFleetCommand(args, factory, out, err, clock) == 3);
  CHECK_THAT(out.str(), Catch::Contains("unreachable: node-b (pod nodehook-b): no answer in 10s"));
  CHECK(fleet->asked().at(0) == "nodehook-a/v1/objects?limit=500");

  args.action = "failing";
  fleet = std::make_shared<FakeFleet>();
  fleet->Add("nodehook-a", "node-a", Answer("node-a", ""));
  std::ostringstream out2;
  CHECK(RunFleetCommand(args, factory, out2, err, clock) == 0);
  CHECK(fleet->asked().at(0) == "nodehook-a/v1/objects?limit=500&failing=true");
  CHECK_THAT(out2.str(), Catch::Contains("(no failing handlers)"));

  fleet = std::make_shared<FakeFleet>();
  std::ostringstream err3;
  CHECK(RunFleetCommand(args, factory, out, err3, clock) == 1);
  CHECK_THAT(err3.str(), Catch::Contains("no agent pods in namespace nodehook with labels app.kubernetes.io/name=nodehook"));
}

TEST_CASE("installed as kubectl-nodehook the binary runs the fleet command") {
  CHECK(InvokedAsKubectlPlugin("/usr/local/bin/kubectl-nodehook"));
  CHECK(InvokedAsKubectlPlugin("kubectl-nodehook"));
  CHECK_FALSE(InvokedAsKubectlPlugin("/usr/bin/nodehook"));
}

}  // namespace
}  // namespace nodehook
