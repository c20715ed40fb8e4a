#include <catch2/catch.hpp>

#include <sstream>
#include <thread>

#include "agent/kubectl/agent_stand_down.h"
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
