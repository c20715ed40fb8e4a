// NodeOutputsWriter: server-side apply of each resource's condition to its own Node, only on
// change, one field manager per resource; what the Node holds at start is not written again, and
// a manager whose resource left the config is applied empty.
#include "agent/outputs/node_outputs_writer.h"

#include <catch2/catch.hpp>

#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

namespace nodehook {
namespace {

const ResourceRef kWidgets{"example.com", "v1", "widgets", "", ""};

void PutNode(FakeKubeClient& client, const std::string& conditions, const std::string& managed = "[]") {
  client.PutObject(KubeObject{ObjectMeta{"uid-n", "", "node-a", "1", false},
                              R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","managedFields":)" +
                                  managed + R"(},"status":{"conditions":)" + conditions + "}}"});
}

struct Fixture {
  FakeKubeClient client;
  FakeClock clock;
  NodeConditionValue value{"True", "AllHandled", "3 objects handled on this node"};
  std::unique_ptr<NodeOutputsWriter> writer;

  void Start() {
    writer = std::make_unique<NodeOutputsWriter>(
        client, "node-a",
        std::vector<NodeOutputsSource>{{kWidgets, "WidgetsReady", [this] { return value; }}}, clock, clock);
  }
};

TEST_CASE("the condition is applied to the Node's status as the resource's manager, then only when it changes") {
  Fixture f;
  PutNode(f.client, R"([{"type":"Ready","status":"True"}])");
  f.Start();
  REQUIRE(f.writer->Tick());
  auto calls = f.client.apply_calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].name == "node-a");
  CHECK(calls[0].subresource == "status");
  CHECK(calls[0].field_manager == "nodehook-widgets.example.com");
  CHECK(calls[0].body.find(R"("conditions":[{"type":"WidgetsReady","status":"True","reason":"AllHandled")") !=
        std::string::npos);
  CHECK(calls[0].body.find("Ready\",\"status\":\"True\",\"reason\"") != std::string::npos);
  CHECK(calls[0].body.find(R"("lastTransitionTime":"2023-11-14T22:13:20Z")") != std::string::npos);

  f.clock.Advance(std::chrono::minutes(10));
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 1);  // no heartbeat: nothing changed, nothing written

  // A new message with the same status keeps the transition time; a new status moves it.
  f.value.message = "4 objects handled on this node";
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().back().body.find("2023-11-14T22:13:20Z") != std::string::npos);
  f.value = {"False", "HooksFailing", "1 object failing on this node; ns/a create: boom"};
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().back().body.find("2023-11-14T22:23:20Z") != std::string::npos);
  CHECK(f.client.apply_calls().size() == 3);

  // A failing hook whose message names its retry: the message alone is written at most once a minute.
  for (int retry = 1; retry <= 30; ++retry) {
    f.value.message = "1 object failing on this node; ns/a create: boom at retry " + std::to_string(retry);
    f.clock.Advance(std::chrono::seconds(4));
    REQUIRE(f.writer->Tick());
  }
  CHECK(f.client.apply_calls().size() == 5);  // 120 s of retries every 4 s: written at 60 s and at 120 s
  CHECK(f.client.apply_calls().back().body.find("boom at retry 30") != std::string::npos);
  f.value.message = "1 object failing on this node; ns/a create: boom at retry 31";
  f.clock.Advance(std::chrono::seconds(4));
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 5);
  // A new status is written at once.
  f.value = {"True", "AllHandled", "3 objects handled on this node"};
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 6);
}

TEST_CASE("a change handled within unknown_after writes nothing; longer work turns the verdict Unknown") {
  Fixture f;
  PutNode(f.client, "[]");
  f.Start();
  REQUIRE(f.writer->Tick());
  REQUIRE(f.client.apply_calls().size() == 1);  // True
  const NodeConditionValue handled = f.value;
  f.value = {"Unknown", "InProgress", "1 object of 3 in progress on this node"};
  REQUIRE(f.writer->Tick());
  f.clock.Advance(std::chrono::seconds(9));
  REQUIRE(f.writer->Tick());
  f.value = handled;  // handled within 10 s
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 1);
  f.value = {"Unknown", "InProgress", "1 object of 3 in progress on this node"};
  REQUIRE(f.writer->Tick());  // a new wait starts here, not 9 s ago
  f.clock.Advance(std::chrono::seconds(9));
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 1);
  f.clock.Advance(std::chrono::seconds(1));
  REQUIRE(f.writer->Tick());
  REQUIRE(f.client.apply_calls().size() == 2);
  CHECK(f.client.apply_calls()[1].body.find(R"("status":"Unknown")") != std::string::npos);
  // A failure is written at once.
  f.value = {"False", "HooksFailing", "1 object failing on this node; ns/a create: boom"};
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 3);
}

TEST_CASE("a restart finds the condition already as derived and writes nothing") {
  Fixture f;
  PutNode(f.client, R"([{"type":"Ready","status":"True"},{"type":"WidgetsReady","status":"True","reason":"AllHandled",)"
                    R"("message":"3 objects handled on this node","lastTransitionTime":"2020-01-01T00:00:00Z"}])");
  f.Start();
  CapturedLog log;
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().empty());
  CHECK(log.Count("node condition kept") == 1);
  // Its first change keeps the transition time it found, since the status stays True.
  f.value.message = "4 objects handled on this node";
  REQUIRE(f.writer->Tick());
  REQUIRE(f.client.apply_calls().size() == 1);
  CHECK(f.client.apply_calls()[0].body.find("2020-01-01T00:00:00Z") != std::string::npos);
}

TEST_CASE("while catching up after a restart, the verdict found on the Node is kept instead of Unknown, for a while") {
  Fixture f;
  PutNode(f.client, R"([{"type":"WidgetsReady","status":"True","reason":"AllHandled","message":"3 objects handled on this node"}])");
  f.value = {"Unknown", "Starting", "the first list of widgets.example.com/v1 is not complete"};
  f.Start();
  REQUIRE(f.writer->Tick());
  f.value = {"Unknown", "InProgress", "3 objects of 3 in progress on this node"};
  f.clock.Advance(std::chrono::seconds(30));
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().empty());
  f.value = {"True", "AllHandled", "3 objects handled on this node"};
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().empty());  // caught up: as it was, nothing written

  // A catch-up that takes longer than the hold says so.
  Fixture g;
  PutNode(g.client, R"([{"type":"WidgetsReady","status":"True","reason":"AllHandled","message":"3 objects handled on this node"}])");
  g.value = {"Unknown", "InProgress", "3 objects of 3 in progress on this node"};
  g.Start();
  REQUIRE(g.writer->Tick());
  g.clock.Advance(std::chrono::seconds(59));
  REQUIRE(g.writer->Tick());
  CHECK(g.client.apply_calls().empty());
  g.clock.Advance(std::chrono::seconds(1));
  REQUIRE(g.writer->Tick());
  REQUIRE(g.client.apply_calls().size() == 1);
  CHECK(g.client.apply_calls()[0].body.find(R"("status":"Unknown")") != std::string::npos);
  // From then on as in any run: a verdict at once, Unknown once it lasted unknown_after.
  g.value = {"True", "AllHandled", "3 objects handled on this node"};
  REQUIRE(g.writer->Tick());
  CHECK(g.client.apply_calls().size() == 2);
  g.value = {"Unknown", "InProgress", "1 object of 3 in progress on this node"};
  REQUIRE(g.writer->Tick());
  g.clock.Advance(std::chrono::seconds(10));
  REQUIRE(g.writer->Tick());
  CHECK(g.client.apply_calls().size() == 3);
}

TEST_CASE("the condition of a resource that left the config is removed by applying nothing as its manager") {
  Fixture f;
  PutNode(f.client, R"([{"type":"GadgetsReady","status":"True"}])",
          R"([{"manager":"kubelet","operation":"Update","subresource":"status"},)"
          R"({"manager":"nodehook-gadgets.example.com","operation":"Apply","subresource":"status"},)"
          R"({"manager":"nodehook-widgets.example.com","operation":"Apply","subresource":"status"},)"
          R"({"manager":"nodehook-labels.example.com","operation":"Apply"},)"
          R"({"manager":"kubectl-label","operation":"Update"}])");
  f.Start();
  CapturedLog log;
  REQUIRE(f.writer->Tick());
  auto calls = f.client.apply_calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[0].field_manager == "nodehook-gadgets.example.com");
  CHECK(calls[0].subresource == "status");
  CHECK(calls[0].body == R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"}})");
  // One that applied labels or annotations to the Node itself is applied empty there too.
  CHECK(calls[1].field_manager == "nodehook-labels.example.com");
  CHECK(calls[1].subresource == "status");
  CHECK(calls[2].field_manager == "nodehook-labels.example.com");
  CHECK(calls[2].subresource.empty());
  CHECK(calls[3].field_manager == "nodehook-widgets.example.com");
  CHECK(log.Count("node condition removed") == 2);
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 4);  // once
}

TEST_CASE("a failed read or write is logged once and tried again the next round") {
  Fixture f;
  f.Start();  // no Node yet
  CapturedLog log;
  CHECK_FALSE(f.writer->Tick());
  CHECK_FALSE(f.writer->Tick());
  CHECK(log.Count("node condition not written") == 1);
  PutNode(f.client, "[]");
  f.client.QueueApplyResult(UnavailableError("api server down"));
  CHECK_FALSE(f.writer->Tick());
  CHECK(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 2);
  CHECK(log.Count("node condition set") == 1);
}

// A Node with metadata and spec as given (labels, managedFields, taints...).
void PutFullNode(FakeKubeClient& client, const std::string& metadata_members, const std::string& spec,
                 const std::string& conditions = "[]") {
  client.PutObject(KubeObject{ObjectMeta{"uid-n", "", "node-a", "1", false},
                              R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","resourceVersion":"41")" +
                                  (metadata_members.empty() ? "" : "," + metadata_members) + R"(},"spec":)" + spec +
                                  R"(,"status":{"conditions":)" + conditions + "}}"});
}

struct PublishingFixture {
  FakeKubeClient client;
  FakeClock clock;
  PublishedOutputs published;
  std::map<std::string, std::vector<OutputTaint>> notes;
  std::unique_ptr<NodeOutputsWriter> writer;

  void Publish(const std::string& json) {
    Result<PublishedOutputs> parsed = ParsePublishedOutputs(json);
    REQUIRE(parsed.ok());
    published = UnionOf({{"ns/a", *parsed}}, {"widgets.example.com/"}, nullptr);
  }
  void Start(Duration recheck = Duration::zero()) {
    NodeOutputsWriterOptions options;
    options.recheck = recheck;
    options.noted_taints = notes;
    options.note_taints = [this](const std::string& manager, const std::vector<OutputTaint>& taints) {
      notes[manager] = taints;
    };
    writer = std::make_unique<NodeOutputsWriter>(
        client, "node-a",
        std::vector<NodeOutputsSource>{{kWidgets, "", nullptr, [this] { return Result<PublishedOutputs>(published); }}},
        clock, clock, options);
  }
};

TEST_CASE("published labels and annotations are applied to the Node, conditions to its status, only on change") {
  PublishingFixture f;
  PutFullNode(f.client, "", "{}");
  f.Publish(R"({"labels":{"widgets.example.com/ready":"yes"},"annotations":{"widgets.example.com/note":"n"},)"
            R"("conditions":[{"type":"widgets.example.com/Kernel","status":"True","reason":"Current"}]})");
  f.Start();
  REQUIRE(f.writer->Tick());
  auto calls = f.client.apply_calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].subresource == "status");
  CHECK(calls[0].field_manager == "nodehook-widgets.example.com");
  CHECK(calls[0].body.find(R"({"type":"widgets.example.com/Kernel","status":"True","reason":"Current","message":"",)"
                           R"("lastTransitionTime":"2023-11-14T22:13:20Z"})") != std::string::npos);
  CHECK(calls[1].subresource.empty());
  CHECK(calls[1].body == R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","labels":)"
                         R"({"widgets.example.com/ready":"yes"},"annotations":{"widgets.example.com/note":"n"}}})");
  CHECK(f.client.patches().empty());  // no taints published, none held: nothing to write
  for (int i = 0; i < 5; ++i) REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 2);

  // Withdrawn (the object deleted, or its hook published empty kinds): applied without them.
  f.Publish(R"({"labels":{}})");
  REQUIRE(f.writer->Tick());
  calls = f.client.apply_calls();
  REQUIRE(calls.size() == 4);
  CHECK(calls[2].body.find(R"("conditions":[])") != std::string::npos);
  CHECK(calls[3].body == R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","labels":{},"annotations":{}}})");
}

TEST_CASE("published taints replace the resource's own in the Node's list, under the resourceVersion read") {
  PublishingFixture f;
  const std::string theirs = R"({"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2026-01-01T00:00:00Z"})";
  PutFullNode(f.client, "", R"({"taints":[)" + theirs + "]}");
  f.Publish(R"({"taints":[{"key":"widgets.example.com/broken","value":"disk","effect":"NoSchedule"}]})");
  f.Start();
  REQUIRE(f.writer->Tick());
  auto patches = f.client.patches();
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].type == PatchType::kMerge);
  CHECK(patches[0].body == R"({"metadata":{"resourceVersion":"41"},"spec":{"taints":[)" + theirs +
                               R"(,{"key":"widgets.example.com/broken","value":"disk","effect":"NoSchedule"}]}})");
  REQUIRE(f.notes["nodehook-widgets.example.com"].size() == 1);
  REQUIRE(f.writer->Tick());
  CHECK(f.client.patches().size() == 1);

  // Someone tainted the node meanwhile; a stale write fails (409) and is made again on the new list.
  const std::string ours = R"({"key":"widgets.example.com/broken","value":"disk","effect":"NoSchedule"})";
  const std::string admin = R"({"key":"example.org/maintenance","effect":"NoSchedule"})";
  PutFullNode(f.client, "", R"({"taints":[)" + theirs + "," + ours + "," + admin + "]}");
  f.Publish(R"({"taints":[{"key":"widgets.example.com/broken","value":"memory","effect":"NoSchedule"}]})");
  f.client.QueuePatchResult(Status(StatusCode::kConflict, "the object has been modified"));
  CHECK_FALSE(f.writer->Tick());
  REQUIRE(f.writer->Tick());
  patches = f.client.patches();
  REQUIRE(patches.size() == 3);
  CHECK(patches[2].body == R"({"metadata":{"resourceVersion":"41"},"spec":{"taints":[)" + theirs + "," + admin +
                               R"(,{"key":"widgets.example.com/broken","value":"memory","effect":"NoSchedule"}]}})");
  CHECK(f.notes["nodehook-widgets.example.com"].at(0).value == "memory");

  // Withdrawn: only its own taint goes.
  PutFullNode(f.client, "", R"({"taints":[)" + theirs + "," + admin +
                                R"(,{"key":"widgets.example.com/broken","value":"memory","effect":"NoSchedule"}]})");
  f.Publish(R"({"taints":[]})");
  REQUIRE(f.writer->Tick());
  CHECK(f.client.patches().back().body ==
        R"({"metadata":{"resourceVersion":"41"},"spec":{"taints":[)" + theirs + "," + admin + "]}}");
  CHECK(f.notes["nodehook-widgets.example.com"].empty());
}

TEST_CASE("a restart that finds the published outputs on the Node writes nothing") {
  PublishingFixture f;
  const std::string ours = R"({"key":"widgets.example.com/broken","effect":"NoSchedule"})";
  PutFullNode(f.client,
              R"("labels":{"widgets.example.com/ready":"yes","kubernetes.io/hostname":"node-a"},)"
              R"("managedFields":[{"manager":"nodehook-widgets.example.com","operation":"Apply","fieldsV1":)"
              R"({"f:metadata":{"f:labels":{"f:widgets.example.com/ready":{}}}}},)"
              R"({"manager":"nodehook-widgets.example.com","operation":"Apply","subresource":"status","fieldsV1":)"
              R"({"f:status":{"f:conditions":{"k:{\"type\":\"widgets.example.com/Kernel\"}":{".":{}}}}}}])",
              R"({"taints":[)" + ours + "]}",
              R"([{"type":"widgets.example.com/Kernel","status":"True","reason":"Current","message":"",)"
              R"("lastTransitionTime":"2026-01-01T00:00:00Z"}])");
  f.notes["nodehook-widgets.example.com"] = {OutputTaint{"widgets.example.com/broken", "", "NoSchedule"}};
  f.Publish(R"({"labels":{"widgets.example.com/ready":"yes"},"taints":[{"key":"widgets.example.com/broken","effect":"NoSchedule"}],)"
            R"("conditions":[{"type":"widgets.example.com/Kernel","status":"True","reason":"Current"}]})");
  f.Start();
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().empty());
  CHECK(f.client.patches().empty());

  // A changed condition keeps its transition time while its status stays.
  f.Publish(R"({"labels":{"widgets.example.com/ready":"yes"},"taints":[{"key":"widgets.example.com/broken","effect":"NoSchedule"}],)"
            R"("conditions":[{"type":"widgets.example.com/Kernel","status":"True","reason":"Current","message":"5.15"}]})");
  REQUIRE(f.writer->Tick());
  REQUIRE(f.client.apply_calls().size() == 1);
  CHECK(f.client.apply_calls()[0].body.find("2026-01-01T00:00:00Z") != std::string::npos);
}

TEST_CASE("outputs taken off the Node by hand are applied again at the next recheck, and only then") {
  PublishingFixture f;
  const std::string managed =
      R"("managedFields":[{"manager":"nodehook-widgets.example.com","operation":"Apply","fieldsV1":)"
      R"({"f:metadata":{"f:labels":{"f:widgets.example.com/ready":{}}}}},)"
      R"({"manager":"nodehook-widgets.example.com","operation":"Apply","subresource":"status","fieldsV1":)"
      R"({"f:status":{"f:conditions":{"k:{\"type\":\"widgets.example.com/Kernel\"}":{".":{}}}}}}])";
  const std::string condition = R"([{"type":"widgets.example.com/Kernel","status":"True","reason":"Current",)"
                                R"("message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}])";
  const std::string taints = R"({"taints":[{"key":"widgets.example.com/broken","effect":"NoSchedule"}]})";
  PutFullNode(f.client, R"("labels":{"widgets.example.com/ready":"yes"},)" + managed, taints, condition);
  f.notes["nodehook-widgets.example.com"] = {OutputTaint{"widgets.example.com/broken", "", "NoSchedule"}};
  f.Publish(R"({"labels":{"widgets.example.com/ready":"yes"},"taints":[{"key":"widgets.example.com/broken","effect":"NoSchedule"}],)"
            R"("conditions":[{"type":"widgets.example.com/Kernel","status":"True","reason":"Current"}]})");
  f.Start(std::chrono::minutes(5));
  REQUIRE(f.writer->Tick());
  f.clock.Advance(std::chrono::minutes(5));
  REQUIRE(f.writer->Tick());  // read again: all there, nothing written
  CHECK(f.client.apply_calls().empty());
  CHECK(f.client.patches().empty());
  // kubectl label node node-a widgets.example.com/ready- ; kubectl taint node node-a widgets.example.com/broken-
  PutFullNode(f.client, R"("labels":{"kubernetes.io/hostname":"node-a"},)" + managed, "{}", condition);
  const size_t gets = f.client.get_call_count();
  f.clock.Advance(std::chrono::minutes(4));
  REQUIRE(f.writer->Tick());
  CHECK(f.client.get_call_count() == gets);  // not read again yet
  CHECK(f.client.apply_calls().empty());
  f.clock.Advance(std::chrono::minutes(1));
  REQUIRE(f.writer->Tick());
  REQUIRE(f.client.apply_calls().size() == 1);  // the label, not the condition still there
  CHECK(f.client.apply_calls()[0].subresource.empty());
  CHECK(f.client.apply_calls()[0].body.find(R"("widgets.example.com/ready":"yes")") != std::string::npos);
  REQUIRE(f.client.patches().size() == 1);  // the taint, put back
  CHECK(f.client.patches()[0].body.find("widgets.example.com/broken") != std::string::npos);
  // A condition someone patched away comes back too, keeping nothing else of its own.
  PutFullNode(f.client, R"("labels":{"widgets.example.com/ready":"yes"},)" + managed, taints, "[]");
  f.clock.Advance(std::chrono::minutes(5));
  REQUIRE(f.writer->Tick());
  REQUIRE(f.client.apply_calls().size() == 2);
  CHECK(f.client.apply_calls()[1].subresource == "status");
  CHECK(f.client.patches().size() == 1);
  // A read again that fails holds no write back, and is tried again half a minute later.
  f.client.FailGets(UnavailableError("away"));
  f.Publish(R"({"labels":{"widgets.example.com/ready":"no"},"taints":[{"key":"widgets.example.com/broken","effect":"NoSchedule"}],)"
            R"("conditions":[{"type":"widgets.example.com/Kernel","status":"True","reason":"Current"}]})");
  f.clock.Advance(std::chrono::minutes(5));
  CHECK_FALSE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 3);  // the new label applied all the same
  const size_t failed_gets = f.client.get_call_count();
  f.clock.Advance(std::chrono::seconds(29));
  (void)f.writer->Tick();
  CHECK(f.client.get_call_count() == failed_gets);
  f.clock.Advance(std::chrono::seconds(1));
  (void)f.writer->Tick();
  CHECK(f.client.get_call_count() == failed_gets + 1);
}

TEST_CASE("a resource that keeps its condition but drops its prefixes takes its published outputs off the Node") {
  Fixture f;
  PutFullNode(f.client,
              R"("labels":{"widgets.example.com/ready":"yes"},)"
              R"("managedFields":[{"manager":"nodehook-widgets.example.com","operation":"Apply","fieldsV1":)"
              R"({"f:metadata":{"f:labels":{"f:widgets.example.com/ready":{}}}}},)"
              R"({"manager":"nodehook-widgets.example.com","operation":"Apply","subresource":"status","fieldsV1":)"
              R"({"f:status":{"f:conditions":{"k:{\"type\":\"WidgetsReady\"}":{},"k:{\"type\":\"widgets.example.com/Kernel\"}":{}}}}}])",
              "{}",
              R"([{"type":"WidgetsReady","status":"True","reason":"AllHandled","message":"3 objects handled on this node",)"
              R"("lastTransitionTime":"2026-01-01T00:00:00Z"},)"
              R"({"type":"widgets.example.com/Kernel","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}])");
  f.Start();
  REQUIRE(f.writer->Tick());
  auto calls = f.client.apply_calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].subresource == "status");  // the derived condition alone, as it was
  CHECK(calls[0].body.find("WidgetsReady") != std::string::npos);
  CHECK(calls[0].body.find("Kernel") == std::string::npos);
  CHECK(calls[0].body.find("2026-01-01T00:00:00Z") != std::string::npos);
  CHECK(calls[1].body == R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","labels":{},"annotations":{}}})");
  REQUIRE(f.writer->Tick());
  CHECK(f.client.apply_calls().size() == 2);
}

TEST_CASE("the writer tells whether a manager holds anything, and retires one without reading the Node") {
  PublishingFixture f;
  PutFullNode(f.client, "", "{}");
  f.Publish(R"({"labels":{"widgets.example.com/ready":"yes"}})");
  std::vector<std::string> told;
  NodeOutputsWriterOptions options;
  options.noted = [&told](const std::string& m, bool holds, bool metadata) {
    told.push_back(m + (holds ? " holds" : " idle") + (metadata ? " metadata" : ""));
  };
  NodeOutputsWriter writer(
      f.client, "node-a",
      std::vector<NodeOutputsSource>{{kWidgets, "", nullptr, [&f] { return Result<PublishedOutputs>(f.published); }}},
      f.clock, f.clock, options);
  REQUIRE(writer.Tick());
  f.Publish(R"({"labels":{}})");
  REQUIRE(writer.Tick());
  REQUIRE(writer.Tick());
  CHECK(told == std::vector<std::string>{"nodehook-widgets.example.com holds metadata",
                                         "nodehook-widgets.example.com holds metadata",
                                         "nodehook-widgets.example.com idle metadata"});

  // A later config without outputs: no sources, the manager to retire applied the Node (a note).
  FakeKubeClient unreadable;  // no Node: it must not be read
  NodeOutputsWriterOptions later;
  later.retire = {"nodehook-widgets.example.com"};
  later.metadata_managers = {"nodehook-widgets.example.com"};
  NodeOutputsWriter retiring(unreadable, "node-a", {}, f.clock, f.clock, later);
  REQUIRE(retiring.Tick());
  auto calls = unreadable.apply_calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].subresource == "status");
  CHECK(calls[1].subresource.empty());
}

TEST_CASE("a field manager name stays within the API server's 128 characters, distinct per resource") {
  CHECK(NodeOutputsManager(ResourceRef{"", "v1", "configmaps", "", ""}) == "nodehook-configmaps");
  const std::string group(200, 'g');
  const std::string a = NodeOutputsManager(ResourceRef{group + ".a", "v1", "widgets", "", ""});
  const std::string b = NodeOutputsManager(ResourceRef{group + ".b", "v1", "widgets", "", ""});
  CHECK(a.size() == 128);
  CHECK(a != b);
}

}  // namespace
}  // namespace nodehook
