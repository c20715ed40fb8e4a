#include <catch2/catch.hpp>

#include <fstream>

#include "agent/nodework/node_cordon.h"
#include "agent/nodework/node_steps.h"
#include "agent/nodework/retired_node_steps.h"
#include "storage/sqlite_state_store.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_node_api.h"
#include "test/fakes/fake_runner.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

using std::chrono::seconds;

// The RolloutGate's side: inside (a slot held) unless told otherwise; records what it is told.
// `stopped` stands for a pause, a hold, a halt or a closed window: new work waits (Admit), work
// under way goes on (GoOn).
class FakeGate final : public RolloutSteps {
 public:
  bool inside = true;
  bool stopped = false;
  int admits = 0, go_ons = 0;
  std::vector<std::string> calls;
  std::vector<std::pair<NodeStep, Duration>> shown;
  int refuse_shows = 0;  // the next ShowStep calls that fail (the slot write refused)
  const std::vector<std::string>& Reasons() const override { return reasons_; }
  GateEntry Admit(const ObjectMeta&, const std::string&, const ObjectFacts*) override {
    ++admits;
    return inside && !stopped ? GateEntry::Inside() : GateEntry::Wait(seconds(1));
  }
  GateEntry GoOn(const ObjectMeta&, const std::string&, const ObjectFacts*) override {
    ++go_ons;
    return inside ? GateEntry::Inside() : GateEntry::Wait(seconds(1));
  }
  HookSpec Prepare(const HookSpec& hook) const override { return hook; }
  bool LostSlot(const ObjectMeta&) const override { return false; }
  std::optional<Duration> AfterHook(const ObjectMeta&, const std::string&, bool) override { return std::nullopt; }
  const HookSpec* Verify() const override { return nullptr; }
  void Verifying(const ObjectMeta&, const std::string&) override {}
  bool ShowStep(const ObjectMeta&, NodeStep step, const std::string&, Duration hold) override {
    if (refuse_shows > 0) {
      --refuse_shows;
      return false;
    }
    shown.emplace_back(step, hold);
    return true;
  }
  std::optional<Duration> Succeeded(const ResourceRef&, const ObjectMeta&, const std::string& state,
                                    const std::string&) override {
    calls.push_back("succeeded " + state);
    return std::nullopt;
  }
  void Failed(const ResourceRef&, const ObjectMeta&, const std::string& state, int retries, bool permanent,
              const std::string&) override {
    calls.push_back("failed " + state + (permanent ? " permanent" : " " + std::to_string(retries)));
  }
  void Gone(const ObjectMeta&) override { calls.emplace_back("gone"); }

 private:
  std::vector<std::string> reasons_{"create", "update"};
};

class Reasons final : public EventRecorder {
 public:
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void NodeStep(const ResourceRef&, const ObjectMeta&, const std::string& reason, bool, const std::string& note) override {
    seen.push_back(reason + ": " + note);
  }
  void NodeEvent(const ObjectMeta& node, const std::string& reason, bool, const std::string& note) override {
    seen.push_back("Node " + node.name + " " + node.uid + " " + reason + ": " + note);
  }
  bool Saw(const std::string& prefix) const {
    for (const auto& s : seen) {
      if (s.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
  std::vector<std::string> seen;
};

WatchedResource Resource(OnFailure on_failure = OnFailure::kKeepCordoned, seconds soak = seconds(0)) {
  WatchedResource r;
  r.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
  RolloutPolicy policy;
  policy.cordon = true;
  policy.drain = DrainPolicy{seconds(60), "", 0};
  policy.reboot = RebootPolicy{{"/sbin/reboot"}, seconds(300)};
  policy.on_failure = on_failure;
  policy.soak = soak;
  r.rollout = policy;
  return r;
}

struct World {
  explicit World(OnFailure on_failure = OnFailure::kKeepCordoned, seconds soak = seconds(0))
      : resource(Resource(on_failure, soak)),
        store(std::move(SqliteStateStore::Open(dir.File("state.db"), "node-a", {})).value()) {
    SetBootId("boot-1");
    object.uid = "u1";
    object.namespace_name = "default";
    object.name = "kernel";
  }
  // A new agent process on the same state file, Node and pods.
  std::unique_ptr<NodeSteps> Start() {
    NodeStepsOptions options;
    options.rid = "abcdef0123";
    options.self_pod = "nodehook/agent-a";
    options.boot_id_file = dir.File("boot_id");
    return std::make_unique<NodeSteps>(resource, gate, api, *store, runner, clock, events, options);
  }
  void SetBootId(const std::string& id) { std::ofstream(dir.File("boot_id")) << id << "\n"; }
  // Started, with a drain that cannot finish (db-0's budget allows nothing): state s1 has cordoned
  // the node and waits in its drain.
  std::unique_ptr<NodeSteps> BlockedDrain() {
    api.AddPod("default", "db-0", 0);
    auto steps = Start();
    REQUIRE(steps->Admit(object, "s1", nullptr).kind == GateEntry::Kind::kWait);
    return steps;
  }
  // Started, with a drain that never finishes (db-0's budget allows nothing) timed out: the node
  // failed state s1 (kept cordoned or not, as on_failure says).
  std::unique_ptr<NodeSteps> FailedDrain() {
    api.AddPod("default", "db-0", 0);
    auto steps = Start();
    REQUIRE(Follow(*steps, "s1", seconds(61)).kind == GateEntry::Kind::kFailed);
    return steps;
  }
  // Looks at the steps as the queue does, each look after the wait the one before asked for,
  // until `span` of the clock's time has passed or a look ends the waiting; returns that look.
  GateEntry Follow(NodeSteps& steps, const std::string& state, Duration span) {
    const TimePoint end = clock.Now() + span;
    GateEntry entry = steps.Admit(object, state, nullptr);
    while (entry.kind == GateEntry::Kind::kWait && clock.Now() < end) {
      clock.Advance(entry.wait);
      entry = steps.Admit(object, state, nullptr);
    }
    return entry;
  }
  int64_t SpentMs() { return (*store->GetNodeSteps("u1"))->step_spent_ms; }
  std::string Step() {
    auto rec = store->GetNodeSteps("u1");
    return rec.ok() && *rec ? (*rec)->step : "";
  }
  bool Ours(const std::string& uid = "u1") const {
    return api.node().unschedulable && api.node().marks.count(MarkOf(uid)) > 0;
  }
  static std::string MarkOf(const std::string& uid) { return CordonMarkKey("abcdef0123", uid); }

  TempDir dir;
  WatchedResource resource;
  std::unique_ptr<SqliteStateStore> store;
  FakeGate gate;
  FakeNodeApi api;
  FakeRunner runner;
  FakeClock clock;
  Reasons events;
  ObjectMeta object;
};

TEST_CASE("the node is cordoned and drained before the hook, and uncordoned after its success") {
  World w;
  w.api.AddPod("default", "web-1");
  w.api.AddPod("default", "web-2");
  auto steps = w.Start();
  GateEntry first = steps->Admit(w.object, "s1", nullptr);
  REQUIRE(first.kind == GateEntry::Kind::kWait);
  REQUIRE(w.Ours());
  REQUIRE(w.Step() == "draining");
  REQUIRE(w.gate.shown.back().first == NodeStep::kDraining);
  w.api.Finish();
  GateEntry inside = steps->Admit(w.object, "s1", nullptr);
  REQUIRE(inside.kind == GateEntry::Kind::kInside);
  REQUIRE(inside.resume == ResumeAt::kHook);
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  REQUIRE(w.Step() == "verifying");
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.api.node().marks.empty());
  REQUIRE(w.gate.calls == std::vector<std::string>{"succeeded s1"});
  REQUIRE(w.Step().empty());
  REQUIRE(w.api.evictions() == std::map<std::string, int>{{"default/web-1", 1}, {"default/web-2", 1}});
}

TEST_CASE("no step starts before the node holds a slot") {
  World w;
  w.gate.inside = false;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.api.node_writes() == 0);
  REQUIRE(w.Step().empty());
}

TEST_CASE("an agent killed during the drain resumes it: no second cordon, no eviction repeated") {
  World w;
  w.api.AddPod("default", "web-1");
  w.api.AddPod("default", "db-0", 0);
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  const int cordon_writes = w.api.node_writes();
  steps.reset();  // killed
  auto again = w.Start();
  REQUIRE(again->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.api.node_writes() == cordon_writes);
  REQUIRE(w.api.evictions().at("default/web-1") == 1);  // terminating: waited for
  auto rec = *w.store->GetNodeSteps("u1");
  REQUIRE(rec->pods_left == "default/db-0\ndefault/web-1\n");
  REQUIRE(rec->evictions == 3);
  REQUIRE(rec->message.find("default/db-0: Cannot evict") == 0);
  REQUIRE(w.events.Saw("NodeDrainBlocked: drain blocked: default/db-0"));
  // On the Node too, for kubectl describe node.
  REQUIRE(w.events.Saw("Node node-a node-uid NodeDrainBlocked: drain for default/kernel blocked: default/db-0"));
}

TEST_CASE("a stale mark on the schedulable node is removed at the cordon, said on the Node, and the node "
          "is uncordoned at the end") {
  World w;
  const std::string stale = CordonMarkKey("0000000000", "old-uid");
  w.api.SetMark(stale, R"({"object":"default/old"})");  // kubectl uncordon left it
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);  // no pods
  REQUIRE(w.api.node().marks.count(stale) == 0);
  REQUIRE(w.events.Saw("NodeStaleMarksRemoved: removed 1 stale cordon mark(s)"));
  REQUIRE(w.events.Saw("Node node-a node-uid NodeStaleMarksRemoved: removed 1"));
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.api.node().marks.empty());
}

TEST_CASE("a pod kubectl drain would refuse holds the drain until a person removes it, named on the Node") {
  World w;
  PodOnNode bare;
  bare.namespace_name = "default";
  bare.name = "bare";
  w.api.AddPodAs(bare);
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.api.evictions().empty());
  REQUIRE(w.events.Saw("Node node-a node-uid NodeDrainBlocked: drain for default/kernel blocked: default/bare: "
                       "declares no controller"));
  REQUIRE((*w.store->GetNodeSteps("u1"))->message.find("default/bare: declares no controller") == 0);
  w.api.RemovePod("default/bare");
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
}

TEST_CASE("a drain that times out fails the node; it stays cordoned, and the next state gives it back") {
  World w;
  w.api.AddPod("default", "db-0", 0);
  auto steps = w.Start();
  REQUIRE(w.Follow(*steps, "s1", seconds(55)).kind == GateEntry::Kind::kWait);
  GateEntry failed = w.Follow(*steps, "s1", seconds(10));
  REQUIRE(failed.kind == GateEntry::Kind::kFailed);
  REQUIRE(failed.failure.find("drain timed out after 60.0s; 1 pod left: default/db-0") == 0);
  REQUIRE(failed.failure.find("disruption budget") != std::string::npos);
  REQUIRE(w.gate.calls == std::vector<std::string>{"failed s1 permanent"});
  REQUIRE(w.Ours());
  REQUIRE(w.Step() == "failed");
  REQUIRE(w.events.Saw("NodeKeptCordoned"));
  // The mark says the node failed (an uninstall leaves such a cordon for a person).
  const std::string key = steps->MarkKey("u1");
  REQUIRE(w.api.node().marks.at(key).find(R"("state":"s1","failed":"drain timed out after 60.0s)") !=
          std::string::npos);
  // The object changes; its new state finds the node cordoned under this rollout's mark.
  w.api.SetBudget("default/db-0", 1);
  REQUIRE(steps->Admit(w.object, "s2", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.api.node().marks.at(key) == NodeSteps::MarkValue(w.object, "s2"));
  w.api.Finish();
  REQUIRE(steps->Admit(w.object, "s2", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s2", false) == std::nullopt);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s2", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);
}

TEST_CASE("on_failure uncordon gives the node back when it fails") {
  World w(OnFailure::kUncordon);
  auto steps = w.FailedDrain();
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.Step().empty());
}

TEST_CASE("a hook out of retries fails the node: kept cordoned; a failed verify runs the hook again") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  steps->Failed(w.resource.ref, w.object, "s1", 1, false, "verify: exited 1");
  REQUIRE(w.Step() == "running");
  REQUIRE(steps->Admit(w.object, "s1", nullptr).resume == ResumeAt::kHook);
  steps->Failed(w.resource.ref, w.object, "s1", 3, false, "exited 1");
  REQUIRE(w.Step() == "failed");
  REQUIRE(w.Ours());
}

TEST_CASE("a node someone else cordoned before the steps stays cordoned after them") {
  World w;
  w.api.SetUnschedulable(true);
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(w.api.node().marks.empty());
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE(w.api.node().unschedulable);
  REQUIRE(w.api.node_writes() == 0);
  REQUIRE(w.events.Saw("NodeCordonKept"));
}

TEST_CASE("an uncordon by someone during the drain is theirs: the node is never cordoned again by these steps") {
  World w;
  w.api.AddPod("default", "web-1");
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  w.api.SetUnschedulable(false);
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.events.Saw("NodeCordonUndone"));
  w.api.Finish();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  w.api.SetUnschedulable(true);  // and cordoned again by them, for their own reasons
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE(w.api.node().unschedulable);
}

TEST_CASE("a reboot is recorded, run once, held in the slot, and proven by a new boot ID the Node reports") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  auto wait = steps->AfterHook(w.object, "s1", true);
  REQUIRE(wait.has_value());
  REQUIRE(w.runner.call_count() == 1);
  REQUIRE(w.runner.calls()[0].argv == std::vector<std::string>{"/sbin/reboot"});
  REQUIRE(w.gate.shown.back() == std::make_pair(NodeStep::kRebooting, Duration(seconds(300))));
  auto rec = *w.store->GetNodeSteps("u1");
  REQUIRE(rec->step == "rebooting");
  REQUIRE(rec->boot_id == "boot-1");
  // The agent restarts without a reboot (a crash): not taken for one, and not rebooted again.
  // Of its 30 s away, the reboot's timeout counts one poll (2 s): the wait a look may be late.
  steps = w.Start();
  w.clock.Advance(seconds(30));
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.runner.call_count() == 1);
  REQUIRE(w.gate.shown.back() == std::make_pair(NodeStep::kRebooting, Duration(seconds(298))));
  // The node came back with a new boot ID; the kubelet has not reported it yet.
  w.SetBootId("boot-2");
  steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  w.api.SetNodeBootId("boot-2");
  GateEntry verified = steps->Admit(w.object, "s1", nullptr);
  REQUIRE(verified.kind == GateEntry::Kind::kInside);
  REQUIRE(verified.resume == ResumeAt::kVerify);
  REQUIRE(w.events.Saw("NodeRebooted: rebooted: boot ID boot-1 -> boot-2"));
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.runner.call_count() == 1);
}

TEST_CASE("no reboot runs before the slot is held through it; a restart then runs it, once") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  w.gate.refuse_shows = 2;  // the slot write refused twice: the slot would lapse while the node is down
  REQUIRE(steps->AfterHook(w.object, "s1", true).has_value());
  REQUIRE(w.runner.call_count() == 0);
  auto rec = *w.store->GetNodeSteps("u1");
  REQUIRE(rec->step == "rebooting");
  REQUIRE_FALSE(rec->reboot_started);
  w.clock.Advance(seconds(10));
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.runner.call_count() == 0);
  // The agent restarts; the slot can be held now: the reboot starts, held for what is left. Each
  // 10 s gap counted what the look before asked for, plus a poll: 0 + 2 s, then 2 + 2 s.
  steps = w.Start();
  w.clock.Advance(seconds(10));
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.runner.call_count() == 1);
  REQUIRE(w.gate.shown.back() == std::make_pair(NodeStep::kRebooting, Duration(seconds(294))));
  REQUIRE((*w.store->GetNodeSteps("u1"))->reboot_started);
  steps = w.Start();
  w.clock.Advance(seconds(10));
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.runner.call_count() == 1);
}

TEST_CASE("a reboot that never happens fails the node at the reboot's timeout") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", true).has_value());
  w.clock.Advance(seconds(2));  // the wait AfterHook asked for
  REQUIRE(w.Follow(*steps, "s1", seconds(296)).kind == GateEntry::Kind::kWait);
  REQUIRE(w.SpentMs() == 298'000);
  GateEntry failed = w.Follow(*steps, "s1", seconds(2));
  REQUIRE(failed.kind == GateEntry::Kind::kFailed);
  REQUIRE(failed.failure == "no reboot within 300.0s: the boot ID is still boot-1");
  REQUIRE(w.gate.calls == std::vector<std::string>{"failed s1 permanent"});
  REQUIRE(w.Ours());
}

TEST_CASE("a drain's timeout counts time inside the slot only: an agent away or a node outside its slot adds "
          "one wait at most") {
  World w;
  w.api.AddPod("default", "db-0", 0);  // its budget allows nothing: the drain waits
  auto steps = w.Start();
  REQUIRE(w.Follow(*steps, "s1", seconds(20)).kind == GateEntry::Kind::kWait);
  const int64_t before = w.SpentMs();
  REQUIRE(before >= 20'000);
  REQUIRE(before < 32'000);
  // The agent is away for 10 minutes (a DaemonSet update of nodehook itself); it comes back to
  // the drain with the time it had left, less the one wait it had asked for (and a poll).
  steps = w.Start();
  w.clock.Advance(std::chrono::minutes(10));
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.SpentMs() <= before + 12'000);
  // The node loses its slot for 10 minutes (GoOn waits outside it): nothing more is counted.
  w.gate.inside = false;
  const int64_t outside = w.SpentMs();
  REQUIRE(w.Follow(*steps, "s1", std::chrono::minutes(10)).kind == GateEntry::Kind::kWait);
  REQUIRE(w.SpentMs() == outside);
  w.gate.inside = true;
  GateEntry failed = w.Follow(*steps, "s1", seconds(60));
  REQUIRE(failed.kind == GateEntry::Kind::kFailed);
  REQUIRE(failed.failure.find("drain timed out after 60.0s") == 0);
}

TEST_CASE("a reboot's timeout does not count an agent away while the node did not reboot") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", true).has_value());
  REQUIRE(w.runner.call_count() == 1);
  // The reboot command did nothing, and the agent's pod is replaced after an hour away.
  steps = w.Start();
  w.clock.Advance(std::chrono::hours(1));
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.SpentMs() == 2'000);
  REQUIRE(w.runner.call_count() == 1);  // never run twice
  REQUIRE(w.Follow(*steps, "s1", seconds(290)).kind == GateEntry::Kind::kWait);
  GateEntry failed = w.Follow(*steps, "s1", seconds(10));
  REQUIRE(failed.kind == GateEntry::Kind::kFailed);
  REQUIRE(failed.failure == "no reboot within 300.0s: the boot ID is still boot-1");
}

TEST_CASE("an agent killed between the hook and the uncordon resumes at the uncordon") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  w.api.FailGets(true);  // the uncordon cannot be done now
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok").has_value());
  REQUIRE(w.gate.calls.empty());
  REQUIRE(w.Step() == "uncordoning");
  w.api.FailGets(false);
  steps = w.Start();
  GateEntry resumed = steps->Admit(w.object, "s1", nullptr);
  REQUIRE(resumed.resume == ResumeAt::kFinish);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.gate.calls == std::vector<std::string>{"succeeded s1"});
}

TEST_CASE("with a soak: verify, soak with the node still cordoned, uncordon just before the slot frees") {
  World w(OnFailure::kKeepCordoned, seconds(60));
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  // The result is written and the slot soaks (the gate's); the node stays cordoned.
  auto soak = steps->Succeeded(w.resource.ref, w.object, "s1", "ok");
  REQUIRE(soak == Duration(seconds(55)));  // 60 s less a third of the 15-s slot lease
  REQUIRE(w.gate.calls == std::vector<std::string>{"succeeded s1"});
  REQUIRE(w.Ours());
  REQUIRE(w.Step() == "soaking");
  // Killed during the soak: the new agent waits out the rest, without asking the gate again.
  steps = w.Start();
  w.clock.Advance(seconds(30));
  GateEntry waiting = steps->Admit(w.object, "s1", nullptr);
  REQUIRE(waiting.kind == GateEntry::Kind::kWait);
  REQUIRE(waiting.wait == Duration(seconds(25)));
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == Duration(seconds(25)));
  REQUIRE(w.Ours());
  w.clock.Advance(seconds(25));
  GateEntry due = steps->Admit(w.object, "s1", nullptr);
  REQUIRE(due.resume == ResumeAt::kFinish);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.gate.calls == std::vector<std::string>{"succeeded s1"});  // the result once
  REQUIRE(w.Step().empty());
}

TEST_CASE("a node one object left cordoned stays so while another object's steps come and go") {
  World w;
  auto steps = w.FailedDrain();  // kept cordoned
  ObjectMeta other = w.object;
  other.uid = "u2";
  other.name = "firmware";
  w.api.SetBudget("default/db-0", 1);
  REQUIRE(steps->Admit(other, "t1", nullptr).kind == GateEntry::Kind::kWait);
  w.api.Finish();
  REQUIRE(steps->Admit(other, "t1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(w.Ours("u2"));
  REQUIRE(steps->AfterHook(other, "t1", false) == std::nullopt);
  REQUIRE(steps->Succeeded(w.resource.ref, other, "t1", "ok") == std::nullopt);
  REQUIRE(w.Ours("u1"));  // the failed object's mark holds the cordon for a person
  REQUIRE(w.api.node().marks.count(w.MarkOf("u2")) == 0);
  REQUIRE(w.MarkOf("u1").rfind("nodehook.io/cordoned-abcdef0123.", 0) == 0);
  REQUIRE(w.MarkOf("u1").size() <= std::string("nodehook.io/").size() + 63);
}

TEST_CASE("a config that no longer drains or reboots ends those steps instead of failing") {
  World w;
  w.api.AddPod("default", "web-1");
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.Step() == "draining");
  w.resource.rollout->drain.reset();  // the agent restarts with the new config
  steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).resume == ResumeAt::kHook);
  REQUIRE(steps->AfterHook(w.object, "s1", true).has_value());
  REQUIRE(w.Step() == "rebooting");
  w.resource.rollout->reboot.reset();
  steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).resume == ResumeAt::kVerify);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == std::nullopt);
  REQUIRE_FALSE(w.api.node().unschedulable);  // the cordon it took is given back
}

TEST_CASE("an object deleted during its steps gives the cordon back") {
  World w;
  w.api.AddPod("default", "web-1");
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  steps->Gone(w.object);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.Step().empty());
  REQUIRE(w.gate.calls == std::vector<std::string>{"gone"});
}

TEST_CASE("an object deleted while its cordon cannot be given back is recorded for the next start") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  w.api.FailGets(true);
  steps->Gone(w.object);
  REQUIRE(w.Step() == "deleted");
  w.api.FailGets(false);
  REQUIRE(w.Ours());
  RetiredStepsOutcome outcome = GiveBackRetiredSteps(*w.store, w.api, {ResourceScope(w.resource.ref)});
  REQUIRE(outcome.given_back == 1);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.Step().empty());
}

// The object as its facts say when paused; `stop_nodes`: with the value that stops the nodes inside.
ObjectFacts Paused(bool stop_nodes) {
  ObjectFacts facts;
  facts.rollout_paused = true;
  facts.rollout_stop_nodes = stop_nodes;
  return facts;
}

TEST_CASE("a pause during the drain stops no work under way: the node keeps its slot and finishes its steps") {
  World w;
  auto steps = w.BlockedDrain();
  REQUIRE(w.Step() == "draining");
  REQUIRE(w.gate.admits == 1);
  w.gate.stopped = true;  // paused (or held, halted, out of its windows)
  const ObjectFacts paused = Paused(false);
  w.clock.Advance(seconds(1));
  REQUIRE(steps->Admit(w.object, "s1", &paused).kind == GateEntry::Kind::kWait);  // still draining
  REQUIRE(w.gate.go_ons == 1);
  REQUIRE(w.gate.admits == 1);
  w.api.SetBudget("default/db-0", 1);
  w.clock.Advance(seconds(2));
  REQUIRE(steps->Admit(w.object, "s1", &paused).kind == GateEntry::Kind::kWait);  // evicted: waited for
  w.api.Finish();
  GateEntry inside = steps->Admit(w.object, "s1", &paused);
  REQUIRE(inside.kind == GateEntry::Kind::kInside);
  REQUIRE(inside.resume == ResumeAt::kHook);
  // A retry of the hook goes on too: it runs between the node's cordon and its uncordon.
  steps->Failed(w.resource.ref, w.object, "s1", 1, false, "exit 1");
  REQUIRE(steps->Admit(w.object, "s1", &paused).kind == GateEntry::Kind::kInside);
  REQUIRE(w.gate.admits == 1);
  REQUIRE(w.Ours());
}

TEST_CASE("the operator's stop-nodes ends a drain under way: the cordon given back, the steps forgotten") {
  World w;
  auto steps = w.BlockedDrain();
  REQUIRE(w.Ours());
  w.gate.stopped = true;
  const ObjectFacts stop = Paused(true);
  REQUIRE(steps->Admit(w.object, "s1", &stop).kind == GateEntry::Kind::kWait);
  REQUIRE(w.gate.go_ons == 0);  // asked as new work: the gate gives the slot up
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.api.node().marks.empty());
  REQUIRE(w.Step().empty());
  REQUIRE(w.events.Saw("NodeStepsEnded: steps ended while draining: the operator stopped the rollout's nodes"));
  // Resumed later: the steps start over from the cordon.
  w.gate.stopped = false;
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE(w.Ours());
  REQUIRE(w.Step() == "draining");
}

TEST_CASE("stop-nodes leaves work past the hook to finish: a verify under way goes on") {
  World w;
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  REQUIRE(w.Step() == "verifying");
  w.gate.stopped = true;
  const ObjectFacts stop = Paused(true);
  GateEntry going_on = steps->Admit(w.object, "s1", &stop);
  REQUIRE(going_on.kind == GateEntry::Kind::kInside);
  REQUIRE(going_on.resume == ResumeAt::kVerify);
  REQUIRE(w.Ours());
}

TEST_CASE("an object changed during the drain whose newer state may not start here ends the older steps") {
  World w;
  auto steps = w.BlockedDrain();
  REQUIRE(w.Ours());
  w.gate.stopped = true;  // s2 waits (its canaries, a pause): the gate gives s1's slot up
  REQUIRE(steps->Admit(w.object, "s2", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.Step().empty());
  REQUIRE(w.events.Saw("NodeStepsEnded: steps ended while draining: the object changed"));
}

TEST_CASE("an object changed during the drain whose newer state is admitted takes the cordon over") {
  World w;
  auto steps = w.BlockedDrain();
  const int writes = w.api.node_writes();
  REQUIRE(steps->Admit(w.object, "s2", nullptr).kind == GateEntry::Kind::kWait);  // draining for s2
  REQUIRE(w.Ours());
  REQUIRE(w.api.node().marks.at(w.MarkOf("u1")).find("\"state\":\"s2\"") != std::string::npos);
  REQUIRE(w.api.node_writes() == writes + 1);  // the mark rewritten, never uncordoned in between
  REQUIRE((*w.store->GetNodeSteps("u1"))->state == "s2");
}

TEST_CASE("an object changed while the node soaks: the older state's uncordon runs at the soak's end, then "
          "the newer state starts") {
  World w(OnFailure::kKeepCordoned, seconds(60));
  auto steps = w.Start();
  REQUIRE(steps->Admit(w.object, "s1", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(steps->AfterHook(w.object, "s1", false) == std::nullopt);
  REQUIRE(steps->Succeeded(w.resource.ref, w.object, "s1", "ok") == Duration(seconds(55)));
  w.clock.Advance(seconds(10));
  GateEntry waiting = steps->Admit(w.object, "s2", nullptr);
  REQUIRE(waiting.kind == GateEntry::Kind::kWait);
  REQUIRE(waiting.wait == Duration(seconds(45)));
  REQUIRE(w.Ours());
  w.gate.stopped = true;  // s2 may not start yet (paused): the node is given back all the same
  w.clock.Advance(seconds(45));
  REQUIRE(steps->Admit(w.object, "s2", nullptr).kind == GateEntry::Kind::kWait);
  REQUIRE_FALSE(w.api.node().unschedulable);
  REQUIRE(w.api.node().marks.empty());
  REQUIRE(w.Step().empty());
  w.gate.stopped = false;
  REQUIRE(steps->Admit(w.object, "s2", nullptr).kind == GateEntry::Kind::kInside);
  REQUIRE(w.Ours());
  REQUIRE((*w.store->GetNodeSteps("u1"))->state == "s2");
}

}  // namespace
}  // namespace nodehook
