// Finalizer mode (issue 11): the reconciler with a FinalizerKeeper and a NodeRoster, against the
// fake kube client. The rules: a foreign finalizer comes off only after a fresh read of its Node
// answers 404; a conflicting patch re-reads and retries; a succeeded delete hook is never rerun.
#include <catch2/catch.hpp>

#include "agent/finalizers/finalizer_keeper.h"
#include "agent/finalizers/finalizers.h"
#include "agent/finalizers/node_roster.h"
#include "test/agent/reconcile/reconciler_fixture.h"
#include "test/fakes/captured_log.h"

using namespace nodehook;

TEST_CASE("finalizer mode: the finalizer goes on before the first hook and comes off after delete") {
  Fixture f;
  FakeKubeClient client;
  FinalizerKeeper keeper(client, "node-a", nullptr);
  f.finalizers = &keeper;
  KubeObject node_b;  // node-b exists: its finalizer stays
  node_b.meta.name = "node-b";
  client.PutObject(node_b);
  auto r = Resource({"create", "delete"});
  r.finalizer = true;
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(client.patches().size() == 1);
  REQUIRE(client.patches()[0].body.find(R"("add","path":"/metadata/finalizers","value":["nodehook.io/node-a"])") !=
          std::string::npos);
  REQUIRE(f.LastReason() == "create");

  // Multi-step deletion: in progress twice, then done; the finalizer stays until then.
  f.runner.QueueExitCodes({100, 100, 0});
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-a","nodehook.io/node-b"])", true));
  REQUIRE(f.Reconcile(r, "u1") == Duration(10'000));
  f.clock.Advance(Duration(10'000));
  REQUIRE(f.Reconcile(r, "u1") == Duration(10'000));
  REQUIRE(client.patches().size() == 1);  // nothing removed while in progress
  f.clock.Advance(Duration(10'000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(client.patches().size() == 2);
  REQUIRE(client.patches()[1].body ==
          R"([{"op":"test","path":"/metadata/finalizers","value":["nodehook.io/node-a","nodehook.io/node-b"]},)"
          R"({"op":"replace","path":"/metadata/finalizers","value":["nodehook.io/node-b"]}])");
  REQUIRE_FALSE(f.store->GetObject("u1")->has_value());
}

TEST_CASE("finalizer mode: a change during deletion runs the delete hook again at once") {
  Fixture f;
  FakeKubeClient client;
  FinalizerKeeper keeper(client, "node-a", nullptr);
  f.finalizers = &keeper;
  auto r = Resource({"create", "delete"});
  r.finalizer = true;
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
  f.runner.QueueExitCodes({100});
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-a"])", true));
  REQUIRE(f.Reconcile(r, "u1") == Duration(10'000));
  f.cache.Upsert(WithFinalizers(Widget("u1", "3", 5), R"(["nodehook.io/node-a"])", true));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));  // not due, but the object changed: runs now and finishes
  REQUIRE(f.runner.call_count() == 3);
}

TEST_CASE("finalizer mode: a failed finalizer patch holds the hook back and retries soon") {
  Fixture f;
  FakeKubeClient client;
  client.QueuePatchResult(Status(StatusCode::kConflict, "the object has been modified"));
  FinalizerKeeper keeper(client, "node-a", nullptr);
  f.finalizers = &keeper;
  auto r = Resource({"create"});
  r.finalizer = true;
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  REQUIRE(f.runner.call_count() == 0);
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 1);
}

namespace {

// What the real API server answers when a JSON patch's test fails.
const char* const kTestFailed =
    "patch widgets.example.com/v1 ns/w-u1: HTTP 422: the server rejected our request due to an error in our request";

KubeObject Node(const std::string& name) {
  KubeObject n;
  n.meta.name = name;
  n.meta.uid = "uid-" + name;
  n.json = R"({"kind":"Node","metadata":{"name":")" + name + R"("}})";
  return n;
}

ObjectPtr NodePtr(const std::string& name) { return std::make_shared<KubeObject>(Node(name)); }

// A reconciler in finalizer mode whose NodeRoster has listed `listed` Nodes, and whose API server
// has the Nodes `existing`.
struct FinalizerFixture : Fixture {
  FakeKubeClient client;
  NodeRoster roster;
  FinalizerKeeper keeper{client, "node-a", &roster};
  WatchedResource resource = Resource({"create", "delete"});

  FinalizerFixture(const std::vector<std::string>& listed, const std::vector<std::string>& existing) {
    std::vector<ObjectPtr> items;
    for (const auto& n : listed) items.push_back(NodePtr(n));
    roster.OnListed(items, {});
    for (const auto& n : existing) client.PutObject(Node(n));
    resource.finalizer = true;
    finalizers = &keeper;
  }
  std::vector<std::string> NodeReads() const {
    std::vector<std::string> names;
    for (const auto& ref : client.get_refs()) {
      if (ref.resource.plural == "nodes") names.push_back(ref.name);
    }
    return names;
  }
};

}  // namespace

TEST_CASE("finalizer mode: a departed node's finalizer comes off only after a fresh read of its Node answers 404") {
  FinalizerFixture f({"node-a", "node-b"}, {"node-a", "node-b"});
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-b","nodehook.io/node-gone","x"])", true));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.NodeReads() == std::vector<std::string>{"node-gone"});  // node-b is in the watch: not read
  REQUIRE(f.client.patches().size() == 1);
  CHECK(f.client.patches()[0].body ==
        R"([{"op":"test","path":"/metadata/finalizers","value":["nodehook.io/node-b","nodehook.io/node-gone","x"]},)"
        R"({"op":"replace","path":"/metadata/finalizers","value":["nodehook.io/node-b","x"]}])");
  CHECK(f.runner.call_count() == 0);  // this node never handled it: no delete hook here
}

TEST_CASE("finalizer mode: a node that joined after the Node list (absent from the watch) keeps its finalizer") {
  FinalizerFixture f({"node-a"}, {"node-a", "node-new"});  // the watch has not shown node-new yet
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-new"])", true));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.NodeReads() == std::vector<std::string>{"node-new"});
  CHECK(f.client.patches().empty());
}

TEST_CASE("finalizer mode: a node deleted and re-created since the last Node list keeps its finalizer") {
  FinalizerFixture f({"node-a", "node-b"}, {"node-a", "node-b"});
  f.roster.OnDeleted(NodePtr("node-b"));  // the watch saw it go ...
  // ... and it came back, which the watch has not delivered yet; the fresh read finds it.
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-b"])", true));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.NodeReads() == std::vector<std::string>{"node-b"});
  CHECK(f.client.patches().empty());
}

TEST_CASE("finalizer mode: when its Node cannot be read, a finalizer is kept and looked at again soon") {
  FinalizerFixture f({"node-a"}, {"node-a"});
  f.client.FailGets(Status(StatusCode::kUnavailable, "HTTP 503"));
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-gone"])", true));
  REQUIRE(f.Reconcile(f.resource, "u1") == Duration(1000));
  CHECK(f.client.patches().empty());
  f.client.FailGets(Status::Ok());
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.client.patches().size() == 1);
}

TEST_CASE("finalizer mode: a conflict on removing our finalizer re-reads the object and retries, hook not rerun") {
  CapturedLog log;
  FinalizerFixture f({"node-a", "node-b"}, {"node-a", "node-b"});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));  // create, and our finalizer goes on
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-a","nodehook.io/node-b"])", true));
  // node-b removed its own finalizer a moment before us: our test of the list fails.
  f.client.QueuePatchResult(Status(StatusCode::kInvalid, kTestFailed));
  f.client.PutObject(*WithFinalizers(Widget("u1", "3", 1), R"(["nodehook.io/node-a"])", true));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.runner.call_count() == 2);  // create, delete: once each
  auto patches = f.client.patches();
  REQUIRE(patches.size() == 3);
  CHECK(patches[2].body == R"([{"op":"test","path":"/metadata/finalizers","value":["nodehook.io/node-a"]},)"
                           R"({"op":"replace","path":"/metadata/finalizers","value":[]}])");
  CHECK_FALSE(f.store->GetObject("u1")->has_value());
  CHECK(log.Count("finalizer list changed concurrently") == 1);
  CHECK(log.Count("level=warn") == 0);
  CHECK(log.Count("level=error") == 0);
}

TEST_CASE("finalizer mode: a finalizer removal that keeps failing never reruns the succeeded delete hook, "
          "also after a restart") {
  FinalizerFixture f({"node-a"}, {"node-a"});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  f.cache.Upsert(WithFinalizers(Widget("u1", "2", 1), R"(["nodehook.io/node-a"])", true));
  f.client.QueuePatchResult(Status(StatusCode::kUnavailable, "HTTP 503"));
  REQUIRE(f.Reconcile(f.resource, "u1") == Duration(1000));
  CHECK(f.runner.call_count() == 2);
  auto pending = f.store->GetHandler("u1", "delete");
  REQUIRE(pending->has_value());
  CHECK((*pending)->last_outcome == "finalizer_pending");

  f.Restart();  // the agent restarts with the same state file

  // A change during the pending removal (another node's finalizer came off) is no reason either.
  f.cache.Upsert(WithFinalizers(Widget("u1", "3", 2), R"(["nodehook.io/node-a"])", true));
  REQUIRE_FALSE(f.Reconcile(f.resource, "u1"));
  CHECK(f.runner.call_count() == 2);
  CHECK(f.client.patches().back().body.find(R"("value":[]})") != std::string::npos);
  CHECK_FALSE(f.store->GetObject("u1")->has_value());
  CHECK(f.store->ListHandlers("u1")->empty());
}

TEST_CASE("a 422 (the failed test every finalizer patch begins with) and a 409 are concurrent changes") {
  CHECK(IsConcurrentFinalizerChange(Status(StatusCode::kInvalid, kTestFailed)));
  CHECK(IsConcurrentFinalizerChange(Status(StatusCode::kConflict, "HTTP 409: the object has been modified")));
  CHECK_FALSE(IsConcurrentFinalizerChange(Status(StatusCode::kInvalid, "HTTP 400: bad request")));
  CHECK_FALSE(IsConcurrentFinalizerChange(Status(StatusCode::kUnavailable, "HTTP 503")));
}

TEST_CASE("finalizer mode: no finalizer is added to an object that the fresh read shows being deleted") {
  FinalizerFixture f({"node-a"}, {"node-a"});
  f.cache.Upsert(Widget("u1", "1", 1));
  f.client.QueuePatchResult(Status(StatusCode::kInvalid, kTestFailed));
  f.client.PutObject(*Widget("u1", "2", 1, "Ready", true));
  REQUIRE(f.Reconcile(f.resource, "u1") == Duration(1000));
  CHECK(f.client.patches().size() == 1);  // not tried again on the deleting object
  CHECK(f.runner.call_count() == 0);      // and no create hook without the finalizer
}

TEST_CASE("node roster: a Node deleted, or missing from a relist, is reported departed once; the first list none") {
  NodeRoster roster;
  std::vector<std::string> departed;
  roster.SetOnDeparted([&](const std::string& n) { departed.push_back(n); });
  roster.OnListed({NodePtr("a"), NodePtr("b"), NodePtr("c")}, {});
  CHECK(departed.empty());
  roster.OnDeleted(NodePtr("b"));
  roster.OnDeleted(NodePtr("b"));  // a repeated event is not a second departure
  roster.OnObject(NodePtr("d"));
  roster.OnListed({NodePtr("a"), NodePtr("d")}, {});
  CHECK(departed == std::vector<std::string>{"b", "c"});
  CHECK(roster.Present("d"));
  CHECK_FALSE(roster.Present("c"));
  CHECK(roster.ShowsOwnerOf("nodehook.io/a"));
  CHECK_FALSE(roster.ShowsOwnerOf("nodehook.io/c"));
}

TEST_CASE("node roster: a departed node with a long name is traced back from its hashed finalizer") {
  NodeRoster roster;
  std::string long_name(70, 'n');
  roster.OnListed({NodePtr(long_name)}, {});
  roster.OnListed({}, {});
  CHECK(roster.NamesFor(FinalizerName(long_name)) == std::vector<std::string>{long_name});
}

TEST_CASE("a node's departure concerns only cached objects being deleted that carry its finalizer") {
  ObjectCache cache;
  cache.Upsert(WithFinalizers(Widget("deleting-with", "1", 1), R"(["nodehook.io/node-b"])", true));
  cache.Upsert(WithFinalizers(Widget("deleting-without", "1", 1), R"(["nodehook.io/node-c"])", true));
  cache.Upsert(WithFinalizers(Widget("live", "1", 1), R"(["nodehook.io/node-b"])", false));
  cache.Upsert(WithFinalizers(Widget("gone", "1", 1), R"(["nodehook.io/node-b"])", true));
  cache.MarkGone("gone", nullptr);
  CHECK(UidsDeletingWith(cache, "nodehook.io/node-b") == std::vector<std::string>{"deleting-with"});
}
