#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <thread>

#include "agent/base/utc_time.h"
#include "agent/kubectl/agent_stand_down.h"
#include "agent/kubectl/dead_node_pods.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

KubeObject Pod(const std::string& name, const std::string& node, const std::string& owner_kind,
               const std::string& owner, bool terminating = false) {
  KubeObject pod;
  pod.meta = {"uid-" + name, "nodehook", name, "1", terminating};
  pod.json = R"({"metadata":{"name":")" + name + R"(","namespace":"nodehook","ownerReferences":[{"kind":")" +
             owner_kind + R"(","name":")" + owner + R"(","controller":true}]},"spec":{"nodeName":")" + node +
             R"("}})";
  return pod;
}

// A pod of DaemonSet nodehook on `node` whose grace period ends at `deletion` (a pod deleted then).
KubeObject Deleted(const std::string& name, const std::string& node, TimePoint deletion) {
  KubeObject pod = Pod(name, node, "DaemonSet", "nodehook", true);
  pod.json.insert(pod.json.find(R"("ownerReferences")"), R"("deletionTimestamp":")" + Rfc3339Millis(deletion) + R"(",)");
  return pod;
}

KubeObject Node(const std::string& name, const std::string& ready) {
  KubeObject node;
  node.meta = {"uid-" + name, "", name, "1", false};
  node.json = R"({"metadata":{"name":")" + name + R"("},"status":{"conditions":[{"type":"Ready","status":")" + ready +
              R"("}]}})";
  return node;
}

ObjectList Listed(std::vector<KubeObject> items) {
  ObjectList list;
  list.items = std::move(items);
  return list;
}

// Runs StandDownAgents on a thread; the clock moves on by a second each time it goes to sleep
// (a new sleep, so one poll never gets two seconds).
Status RunWithClock(FakeKubeClient& client, const StandDownOptions& options, FakeClock& clock, std::ostream& out) {
  Status result(StatusCode::kInternal, "not run");
  bool done = false;
  std::mutex mu;
  std::thread t([&] {
    Status s = StandDownAgents(client, options, clock, out);
    std::lock_guard<std::mutex> lock(mu);
    result = s;
    done = true;
  });
  size_t sleeps = 0;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (done) break;
    }
    if (clock.sleeps() > sleeps) {
      sleeps = clock.sleeps();
      clock.Advance(std::chrono::seconds(1));
    }
    std::this_thread::yield();
  }
  t.join();
  return result;
}

}  // namespace

TEST_CASE("stand-down deletes the DaemonSet and returns once none of its pods is left, terminating ones included") {
  FakeKubeClient client;
  FakeClock clock;
  // Another DaemonSet's pod and the uninstall Job's own pod never count.
  client.QueueList(Listed({Pod("nodehook-a", "node-a", "DaemonSet", "nodehook", true),
                           Pod("nodehook-b", "node-b", "DaemonSet", "nodehook"),
                           Pod("other-x", "node-a", "DaemonSet", "other"), Pod("job-1", "node-a", "Job", "release")}));
  client.QueueList(Listed({Pod("nodehook-b", "node-b", "DaemonSet", "nodehook", true)}));
  client.QueueList(Listed({Pod("other-x", "node-a", "DaemonSet", "other")}));
  std::ostringstream out;
  REQUIRE(RunWithClock(client, {"nodehook", "nodehook"}, clock, out).ok());
  auto deletes = client.delete_calls();
  REQUIRE(deletes.size() == 1);
  CHECK(deletes[0].resource.Id() == "daemonsets.apps/v1");
  CHECK(deletes[0].namespace_name == "nodehook");
  CHECK(deletes[0].name == "nodehook");
  CHECK(client.list_call_count() == 3);
  CHECK(client.list_resources()[0].namespace_name == "nodehook");
  CHECK(out.str() ==
        "deleted DaemonSet nodehook/nodehook\n"
        "waiting for 2 agent pods to stop: nodehook/nodehook-a on node-a (terminating), nodehook/nodehook-b on node-b\n"
        "no agent pod of DaemonSet nodehook/nodehook is left\n");
}

TEST_CASE("stand-down after the DaemonSet is gone still waits for its pods") {
  FakeKubeClient client;
  FakeClock clock;
  client.QueueDeleteResult(Status(StatusCode::kNotFound, "HTTP 404"));
  client.QueueList(Listed({Pod("nodehook-a", "node-a", "DaemonSet", "nodehook", true)}));
  client.QueueList(Listed({}));
  std::ostringstream out;
  REQUIRE(RunWithClock(client, {"nodehook", "nodehook"}, clock, out).ok());
  CHECK(out.str().find("DaemonSet already gone: nodehook/nodehook\n") == 0);
  CHECK(client.list_call_count() == 2);
}

TEST_CASE("stand-down gives up at its deadline, naming the pods still there; a refused delete stops at once") {
  FakeClock clock;
  std::ostringstream out;
  SECTION("pods that never go") {
    FakeKubeClient client;
    for (int i = 0; i < 10; ++i) client.QueueList(Listed({Pod("nodehook-a", "node-a", "DaemonSet", "nodehook")}));
    StandDownOptions options{"nodehook", "nodehook", std::chrono::seconds(5)};
    Status s = RunWithClock(client, options, clock, out);
    CHECK(s.code() == StatusCode::kTimeout);
    CHECK(s.message() == "agent pods of DaemonSet nodehook/nodehook still there after 5 s: nodehook/nodehook-a on node-a");
    CHECK(client.list_call_count() == 6);  // at 0, 1, ... 5 s
  }
  SECTION("a 403") {
    FakeKubeClient client;
    client.QueueDeleteResult(Status(StatusCode::kForbidden, "HTTP 403: cannot delete daemonsets"));
    Status s = RunWithClock(client, {"nodehook", "nodehook"}, clock, out);
    CHECK(s.code() == StatusCode::kForbidden);
    CHECK(s.message() == "cannot delete DaemonSet nodehook/nodehook: HTTP 403: cannot delete daemonsets");
    CHECK(client.list_call_count() == 0);
  }
  SECTION("a list the server refuses for good") {
    FakeKubeClient client;
    client.QueueList(Status(StatusCode::kForbidden, "HTTP 403"));
    Status s = RunWithClock(client, {"nodehook", "nodehook"}, clock, out);
    CHECK(s.code() == StatusCode::kForbidden);
    CHECK(s.message() == "cannot list the pods of DaemonSet nodehook/nodehook: HTTP 403");
  }
  SECTION("an unavailable server is asked again") {
    FakeKubeClient client;
    client.QueueList(Status(StatusCode::kUnavailable, "connection refused"));
    client.QueueList(Listed({}));
    CHECK(RunWithClock(client, {"nodehook", "nodehook"}, clock, out).ok());
    CHECK(client.list_call_count() == 2);
  }
}

TEST_CASE("stand-down stops waiting for a pod on a node that is not Ready once its grace period and a margin are over") {
  FakeKubeClient client;
  FakeClock clock;
  const TimePoint grace_end = clock.Now();  // deleted a grace period ago
  client.PutObject(Node("node-dead", "Unknown"));
  client.PutObject(Node("node-live", "True"));
  // The live node's pod goes after 40 s; the dead node's never does.
  for (int i = 0; i < 40; ++i) {
    client.QueueList(Listed({Deleted("nodehook-dead", "node-dead", grace_end),
                             Deleted("nodehook-live", "node-live", grace_end)}));
  }
  client.QueueList(Listed({Deleted("nodehook-dead", "node-dead", grace_end)}));
  std::ostringstream out;
  REQUIRE(RunWithClock(client, {"nodehook", "nodehook"}, clock, out).ok());
  const std::string dead = "nodehook/nodehook-dead on node-dead (terminating)";
  CHECK(out.str() ==
        "deleted DaemonSet nodehook/nodehook\n"
        "waiting for 2 agent pods to stop: " + dead + ", nodehook/nodehook-live on node-live (terminating)\n"
        "not waiting for " + dead + ": its Node is not Ready and its grace period ended 31 s ago: no kubelet "
        "will confirm it gone, so its agent is taken as stopped (docs/install.md#uninstall)\n"
        "no agent pod of DaemonSet nodehook/nodehook is left to wait for (not waited for: " + dead + ")\n");
  // A Node is read only for pods past their grace period and the margin (from 31 s on): the dead
  // one once, the live one each round until its pod goes (at 40 s).
  CHECK(client.get_call_count() == 1 + (40 - 31));
}

TEST_CASE("stand-down judges the grace period by the API server's clock, and a pod whose Node is gone is not waited for") {
  FakeKubeClient client;
  FakeClock clock;
  client.QueueList(Listed({Deleted("nodehook-a", "node-gone", clock.Now())}));
  StandDownOptions options{"nodehook", "nodehook"};
  options.server_offset = [] { return Duration(kDeadNodeMargin + std::chrono::seconds(5)); };
  std::ostringstream out;
  REQUIRE(RunWithClock(client, options, clock, out).ok());
  CHECK(out.str().find("not waiting for nodehook/nodehook-a on node-gone (terminating): its Node is gone and its "
                       "grace period ended 35 s ago") != std::string::npos);
  CHECK(client.list_call_count() == 1);
}

TEST_CASE("stand-down waits for a pod on a Ready node, a pod not deleted yet, and a pod whose Node it cannot read") {
  FakeKubeClient client;
  FakeClock clock;
  const TimePoint long_ago = clock.Now() - std::chrono::hours(1);
  client.PutObject(Node("node-live", "True"));
  client.PutObject(Node("node-dead", "False"));
  KubeObject running = Pod("nodehook-running", "node-dead", "DaemonSet", "nodehook");
  std::ostringstream out;
  SECTION("Ready, or not deleted") {
    for (int i = 0; i < 3; ++i) client.QueueList(Listed({Deleted("nodehook-live", "node-live", long_ago), running}));
    StandDownOptions options{"nodehook", "nodehook", std::chrono::seconds(2)};
    Status s = RunWithClock(client, options, clock, out);
    CHECK(s.code() == StatusCode::kTimeout);
    CHECK(s.message() == "agent pods of DaemonSet nodehook/nodehook still there after 2 s: nodehook/nodehook-live on "
                         "node-live (terminating), nodehook/nodehook-running on node-dead");
  }
  SECTION("a Node it may not read") {
    client.FailGets(Status(StatusCode::kForbidden, "HTTP 403: cannot get nodes"));
    for (int i = 0; i < 3; ++i) client.QueueList(Listed({Deleted("nodehook-dead", "node-dead", long_ago)}));
    StandDownOptions options{"nodehook", "nodehook", std::chrono::seconds(2)};
    Status s = RunWithClock(client, options, clock, out);
    CHECK(s.code() == StatusCode::kTimeout);
    CHECK(s.message() == "agent pods of DaemonSet nodehook/nodehook still there after 2 s: nodehook/nodehook-dead on "
                         "node-dead (terminating) (cannot tell whether node node-dead is dead: HTTP 403: cannot get "
                         "nodes)");
  }
  CHECK(out.str().find("not waiting") == std::string::npos);
}

TEST_CASE("a dead node's pod is waited for until the margin after its grace period is over") {
  const int64_t deletion = 1'700'000'000'000;
  const std::string not_ready = Node("n", "Unknown").json;
  CHECK(WhyNotWaitedFor(not_ready, deletion, deletion + kDeadNodeMargin.count()).empty());
  CHECK_FALSE(WhyNotWaitedFor(not_ready, deletion, deletion + kDeadNodeMargin.count() + 1).empty());
  CHECK_FALSE(WhyNotWaitedFor(std::nullopt, deletion, deletion + kDeadNodeMargin.count() + 1).empty());
  // A Node that reports no Ready condition (a test API server's) counts as alive.
  CHECK(WhyNotWaitedFor(R"({"metadata":{"name":"n"}})", deletion, deletion + 3'600'000).empty());
  CHECK(PodDeletionMs(Deleted("p", "n", FromMillis(deletion)).json) == deletion);
  CHECK_FALSE(PodDeletionMs(Pod("p", "n", "DaemonSet", "nodehook", true).json).has_value());
}

TEST_CASE("running agents are the pods labelled nodehook.io/agent, and older manifests' pods a DaemonSet controls") {
  FakeKubeClient client;
  KubeObject by_hand = Pod("agent-by-hand", "node-c", "Job", "x");
  by_hand.json = R"({"metadata":{"name":"agent-by-hand","namespace":"nodehook","labels":{"nodehook.io/agent":"node-agent"}},)"
                 R"("spec":{"nodeName":"node-c"}})";
  // The labelled pods: one of a DaemonSet, one run by hand.
  client.QueueList(Listed({Pod("nodehook-a", "node-a", "DaemonSet", "nodehook"), by_hand}));
  // The legacy selector: the same DaemonSet pod again (said once), an older one, and the Job's.
  client.QueueList(Listed({Pod("nodehook-a", "node-a", "DaemonSet", "nodehook"),
                           Pod("old-b", "node-b", "DaemonSet", "nodehook-old"), Pod("job-1", "node-a", "Job", "x")}));
  auto running = RunningAgents(client, kAgentPodsSelector);
  REQUIRE(running.ok());
  CHECK(*running == std::vector<std::string>{"nodehook/nodehook-a on node-a (DaemonSet nodehook/nodehook)",
                                             "nodehook/agent-by-hand on node-c",
                                             "nodehook/old-b on node-b (DaemonSet nodehook/nodehook-old)"});
  CHECK(client.list_resources()[0].namespace_name.empty());
  CHECK(client.list_resources()[0].label_selector == "nodehook.io/agent");
  CHECK(client.list_resources()[1].label_selector == "app.kubernetes.io/name=nodehook");
}
