#include <catch2/catch.hpp>

#include "agent/nodework/pod_drain.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_node_api.h"

namespace nodehook {
namespace {

TEST_CASE("a drain evicts every pod but DaemonSet pods and the agent's own, and waits for them to go") {
  FakeNodeApi api;
  FakeClock clock;
  api.AddPod("default", "web-1");
  api.AddPod("default", "web-2");
  api.AddPod("kube-system", "proxy", -1, true);
  api.AddPod("nodehook", "agent-x");
  DrainOptions options;
  options.self = "nodehook/agent-x";
  PodDrain drain(api, clock, options);
  auto first = drain.Round();
  REQUIRE(first.ok());
  REQUIRE(first->evictions == 2);
  REQUIRE(first->left == std::vector<std::string>{"default/web-1", "default/web-2"});
  REQUIRE_FALSE(first->done());
  auto waiting = drain.Round();  // terminating: waited for, not evicted again
  REQUIRE(waiting->evictions == 0);
  REQUIRE(waiting->left.size() == 2);
  api.Finish();
  auto done = drain.Round();
  REQUIRE(done->done());
  REQUIRE(api.evictions() == std::map<std::string, int>{{"default/web-1", 1}, {"default/web-2", 1}});
  REQUIRE(api.pods_left() == std::vector<std::string>{"kube-system/proxy", "nodehook/agent-x"});
}

TEST_CASE("a pod its budget refuses is probed again after a backoff doubling to 10 s, and reported once") {
  FakeNodeApi api;
  FakeClock clock;
  api.AddPod("default", "db-0", 0);
  PodDrain drain(api, clock, DrainOptions{});
  auto first = drain.Round();
  REQUIRE(first->evictions == 1);
  REQUIRE(first->newly_blocked.size() == 1);
  REQUIRE(first->blocked.find("default/db-0: Cannot evict pod") == 0);
  REQUIRE(first->next == std::chrono::seconds(1));
  auto early = drain.Round();
  REQUIRE(early->evictions == 0);  // not due yet
  REQUIRE(early->blocked == first->blocked);
  // Each round that evicts nothing doubles the wait: due a millisecond after it, not before.
  clock.Advance(std::chrono::seconds(1));
  REQUIRE(drain.Round()->evictions == 1);
  for (int wait : {2, 4, 8, 10, 10}) {
    clock.Advance(std::chrono::seconds(wait) - std::chrono::milliseconds(1));
    auto before = drain.Round();
    REQUIRE(before->evictions == 0);
    REQUIRE(before->next == std::chrono::milliseconds(1));
    clock.Advance(std::chrono::milliseconds(1));
    auto round = drain.Round();
    REQUIRE(round->evictions == 1);
    REQUIRE(round->newly_blocked.empty());
  }
  api.SetBudget("default/db-0", 1);
  clock.Advance(std::chrono::seconds(10));
  auto allowed = drain.Round();
  REQUIRE(allowed->evictions == 1);
  REQUIRE(allowed->blocked.empty());
  REQUIRE(allowed->next == kDrainQuickLook);
  api.Finish();
  REQUIRE(drain.Round()->done());
  REQUIRE(api.evictions().at("default/db-0") == 8);  // 7 refused, 1 allowed
}

TEST_CASE("pods a shared budget refused cost one call a round: probed in turn until one is refused") {
  FakeNodeApi api;
  FakeClock clock;
  for (int i = 0; i < 5; ++i) api.AddPod("default", "web-" + std::to_string(i), -1, false, "web");
  api.SetGroupBudget("web", 1);
  PodDrain drain(api, clock, DrainOptions{});
  auto first = drain.Round();  // every pod asked once: one goes, four refused
  REQUIRE(first->evictions == 5);
  REQUIRE(first->newly_blocked.size() == 4);
  // Not allowed yet: one probe a round.
  clock.Advance(std::chrono::seconds(1));
  REQUIRE(drain.Round()->evictions == 1);
  // Each time the evicted pod is gone, the budget allows one more: the round's probe evicts one
  // and stops at the next refusal.
  std::vector<int> calls;
  Duration wait = std::chrono::seconds(2);
  for (int left = 4; left > 0; --left) {
    api.Finish();
    api.SetGroupBudget("web", 1);
    clock.Advance(wait);
    auto round = drain.Round();
    calls.push_back(round->evictions);
    wait = std::chrono::seconds(1);
  }
  REQUIRE(calls == std::vector<int>{2, 2, 2, 1});
  api.Finish();
  REQUIRE(drain.Round()->done());
  int total = 0;
  for (const auto& entry : api.evictions()) total += entry.second;
  REQUIRE(total == 5 + 1 + 7);  // 2.6 calls a pod, refusals included
}

TEST_CASE("a budget that allows one at a time: one pod goes, the next once it is gone") {
  FakeNodeApi api;
  FakeClock clock;
  api.AddPod("default", "web-1", 1);
  api.AddPod("default", "web-2", 0);
  PodDrain drain(api, clock, DrainOptions{});
  auto first = drain.Round();
  REQUIRE(first->left.size() == 2);
  REQUIRE(first->blocked.find("default/web-2") == 0);
  REQUIRE(first->next == kDrainQuickLook);  // web-1 evicted: looked for again soon
  api.Finish();
  api.SetBudget("default/web-2", 1);  // the replacement of web-1 is ready elsewhere
  clock.Advance(std::chrono::seconds(1));
  auto second = drain.Round();
  REQUIRE(second->evictions == 1);
  api.Finish();
  REQUIRE(drain.Round()->done());
}

PodOnNode PodNamed(const std::string& name) {
  PodOnNode pod;
  pod.namespace_name = "default";
  pod.name = name;
  pod.controlled = true;
  return pod;
}

TEST_CASE("as kubectl drain: a pod without a controller or with emptyDir data holds the drain, named, and "
          "nothing is evicted while it is there") {
  FakeNodeApi api;
  FakeClock clock;
  api.AddPod("default", "web-1");
  PodOnNode bare = PodNamed("bare");
  bare.controlled = false;
  api.AddPodAs(bare);
  PodOnNode cache = PodNamed("cache");
  cache.local_storage = true;
  api.AddPodAs(cache);
  PodDrain drain(api, clock, DrainOptions{});
  auto first = drain.Round();
  REQUIRE(first->evictions == 0);
  REQUIRE(first->left == std::vector<std::string>{"default/bare", "default/cache", "default/web-1"});
  REQUIRE(first->newly_blocked ==
          std::vector<std::string>{"default/bare: declares no controller, so nothing would bring it back (drain.force "
                                   "evicts it)",
                                   "default/cache: has emptyDir data, lost with it (drain.delete_emptydir_data "
                                   "evicts it)"});
  REQUIRE(first->blocked == first->newly_blocked[0] + "; and 1 more");
  REQUIRE(first->next == kDrainPoll);
  auto again = drain.Round();
  REQUIRE(again->newly_blocked.empty());  // each named once
  REQUIRE(again->evictions == 0);
  // A person deletes them: the drain goes on.
  api.RemovePod("default/bare");
  api.RemovePod("default/cache");
  auto going = drain.Round();
  REQUIRE(going->evictions == 1);
  REQUIRE(going->blocked.empty());
  REQUIRE(api.evictions() == std::map<std::string, int>{{"default/web-1", 1}});
}

TEST_CASE("drain.force and drain.delete_emptydir_data evict those pods, as kubectl's flags do") {
  FakeNodeApi api;
  FakeClock clock;
  PodOnNode bare = PodNamed("bare");
  bare.controlled = false;
  bare.local_storage = true;
  api.AddPodAs(bare);
  DrainOptions only_force;
  only_force.force = true;
  REQUIRE(PodDrain(api, clock, only_force).Round()->evictions == 0);  // its emptyDir still holds it
  DrainOptions both = only_force;
  both.delete_emptydir_data = true;
  PodDrain drain(api, clock, both);
  REQUIRE(drain.Round()->evictions == 1);
  api.Finish();
  REQUIRE(drain.Round()->done());
}

TEST_CASE("the drain waits for the pods there when it started: a replacement that tolerates the cordon is "
          "not evicted, one that does not is") {
  FakeNodeApi api;
  FakeClock clock;
  PodOnNode op = PodNamed("operator");
  op.tolerates_cordon = true;
  api.AddPodAs(op);
  PodDrain drain(api, clock, DrainOptions{});
  REQUIRE(drain.Round()->evictions == 1);  // there at the start: evicted, tolerating or not
  api.Finish();
  api.AddPodAs(op);  // its replacement, the same name, placed here again despite the cordon
  auto round = drain.Round();
  REQUIRE(round->done());
  REQUIRE(round->evictions == 0);
  api.AddPod("default", "pinned");  // bound here by name, without the toleration
  auto pinned = drain.Round();
  REQUIRE(pinned->left == std::vector<std::string>{"default/pinned"});
  REQUIRE(pinned->evictions == 1);
  REQUIRE(api.evictions() == std::map<std::string, int>{{"default/operator", 1}, {"default/pinned", 1}});
}

TEST_CASE("a drain resumed after a restart takes the pods its record left as those there at its start") {
  FakeNodeApi api;
  FakeClock clock;
  PodOnNode web = PodNamed("web-2");
  web.tolerates_cordon = true;
  api.AddPodAs(web);
  PodOnNode op = PodNamed("operator");  // a replacement that came while the agent was away
  op.tolerates_cordon = true;
  api.AddPodAs(op);
  DrainOptions resumed;
  resumed.resumed_left = std::set<std::string>{"default/web-2"};
  PodDrain drain(api, clock, resumed);
  auto round = drain.Round();
  REQUIRE(round->left == std::vector<std::string>{"default/web-2"});
  REQUIRE(api.evictions() == std::map<std::string, int>{{"default/web-2", 1}});
}

}  // namespace
}  // namespace nodehook
