// Node targeting: this node's labels (NodeLabels, fed from a Node watch) and KubeNodeTargeting.
#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/base/log.h"
#include "agent/targeting/kube_node_targeting.h"
#include "agent/targeting/node_labels.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

KubeObject Widget(const std::string& uid, const std::string& spec_json) {
  KubeObject o;
  o.meta = {uid, "ns", "w-" + uid, "1", false};
  o.json = R"({"kind":"Widget","metadata":{"name":"w-)" + uid + R"("},"spec":)" + spec_json + "}";
  return o;
}

KubeObject Node(const std::string& name, const std::string& labels_json) {
  KubeObject o;
  o.meta = {"uid-" + name, "", name, "1", false};
  o.json = R"({"kind":"Node","metadata":{"name":")" + name + R"(","labels":)" + labels_json + "}}";
  return o;
}

ObjectPtr Ptr(KubeObject o) { return std::make_shared<const KubeObject>(std::move(o)); }

// The object's facts are read as the watch path reads them, then matched.
bool MatchesObject(const NodeTargeting& targeting, const WatchedResource& r, const KubeObject& o) {
  return targeting.Matches(r, o, *ReadFacts(o.json, FactsSpecOf(r)));
}

WatchedResource Targeted() {
  WatchedResource r;
  r.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
  r.node_selector_path = "spec.nodeSelector";
  return r;
}

struct CapturedLog {
  std::mutex mu;
  std::vector<std::string> lines;
  CapturedLog() {
    SetLogSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(line);
    });
  }
  ~CapturedLog() { SetLogSink(nullptr); }
  size_t Count(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& l : lines) n += l.find(text) != std::string::npos;
    return n;
  }
};

}  // namespace

TEST_CASE("node labels start unknown, count changes and call back only when something changed") {
  NodeLabels labels;
  std::vector<uint64_t> calls;
  labels.SetOnChange([&](uint64_t v) { calls.push_back(v); });
  CHECK_FALSE(labels.Get().has_value());
  CHECK(labels.version() == 0);
  CHECK_FALSE(labels.Matches({}));

  labels.Set({{"zone", "a"}});
  labels.Set({{"zone", "a"}});
  labels.Set({{"zone", "b"}});
  labels.Clear();
  labels.Clear();
  CHECK(calls == std::vector<uint64_t>{1, 2, 3});
  CHECK(labels.version() == 3);
  CHECK_FALSE(labels.Get().has_value());
}

TEST_CASE("a selector matches when every key has the node's value") {
  NodeLabels labels;
  labels.Set({{"zone", "a"}, {"gpu", "true"}});
  CHECK(labels.Matches({}));
  CHECK(labels.Matches({{"zone", "a"}}));
  CHECK(labels.Matches({{"zone", "a"}, {"gpu", "true"}}));
  CHECK_FALSE(labels.Matches({{"zone", "b"}}));
  CHECK_FALSE(labels.Matches({{"zone", "a"}, {"disk", "ssd"}}));
}

TEST_CASE("object labels are read from metadata.labels; a missing map is empty, a bad one is refused") {
  auto labels = ParseObjectLabels(R"({"metadata":{"name":"n","labels":{"a":"1","b":""}}})");
  REQUIRE(labels.ok());
  CHECK(*labels == LabelMap{{"a", "1"}, {"b", ""}});
  auto none = ParseObjectLabels(R"({"metadata":{"name":"n"}})");
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK(ParseObjectLabels(R"({"metadata":{"labels":{"a":1}}})").status().code() == StatusCode::kInvalid);
  CHECK(ParseObjectLabels(R"({"metadata":{"labels":["a"]}})").status().code() == StatusCode::kInvalid);
  CHECK(ParseObjectLabels("not json").status().code() == StatusCode::kInvalid);
}

TEST_CASE("the node sink takes this node's labels from lists and events and forgets them when it is deleted") {
  CapturedLog log;
  NodeLabels labels;
  NodeLabelsSink sink("node-a", labels);

  sink.OnListed({Ptr(Node("node-b", R"({"zone":"x"})")), Ptr(Node("node-a", R"({"zone":"a"})"))}, {});
  CHECK(labels.Get() == LabelMap{{"zone", "a"}});

  sink.OnObject(Ptr(Node("node-b", R"({"zone":"y"})")));
  CHECK(labels.Get() == LabelMap{{"zone", "a"}});
  sink.OnObject(Ptr(Node("node-a", R"({"zone":"b"})")));
  CHECK(labels.Get() == LabelMap{{"zone", "b"}});

  sink.OnDeleted(Ptr(Node("node-b", "{}")));
  CHECK(labels.Get().has_value());
  sink.OnDeleted(Ptr(Node("node-a", "{}")));
  CHECK_FALSE(labels.Get().has_value());
  CHECK(log.Count("node labels unknown") == 1);

  sink.OnListed({Ptr(Node("node-a", "{}"))}, {});
  CHECK(labels.Get() == LabelMap{});
  sink.OnListed({}, {});
  CHECK_FALSE(labels.Get().has_value());
}

TEST_CASE("a standard watcher on this node keeps the labels current and reports each change") {
  FakeClock clock;
  FakeKubeClient client;
  NodeLabels labels;
  std::vector<uint64_t> changes;
  labels.SetOnChange([&](uint64_t v) { changes.push_back(v); });  // only the watcher thread calls it
  NodeLabelsSink sink("node-a", labels);
  ObjectList list;
  list.items = {Node("node-a", R"({"zone":"a"})")};
  list.resource_version = "10";
  client.QueueList(list);
  WatchEvent relabelled;
  relabelled.type = WatchEventType::kModified;
  relabelled.object = Node("node-a", R"({"zone":"b"})");
  client.QueueWatch({{relabelled}, Status::Ok()});

  ResourceRef nodes{"", "v1", "nodes", "", ""};
  nodes.field_selector = "metadata.name=node-a";
  WatcherOptions options;
  options.seed = 1;
  Watcher watcher(client, nodes, sink, clock, options);
  CancelToken stop;
  std::thread thread([&] { watcher.Run(stop); });
  client.WaitForWatchCalls(2);  // the first watch delivered its event and ended
  stop.Cancel();
  thread.join();
  CHECK(labels.Get() == LabelMap{{"zone", "b"}});
  CHECK(changes == std::vector<uint64_t>{1, 2});
}

TEST_CASE("a resource without a node selector path targets every node, even before labels are known") {
  NodeLabels labels;
  KubeNodeTargeting targeting(labels);
  WatchedResource plain = Targeted();
  plain.node_selector_path.clear();
  CHECK(MatchesObject(targeting, plain, Widget("1", R"({"nodeSelector":{"zone":"elsewhere"}})")));
}

TEST_CASE("an object whose selector is missing, null or empty targets every node") {
  NodeLabels labels;
  KubeNodeTargeting targeting(labels);
  CHECK(MatchesObject(targeting, Targeted(), Widget("1", "{}")));
  CHECK(MatchesObject(targeting, Targeted(), Widget("2", R"({"nodeSelector":null})")));
  CHECK(MatchesObject(targeting, Targeted(), Widget("3", R"({"nodeSelector":{}})")));
  KubeObject no_spec = Widget("4", "{}");
  no_spec.json = R"({"kind":"Widget","metadata":{"name":"w-4"}})";
  CHECK(MatchesObject(targeting, Targeted(), no_spec));
}

TEST_CASE("an object targets this node only while its selector matches the node's labels") {
  NodeLabels labels;
  KubeNodeTargeting targeting(labels);
  KubeObject zone_a = Widget("1", R"({"nodeSelector":{"zone":"a","gpu":"true"}})");
  CHECK_FALSE(MatchesObject(targeting, Targeted(), zone_a));  // labels not known yet

  labels.Set({{"zone", "a"}, {"gpu", "true"}, {"extra", "x"}});
  CHECK(MatchesObject(targeting, Targeted(), zone_a));
  CHECK_FALSE(MatchesObject(targeting, Targeted(), Widget("2", R"({"nodeSelector":{"zone":"b"}})")));

  labels.Set({{"zone", "b"}, {"gpu", "true"}});
  CHECK_FALSE(MatchesObject(targeting, Targeted(), zone_a));
  labels.Set({{"zone", "a"}, {"gpu", "true"}});
  CHECK(MatchesObject(targeting, Targeted(), zone_a));
  labels.Clear();  // the Node was deleted
  CHECK_FALSE(MatchesObject(targeting, Targeted(), zone_a));
}

TEST_CASE("a selector that is not a map of strings targets no node and is logged once per object") {
  CapturedLog log;
  NodeLabels labels;
  labels.Set({{"zone", "a"}});
  KubeNodeTargeting targeting(labels);
  KubeObject list_selector = Widget("1", R"({"nodeSelector":["zone=a"]})");
  KubeObject number_value = Widget("2", R"({"nodeSelector":{"zone":1}})");
  KubeObject spec_string = Widget("3", R"("zone=a")");
  CHECK_FALSE(MatchesObject(targeting, Targeted(), list_selector));
  CHECK_FALSE(MatchesObject(targeting, Targeted(), list_selector));
  CHECK_FALSE(MatchesObject(targeting, Targeted(), number_value));
  CHECK_FALSE(MatchesObject(targeting, Targeted(), spec_string));
  CHECK(log.Count("node selector unreadable") == 3);
  CHECK(log.Count("uid=1") == 1);
  CHECK(log.Count(R"(\"zone\" is not a string)") == 1);
  CHECK(log.Count(R"(error="\"spec\" is not an object")") == 1);
}

TEST_CASE("the selector path is followed through nested objects") {
  NodeSelectorLookup lookup =
      ReadNodeSelector(R"({"spec":{"placement":{"nodes":{"zone":"a"}}}})", "spec.placement.nodes");
  REQUIRE(lookup.kind == NodeSelectorLookup::Kind::kSelector);
  CHECK(lookup.selector == LabelMap{{"zone", "a"}});
  CHECK(ReadNodeSelector(R"({"spec":{"placement":3}})", "spec.placement.nodes").kind ==
        NodeSelectorLookup::Kind::kInvalid);
  CHECK(ReadNodeSelector(R"({"spec":{}})", "spec.placement.nodes").kind == NodeSelectorLookup::Kind::kAbsent);
}
