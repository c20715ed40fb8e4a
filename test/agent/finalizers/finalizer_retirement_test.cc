// Config changes release what they leave behind (issue 25, item 2): a node records the finalizer
// domains it serves in its state file; after a change, its own finalizer comes off the objects
// of a resource that left finalizer mode at once, and nodehook.io/singleton comes off a resource
// that left singleton mode only once no agent runs an older pod template. Timed on the fake clock.
#include <catch2/catch.hpp>

#include "agent/finalizers/agent_revisions.h"
#include "agent/finalizers/finalizer_domains.h"
#include "agent/finalizers/finalizer_retirement.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

const ResourceRef kWidgets{"example.com", "v1", "widgets", "", ""};

FinalizerDomain Node(const std::string& ns = "") {
  return FinalizerDomain{ResourceRef{"example.com", "v1", "widgets", ns, ""}, FinalizerKind::kNode};
}
FinalizerDomain Singleton() { return FinalizerDomain{kWidgets, FinalizerKind::kSingleton}; }

KubeObject Widget(const std::string& ns, const std::string& name, const std::string& finalizers) {
  KubeObject o;
  o.meta = ObjectMeta{"uid-" + name, ns, name, "7", false};
  o.json = R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name + R"(","resourceVersion":"7","finalizers":[)" +
           finalizers + "]}}";
  return o;
}

ObjectList Listed(std::vector<KubeObject> items) {
  ObjectList list;
  list.items = std::move(items);
  return list;
}

struct RetirementFixture {
  FakeClock clock;
  FakeKubeClient client;
  std::unique_ptr<SqliteStateStore> store = std::move(SqliteStateStore::Open(":memory:", "node-a", {})).value();
  std::vector<std::string> others;  // pods on another revision
  int revision_asks = 0;
  std::vector<std::string> node_events;

  std::unique_ptr<FinalizerRetirement> Retirement(std::vector<FinalizerDomain> serving, bool pod_known = true) {
    RetirementOptions o;
    o.own_finalizer = "nodehook.io/node-a";
    o.serving = std::move(serving);
    if (pod_known) {
      o.pods_on_other_revisions = [this]() -> Result<std::vector<std::string>> {
        ++revision_asks;
        return others;
      };
    }
    o.node_event = [this](const std::string& reason, bool, const std::string&) { node_events.push_back(reason); };
    return std::make_unique<FinalizerRetirement>(client, *store, clock, std::move(o));
  }
  void Recorded(const std::vector<FinalizerDomain>& domains) {
    REQUIRE(store->WriteNote(kFinalizerDomainsNote, EncodeDomains(domains)).ok());
  }
  std::vector<FinalizerDomain> Note() {
    auto note = store->ReadNote(kFinalizerDomainsNote);
    REQUIRE(note.ok());
    REQUIRE(note->has_value());
    return DecodeDomains(**note).value();
  }
};

}  // namespace

TEST_CASE("finalizer domains: what a config serves, what a change retires, and the note's text") {
  CHECK(Node().SameAs(FinalizerDomain{ResourceRef{"example.com", "v2", "widgets", "", ""}, FinalizerKind::kNode}));
  CHECK_FALSE(Node().SameAs(Singleton()));
  // A served domain of the whole scope retires nothing; one narrowed to a namespace retires the
  // wider one (swept sparing the namespace still served), and another kind is another domain.
  CHECK(RetiredDomains({Node()}, {Node()}).empty());
  CHECK(RetiredDomains({Node("a")}, {Node()}).empty());
  CHECK(RetiredDomains({Node()}, {Node("a")}).size() == 1);
  CHECK(RetiredDomains({Node(), Singleton()}, {Node()}).front().kind == FinalizerKind::kSingleton);
  CHECK(StillServed({Node("a")}, FinalizerKind::kNode, kWidgets, "a"));
  CHECK_FALSE(StillServed({Node("a")}, FinalizerKind::kNode, kWidgets, "b"));
  CHECK_FALSE(StillServed({Node("a")}, FinalizerKind::kSingleton, kWidgets, "a"));

  auto decoded = DecodeDomains(EncodeDomains({Node("a"), Singleton()}));
  REQUIRE(decoded.ok());
  REQUIRE(decoded->size() == 2);
  CHECK((*decoded)[0].SameAs(Node("a")));
  CHECK((*decoded)[1].SameAs(Singleton()));
  CHECK_FALSE(DecodeDomains("{}").ok());
  CHECK_FALSE(DecodeDomains(R"([{"plural":"widgets","version":"v1","kind":"sometimes"}])").ok());
}

TEST_CASE_METHOD(RetirementFixture, "retirement: a first start records what the config serves and releases nothing") {
  auto retirement = Retirement({Node()});
  REQUIRE(retirement->Load().ok());
  CHECK(retirement->pending() == 0);
  CHECK_FALSE(retirement->Step().has_value());
  CHECK(client.list_call_count() == 0);
  REQUIRE(Note().size() == 1);
  CHECK(Note()[0].SameAs(Node()));
}

TEST_CASE_METHOD(RetirementFixture,
                 "retirement: a resource that left finalizer mode loses this node's finalizer, no other") {
  CapturedLog log;
  Recorded({Node()});
  auto retirement = Retirement({});
  REQUIRE(retirement->Load().ok());
  CHECK(retirement->pending() == 1);
  CHECK(log.Count("finalizers retiring") == 1);
  // The note still says widgets until they are released: a crash now sweeps again at the next start.
  CHECK(Note().size() == 1);
  client.QueueList(Listed({Widget("a", "w1", R"("nodehook.io/node-a","nodehook.io/node-b")"),
                           Widget("a", "w2", R"("example.com/keep")")}));
  CHECK_FALSE(retirement->Step().has_value());
  auto patches = client.patches();
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].name == "w1");
  CHECK(patches[0].body.find(R"("op":"test")") != std::string::npos);
  CHECK(patches[0].body.find(R"("op":"replace","path":"/metadata/finalizers","value":["nodehook.io/node-b"])") !=
        std::string::npos);
  CHECK(retirement->pending() == 0);
  CHECK(Note().empty());
  CHECK(log.Count("retired finalizers released") == 1);
  CHECK(node_events == std::vector<std::string>{"RetiredFinalizersReleased"});
  // Released is released: a new start with the same config looks at nothing.
  auto again = Retirement({});
  REQUIRE(again->Load().ok());
  CHECK(again->pending() == 0);
}

TEST_CASE_METHOD(RetirementFixture, "retirement: objects a narrower domain still serves keep their finalizer") {
  Recorded({Node()});
  auto retirement = Retirement({Node("a")});
  REQUIRE(retirement->Load().ok());
  client.QueueList(Listed({Widget("a", "w1", R"("nodehook.io/node-a")"), Widget("b", "w2", R"("nodehook.io/node-a")")}));
  CHECK_FALSE(retirement->Step().has_value());
  auto patches = client.patches();
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].name == "w2");
  REQUIRE(Note().size() == 1);
  CHECK(Note()[0].SameAs(Node("a")));
}

TEST_CASE_METHOD(RetirementFixture,
                 "retirement: the singleton finalizer waits for every agent on an older pod template to be gone") {
  CapturedLog log;
  Recorded({Singleton()});
  others = {"nodehook-old1"};
  auto retirement = Retirement({});
  REQUIRE(retirement->Load().ok());
  auto next = retirement->Step();
  REQUIRE(next.has_value());
  CHECK(*next == clock.Now() + std::chrono::seconds(5));
  CHECK(client.list_call_count() == 0);
  CHECK(log.Count("retired finalizers waiting") == 1);
  CHECK(log.Count("nodehook-old1") == 1);
  // Not due yet: nothing asked.
  clock.Advance(std::chrono::seconds(4));
  retirement->Step();
  CHECK(revision_asks == 1);
  // Still waiting for the same pod: asked again, backing off, said once.
  clock.Advance(std::chrono::seconds(1));
  next = retirement->Step();
  CHECK(revision_asks == 2);
  CHECK(*next == clock.Now() + std::chrono::seconds(10));
  CHECK(log.Count("retired finalizers waiting") == 1);
  // The old pod is gone: nodehook.io/singleton comes off; per-node finalizers are not its business.
  others.clear();
  clock.Advance(std::chrono::seconds(10));
  client.QueueList(Listed({Widget("a", "w1", R"("nodehook.io/node-b","nodehook.io/singleton")")}));
  CHECK_FALSE(retirement->Step().has_value());
  auto patches = client.patches();
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].body.find(R"("value":["nodehook.io/node-b"])") != std::string::npos);
  CHECK(Note().empty());
}

TEST_CASE_METHOD(RetirementFixture, "retirement: pods it may not read are a wait that names the way out") {
  CapturedLog log;
  Recorded({Singleton()});
  RetirementOptions o;
  o.own_finalizer = "nodehook.io/node-a";
  o.pods_on_other_revisions = []() -> Result<std::vector<std::string>> {
    return Status(StatusCode::kForbidden, "HTTP 403: cannot list pods");
  };
  FinalizerRetirement retirement(client, *store, clock, std::move(o));
  REQUIRE(retirement.Load().ok());
  REQUIRE(retirement.Step().has_value());
  CHECK(client.list_call_count() == 0);
  CHECK(log.Count("retired finalizers waiting") == 1);
  CHECK(log.Count("--previous OLD") == 1);
}

TEST_CASE_METHOD(RetirementFixture, "retirement: without its own pod the agent cannot tell, and the singleton's wait") {
  Recorded({Singleton()});
  auto retirement = Retirement({}, /*pod_known=*/false);
  REQUIRE(retirement->Load().ok());
  for (int i = 0; i < 3; ++i) {
    REQUIRE(retirement->Step().has_value());
    clock.Advance(std::chrono::minutes(10));
  }
  CHECK(client.list_call_count() == 0);
  CHECK(retirement->pending() == 1);
}

TEST_CASE_METHOD(RetirementFixture, "retirement: a 403 is said with the way out and tried again with backoff") {
  CapturedLog log;
  Recorded({Node()});
  auto retirement = Retirement({});
  REQUIRE(retirement->Load().ok());
  client.QueueList(Status(StatusCode::kForbidden, "HTTP 403: cannot list widgets"));
  auto next = retirement->Step();
  REQUIRE(next.has_value());
  CHECK(*next == clock.Now() + std::chrono::seconds(5));
  CHECK(log.Count("retired finalizers not released") == 1);
  CHECK(log.Count("--previous") == 1);
  clock.Advance(std::chrono::seconds(5));
  client.QueueList(Status(StatusCode::kUnavailable, "connection refused"));
  next = retirement->Step();
  CHECK(*next == clock.Now() + std::chrono::seconds(10));
  CHECK(retirement->pending() == 1);
  CHECK(Note().size() == 1);
  // Its CRD was deleted meanwhile: a resource no longer served has no object left to release.
  clock.Advance(std::chrono::seconds(10));
  client.QueueList(Status(StatusCode::kNotFound, "HTTP 404"));
  CHECK_FALSE(retirement->Step().has_value());
  CHECK(Note().empty());
}

TEST_CASE_METHOD(RetirementFixture, "retirement: a concurrent change of the list is re-read, not lost") {
  Recorded({Node()});
  auto retirement = Retirement({});
  REQUIRE(retirement->Load().ok());
  client.QueueList(Listed({Widget("a", "w1", R"("nodehook.io/node-a")")}));
  client.QueuePatchResult(Status(StatusCode::kInvalid, "HTTP 422: test failed"));
  client.PutObject(Widget("a", "w1", R"("example.com/new","nodehook.io/node-a")"));
  CHECK_FALSE(retirement->Step().has_value());
  auto patches = client.patches();
  REQUIRE(patches.size() == 2);
  CHECK(patches[1].body.find(R"("op":"replace","path":"/metadata/finalizers","value":["example.com/new"])") !=
        std::string::npos);
}

TEST_CASE("older agent pods: the server is asked for the own DaemonSet's pods on another revision only, a few") {
  FakeKubeClient client;
  KubeObject own;
  own.meta = ObjectMeta{"uid-own", "nodehook", "nodehook-new1", "1", false};
  // Labelled as an agent: the other pool's DaemonSet is still left out (another config for good).
  own.json = R"({"metadata":{"name":"nodehook-new1","labels":{"app":"nodehook","nodehook.io/agent":"node-agent",)"
             R"("controller-revision-hash":"new"},"ownerReferences":[)"
             R"({"apiVersion":"apps/v1","kind":"DaemonSet","name":"nodehook","controller":true}]}})";
  client.PutObject(own);
  KubeObject ds;
  ds.meta = ObjectMeta{"uid-ds", "nodehook", "nodehook", "1", false};
  ds.json = R"({"kind":"DaemonSet","spec":{"selector":{"matchLabels":{"app":"nodehook"}}}})";
  client.PutObject(ds);
  KubeObject old = Widget("nodehook", "nodehook-old1", "");
  client.QueueList(Listed({old}));
  client.QueueList(Listed({}));
  OlderAgentPods older(client, "nodehook", "nodehook-new1");
  auto first = older.Find();
  REQUIRE(first.ok());
  CHECK(*first == std::vector<std::string>{"nodehook-old1"});
  auto second = older.Find();
  REQUIRE(second.ok());
  CHECK(second->empty());
  // The selector was worked out once: two GETs (own pod, DaemonSet), however often it asks.
  CHECK(client.get_call_count() == 2);
  for (const ResourceRef& listed : client.list_resources()) {
    CHECK(listed.label_selector == "app=nodehook,controller-revision-hash!=new");
  }
  for (const ListOptions& options : client.list_calls()) CHECK(options.limit == kShownOlderPods);

  // A pod no DaemonSet runs (by hand, a test) without a revision: nothing to compare by.
  own.json = R"({"metadata":{"name":"nodehook-new1","labels":{"app":"nodehook"}}})";
  client.PutObject(own);
  OlderAgentPods unknown(client, "nodehook", "nodehook-new1");
  CHECK(unknown.Find().status().code() == StatusCode::kInvalid);
}
