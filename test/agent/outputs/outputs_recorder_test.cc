// OutputsRecorder: a hook's "node" is checked, merged per kind into what its object published
// before and stored; a refused one changes nothing stored and is logged and posted as an Event.
#include <catch2/catch.hpp>

#include <memory>

#include "agent/outputs/outputs_recorder.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

class RefusalEvents final : public EventRecorder {
 public:
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void OutputsRefused(const ResourceRef&, const ObjectMeta& object, const std::string& handler,
                      const std::string& message) override {
    refused.push_back(object.Key() + " " + handler + ": " + message);
  }
  std::vector<std::string> refused;
};

std::unique_ptr<SqliteStateStore> OpenStore() {
  auto opened = SqliteStateStore::Open(":memory:", "node-a", StoreOptions{});
  REQUIRE(opened.ok());
  return std::move(*opened);
}

struct Fixture {
  Fixture() {
    resource.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
    resource.node_output_prefixes = {"widgets.example.com/"};
  }
  std::string Stored(const std::string& uid) {
    auto record = store->GetNodeOutputs(uid);
    REQUIRE(record.ok());
    return record->has_value() ? (*record)->outputs : "(none)";
  }
  std::unique_ptr<SqliteStateStore> store = OpenStore();
  RefusalEvents events;
  FakeClock clock;
  WatchedResource resource;
  OutputsRecorder recorder{*store, events, clock};
  ObjectMeta widget{"u1", "ns", "w1", "7", false};
};

TEST_CASE("published outputs are stored per object; a later kind replaces that kind only") {
  Fixture f;
  CHECK(f.recorder.Record(f.resource, f.widget, "create", "").ok());
  CHECK(f.Stored("u1") == "(none)");
  REQUIRE(f.recorder.Record(f.resource, f.widget, "create",
                            R"({"labels":{"widgets.example.com/v":"1"},"taints":[{"key":"widgets.example.com/t","effect":"NoSchedule"}]})")
              .ok());
  REQUIRE(f.recorder.Record(f.resource, f.widget, "update", R"({"labels":{"widgets.example.com/v":"2"}})").ok());
  CHECK(f.Stored("u1") ==
        R"({"labels":{"widgets.example.com/v":"2"},"taints":[{"key":"widgets.example.com/t","effect":"NoSchedule"}]})");
  auto listed = f.store->ListNodeOutputs("widgets.example.com/v1");
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].name == "w1");
  REQUIRE(f.recorder.Record(f.resource, f.widget, "update", R"({"labels":{},"taints":[]})").ok());
  CHECK(f.Stored("u1") == "(none)");
  CHECK(f.events.refused.empty());
}

TEST_CASE("outputs outside the prefixes, or malformed, are refused whole: logged, an Event, nothing stored") {
  Fixture f;
  REQUIRE(f.recorder.Record(f.resource, f.widget, "create", R"({"labels":{"widgets.example.com/v":"1"}})").ok());
  CapturedLog log;
  Status refused = f.recorder.Record(f.resource, f.widget, "update",
                                     R"({"labels":{"widgets.example.com/v":"2","kubernetes.io/hostname":"x"}})");
  CHECK(refused.code() == StatusCode::kInvalid);
  CHECK(f.Stored("u1") == R"({"labels":{"widgets.example.com/v":"1"}})");
  REQUIRE(f.events.refused.size() == 1);
  CHECK(f.events.refused[0] ==
        "ns/w1 update: node outputs refused: labels[\"kubernetes.io/hostname\"]: \"kubernetes.io/hostname\" is not "
        "under this resource's node_outputs.prefixes (\"widgets.example.com/\")");
  REQUIRE(log.Count("node outputs refused") == 1);
  CHECK_FALSE(f.recorder.Record(f.resource, f.widget, "update", R"({"taints":[{"key":"widgets.example.com/t"}]})").ok());
  CHECK(f.events.refused.size() == 2);
  f.resource.node_condition = "widgets.example.com/Ready";
  CHECK(f.recorder.Record(f.resource, f.widget, "update",
                          R"({"conditions":[{"type":"widgets.example.com/Ready","status":"True"}]})")
            .message() == "conditions: \"widgets.example.com/Ready\" is the condition nodehook derives for this "
                          "resource (node_outputs.condition); publish another type");
  f.resource.node_output_prefixes.clear();
  CHECK_FALSE(f.recorder.Record(f.resource, f.widget, "update", R"({"labels":{"widgets.example.com/v":"3"}})").ok());
  CHECK(f.Stored("u1") == R"({"labels":{"widgets.example.com/v":"1"}})");
}

TEST_CASE("a NoExecute taint the agent's own pod does not tolerate is refused with the rest of the publication") {
  Fixture f;
  auto own = std::make_shared<OwnTolerations>(
      OwnTolerations{"nodehook/nodehook-x1", std::vector<Toleration>{{"widgets.example.com/drain", "Exists", "", "NoExecute",
                                                                     std::nullopt}}, ""});
  OutputsRecorder recorder{*f.store, f.events, f.clock, own};
  CapturedLog log;
  const std::string published = R"({"labels":{"widgets.example.com/v":"1"},"taints":[)"
                                R"({"key":"widgets.example.com/drain","effect":"NoExecute"},)"
                                R"({"key":"widgets.example.com/evict","effect":"NoExecute"}]})";
  Status refused = recorder.Record(f.resource, f.widget, "create", published);
  CHECK(refused.code() == StatusCode::kInvalid);
  CHECK(f.Stored("u1") == "(none)");  // the label too: all or nothing
  REQUIRE(f.events.refused.size() == 1);
  CHECK(f.events.refused[0].find("ns/w1 create: node outputs refused: taints[1]: \"widgets.example.com/evict\" with "
                                 "effect NoExecute would evict this agent's own pod nodehook/nodehook-x1") == 0);
  CHECK(log.Count("node outputs refused") == 1);
  // The one it tolerates is taken; so is any taint off a pod (no own tolerations to judge by).
  CHECK(recorder.Record(f.resource, f.widget, "update",
                        R"({"taints":[{"key":"widgets.example.com/drain","effect":"NoExecute"}]})").ok());
  CHECK(f.recorder.Record(f.resource, f.widget, "update", published).ok());
}

}  // namespace
}  // namespace nodehook
