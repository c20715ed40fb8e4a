// RolloutGate and RolloutCoordinator against one in-memory API (InMemoryApi) shared by several
// nodes' gates, each with its own board fed from the API's observers after every write (a watch
// that is never late) with the Leases labelled for its node, and a coordinator's board with all
// of them: slots granted at most max_nodes at once, soaked or released, lost when they expire
// unrenewed, taken back after a restart without a second one, failures counted and halts posted
// once.
#include <catch2/catch.hpp>

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "agent/rollout/coordinator/rollout_coordinator.h"
#include "agent/rollout/node/rollout_gate.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fixed_server_clock.h"
#include "test/fakes/in_memory_api.h"

namespace nodehook {
namespace {

// Boards fed as their watches would be, from an InMemoryApi's changes: the Leases of one rollout
// (by the rid in their names); with a node, only those labelled for it (its node Lease, the slots
// that name it).
class BoardFeed {
 public:
  explicit BoardFeed(InMemoryApi& api) : api_(api) {
    api_.Observe([this](const InMemoryApi::Change& change) { Send(change); });
  }
  void Attach(RolloutBoard* board, const std::string& rid, const std::string& node = "") {
    boards_.push_back(Fed{board, "nodehook-rollout-" + rid + "-", node, {}, false, {}});
    ListTo(boards_.back());
  }
  // The watches of a node's boards bring nothing until Resume (its agent is stopped: SIGSTOP);
  // then they bring every change since, in order; or, with Relist, they come back too late to
  // resume and list instead.
  void Pause(const std::string& node) {
    for (auto& fed : boards_) fed.paused = fed.paused || fed.node == node;
  }
  void Resume(const std::string& node) {
    for (auto& fed : boards_) {
      if (fed.node != node || !fed.paused) continue;
      fed.paused = false;
      for (const InMemoryApi::Change& change : std::exchange(fed.backlog, {})) SendTo(fed, change);
    }
  }
  void Relist(const std::string& node) {
    for (auto& fed : boards_) {
      if (fed.node != node) continue;
      fed.paused = false;
      fed.backlog.clear();
      ListTo(fed);
    }
  }

 private:
  struct Fed {
    RolloutBoard* board;
    std::string prefix;
    std::string node;
    std::set<std::string> seen;  // the Leases this board was sent and not sent away
    bool paused;
    std::vector<InMemoryApi::Change> backlog;  // while paused
  };
  void Send(const InMemoryApi::Change& change) {
    for (auto& fed : boards_) {
      if (change.object->meta.name.rfind(fed.prefix, 0) != 0) continue;
      if (fed.paused) {
        fed.backlog.push_back(change);
      } else {
        SendTo(fed, change);
      }
    }
  }
  // As a label-selected watch sends it: the change to a board it matches, and a deletion to a
  // board it no longer matches (a slot granted to another node) or that saw the deleted Lease.
  static void SendTo(Fed& fed, const InMemoryApi::Change& change) {
    const std::string& name = change.object->meta.name;
    if (!change.deleted && (fed.node.empty() || change.holder == fed.node)) {
      fed.seen.insert(name);
      fed.board->OnObject(change.object);
    } else if (fed.seen.erase(name) > 0) {
      fed.board->OnDeleted(change.object);
    }
  }
  // A list, as a watch makes when it starts.
  void ListTo(Fed& fed) {
    std::vector<ObjectPtr> items;
    fed.seen.clear();
    for (const KubeObject& object : api_.Objects()) {
      const std::string& name = object.meta.name;
      if (name.rfind(fed.prefix, 0) != 0) continue;
      if (!fed.node.empty() && ParseRolloutLease(object.json)->holder != fed.node) continue;
      items.push_back(std::make_shared<const KubeObject>(object));
      fed.seen.insert(name);
    }
    fed.board->OnListed(items, {});
  }

  InMemoryApi& api_;
  std::vector<Fed> boards_;
};

class Events final : public EventRecorder {
 public:
  void PermanentFailure(const ResourceRef&, const ObjectMeta&, const std::string&, const std::string&) override {}
  void Succeeded(const ResourceRef&, const ObjectMeta&, const std::string&) override {}
  void RolloutReached(const ResourceRef&, const ObjectMeta&, const std::string& reason, const std::string&, bool,
                      const std::string& note) override {
    posted.push_back(reason + ": " + note);
  }
  std::vector<std::string> posted;
};

// A board that another node's take reaches right after this node has read its view: two nodes
// asking for one freed slot at the same moment.
class LateBoard final : public BoardReader {
 public:
  explicit LateBoard(const RolloutBoard& board) : board_(board) {}
  BoardView View() const override {
    BoardView view = board_.View();
    if (auto then = std::exchange(after_view, nullptr)) then();
    return view;
  }
  RolloutLease Lease(const std::string& name) const override { return board_.Lease(name); }
  bool Deleted(const std::string& name) const override { return board_.Deleted(name); }
  uint64_t departures() const override { return board_.departures(); }
  bool listed() const override { return board_.listed(); }
  uint64_t lists() const override { return board_.lists(); }
  mutable std::function<void()> after_view;

 private:
  const RolloutBoard& board_;
};

struct Fleet {
  // With a gate for each of `nodes` (more come with Node()).
  explicit Fleet(RolloutPolicy policy, std::initializer_list<const char*> nodes = {}) {
    resource.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
    resource.rollout = policy;
    api.KeepHistory(false);  // a node Lease of 2,000 results, written 2,000 times
    for (const char* node : nodes) Node(node);
  }
  RolloutGate& Node(const std::string& name) {
    // A restarted node gets a fresh board; the old one stays attached (and alive) unread.
    boards.push_back(std::make_unique<RolloutBoard>(clock));
    feed.Attach(boards.back().get(), RolloutIdOf(resource.ref), name);
    RolloutGate& gate = Gate(name, *boards.back());
    // The board's notices of slots named for the node, as the agent wires them (mode_set.cc); to
    // the node's gate now (a restarted node's old board, still attached, tells the new one).
    boards.back()->SetOnSlotNamed([this, name](const RolloutLease& slot) { gates[name]->NoteGrant(slot); });
    return gate;
  }
  RolloutGate& Gate(const std::string& name, const BoardReader& board) {
    RolloutGateOptions options;
    options.node = name;
    options.namespace_name = "nodehook";
    options.presence = [this, name] { return presence[name]; };
    options.fleet_size = [this] { return fleet_size; };
    gates[name] = std::make_unique<RolloutGate>(resource, api, board, clock, server, options);
    REQUIRE(gates[name]->Register().ok());
    return *gates[name];
  }
  // The coordinator's board, with every Lease of the rollout; made on first use.
  RolloutBoard& CoordinatorBoard() {
    if (!coordinator_board) {
      coordinator_board = std::make_unique<RolloutBoard>(clock);
      feed.Attach(coordinator_board.get(), RolloutIdOf(resource.ref));
    }
    return *coordinator_board;
  }
  int Coordinate() {
    if (!coordinator) {
      coordinator = std::make_unique<RolloutCoordinator>(resource, api, server, events,
                                                         RolloutCoordinatorOptions{"nodehook", {}, [this] { return cordoned; }});
    }
    return coordinator->Round(CoordinatorBoard());
  }
  // A node asks; the coordinator judges the asks; the node asks again: nullopt when inside.
  std::optional<Duration> Ask(RolloutGate& node, const ObjectMeta& object, const std::string& state,
                              const ObjectFacts* facts = nullptr) {
    if (!node.Enter(object, state, facts)) return std::nullopt;
    Coordinate();
    return node.Enter(object, state, facts);
  }
  // A Lease as kept now (it must exist).
  RolloutLease Lease(const std::string& name) const { return *ParseRolloutLease(api.Find(name).value().json); }
  // Someone else's write that keeps the Lease's content (an annotation): a new resourceVersion.
  void Touch(const std::string& name) {
    const KubeObject object = api.Find(name).value();
    api.Put(object.meta.namespace_name, object.json);
  }
  // A Lease as someone wrote it before this test (an earlier version, another writer).
  void Seed(const RolloutLease& lease) { api.Put("nodehook", RolloutLeaseJson("nodehook", "rid", lease)); }
  // A slot granted to a node, as the coordinator writes it.
  void Grant(const std::string& name, int slot, const std::string& node, const std::string& uid,
             const std::string& state) {
    RolloutLease lease;
    lease.name = name;
    lease.kind = "slot";
    lease.holder = node;
    lease.lease_duration_seconds = 6;
    lease.slot = slot;
    lease.uid = uid;
    lease.state = state;
    Seed(lease);
  }
  int SlotsHeldBy(const std::string& node) const {
    int n = 0;
    for (const KubeObject& object : api.Objects()) {
      auto lease = ParseRolloutLease(object.json);
      n += lease->kind == "slot" && lease->holder == node;
    }
    return n;
  }
  WatchedResource resource;
  InMemoryApi api;  // the API server the gates and coordinators write to
  BoardFeed feed{api};
  FakeClock clock;
  FixedServerClock server{1'000'000};
  Events events;
  std::vector<std::unique_ptr<RolloutBoard>> boards;
  std::unique_ptr<RolloutBoard> coordinator_board;
  std::unique_ptr<RolloutCoordinator> coordinator;
  std::map<std::string, std::unique_ptr<RolloutGate>> gates;
  std::map<std::string, NodePresence> presence;  // each node's Node; unknown unless set
  int fleet_size = 0;  // as the coordinator's Lease says; 0: not known (no spread)
  std::map<std::string, std::string> cordoned;  // the Nodes the rollout keeps cordoned, as the coordinator sees them
};

ObjectMeta Widget() { return ObjectMeta{"u1", "ns", "w1", "7", false}; }

std::string Slot0(const Fleet& fleet) { return SlotLeaseName(RolloutId(fleet.resource.ref.Id()), 0); }

RolloutPolicy MaxNodes(int n) {
  RolloutPolicy p;
  p.max_nodes = NodeCount{n, false};
  p.slot_lease = std::chrono::seconds(6);
  return p;
}

// max_nodes 1 and three attempts before a failure counts: a node whose first attempt failed
// keeps the one slot for its retry.
RolloutPolicy RetriedInOneSlot() {
  RolloutPolicy p = MaxNodes(1);
  p.failure_after_retries = 3;
  return p;
}

void FailOnce(Fleet& fleet, RolloutGate& node, const ObjectMeta& object, const std::string& state) {
  REQUIRE_FALSE(fleet.Ask(node, object, state));
  node.Failed(fleet.resource.ref, object, state, 1, false, "broken");
}

// Nodes "a" and "b", with max_nodes `kMaxNodes`, have both asked for Widget() at "s1"; nothing is
// granted yet.
template <int kMaxNodes>
struct BothAsked {
  BothAsked() {
    REQUIRE(a.Enter(Widget(), "s1", nullptr));
    REQUIRE(b.Enter(Widget(), "s1", nullptr));
  }
  Fleet fleet{MaxNodes(kMaxNodes)};
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
};

// max_nodes 1 and two nodes; "a" went inside for Widget() at "s1": the one slot is a's.
struct SlotOfA {
  SlotOfA() { REQUIRE_FALSE(fleet.Ask(a, Widget(), "s1", nullptr)); }
  Fleet fleet{MaxNodes(1)};
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
};

}  // namespace

TEST_CASE("six nodes, max_nodes 2: two get a slot, a released slot lets the next one in") {
  Fleet fleet(MaxNodes(2), {"a", "b", "c", "d", "e", "f"});
  for (auto& [name, gate] : fleet.gates) REQUIRE(gate->Enter(Widget(), "s1", nullptr));  // each asks
  CHECK(fleet.Coordinate() == 2);
  std::vector<std::string> inside;
  for (auto& [name, gate] : fleet.gates) {
    if (!gate->Enter(Widget(), "s1", nullptr)) inside.push_back(name);
  }
  REQUIRE(inside.size() == 2);
  CHECK(fleet.Coordinate() == 0);  // both slots held
  int before = fleet.api.writes();
  fleet.gates[inside[0]]->Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  CHECK(fleet.api.writes() - before == 2);  // the result, and the slot released (no soak)
  CHECK(fleet.SlotsHeldBy(inside[0]) == 0);
  CHECK(fleet.Coordinate() == 1);
  int entered = 0;
  for (auto& [name, gate] : fleet.gates) {
    if (name != inside[0] && name != inside[1] && !gate->Enter(Widget(), "s1", nullptr)) ++entered;
  }
  CHECK(entered == 1);
}

TEST_CASE_METHOD(BothAsked<1>,
                 "two coordinators judging one view grant a slot once: the later grant is refused, not taken over") {
  // An old coordinator whose term has ended without its knowing, and the new one, at one moment:
  // the new one grants right after the old one has read its board.
  RolloutBoard old_board(fleet.clock);
  fleet.feed.Attach(&old_board, RolloutIdOf(fleet.resource.ref));
  LateBoard late(old_board);
  RolloutCoordinator old(fleet.resource, fleet.api, fleet.server, fleet.events, RolloutCoordinatorOptions{"nodehook", {}});
  late.after_view = [&] { CHECK(fleet.Coordinate() == 1); };
  CHECK(old.Round(late) == 0);
  CHECK(fleet.SlotsHeldBy("a") + fleet.SlotsHeldBy("b") == 1);
  const std::string granted = fleet.SlotsHeldBy("a") == 1 ? "a" : "b";
  RolloutGate& in = granted == "a" ? a : b;
  RolloutGate& out = granted == "a" ? b : a;
  CHECK_FALSE(in.Enter(Widget(), "s1", nullptr));
  CHECK(out.Enter(Widget(), "s1", nullptr));
  fleet.clock.Advance(std::chrono::seconds(3));
  in.RenewDue();
  CHECK_FALSE(in.LostSlot(Widget()));  // nobody wrote over its slot
}

TEST_CASE("nodes that wait for a slot ask again at spread-out times, not in lockstep") {
  Fleet fleet(MaxNodes(1));
  REQUIRE_FALSE(fleet.Ask(fleet.Node("a"), Widget(), "s1", nullptr));
  RolloutGate& b = fleet.Node("b");
  std::set<int64_t> waits;
  for (int i = 0; i < 20; ++i) {
    auto wait = fleet.Ask(b, Widget(), "s1", nullptr);
    REQUIRE(wait);
    CHECK(*wait >= std::chrono::milliseconds(1500));  // the 2 s poll, ±25%
    CHECK(*wait <= std::chrono::milliseconds(2500));
    waits.insert(std::chrono::duration_cast<std::chrono::microseconds>(*wait).count());
  }
  CHECK(waits.size() > 10);
}

TEST_CASE_METHOD(SlotOfA, "a slot that is not renewed expires for the others; its old holder finds it lost") {
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));
  fleet.clock.Advance(std::chrono::seconds(3));
  a.RenewDue();  // renewed: a third of the lease has passed
  fleet.clock.Advance(std::chrono::seconds(5));
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));  // seen changing 5 s ago: still live
  fleet.clock.Advance(std::chrono::seconds(2));
  // "a" was stopped: seven seconds without a change, more than the six-second lease.
  CHECK_FALSE(fleet.Ask(b, Widget(), "s1", nullptr));
  CHECK(fleet.Lease(SlotLeaseName(RolloutId(fleet.resource.ref.Id()), 0)).holder == "b");
  a.RenewDue();
  CHECK(a.LostSlot(Widget()));
}

TEST_CASE("a renewal answered after the fence's deadline loses the slot, though it was granted to the node again") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  REQUIRE_FALSE(fleet.Ask(a, Widget(), "s1"));
  fleet.clock.Advance(std::chrono::seconds(2));
  // The renewal hangs for 10 s; meanwhile the slot expires, and is granted to this node again
  // for its ask still on its node Lease (a new version of the same content).
  fleet.api.BeforeNextReplace([&] {
    fleet.clock.Advance(std::chrono::seconds(10));
    fleet.Touch(Slot0(fleet));
  });
  a.RenewDue();
  CHECK(a.LostSlot(Widget()));  // the fence stopped the hook 4 s after its take
}

TEST_CASE("a node's board tells of a grant once, so its object is looked at again at once") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  std::vector<std::string> told;
  fleet.boards.back()->SetOnSlotNamed([&](const RolloutLease& slot) { told.push_back(slot.holder + " " + slot.uid); });
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  CHECK(told.empty());
  CHECK(fleet.Coordinate() == 1);
  CHECK(told == std::vector<std::string>{"a u1"});
  REQUIRE_FALSE(a.Enter(Widget(), "s1", nullptr));  // taken: a write of the same slot
  fleet.clock.Advance(std::chrono::seconds(2));
  a.RenewDue();
  CHECK(told.size() == 1);  // a take or a renewal is no new grant
}

TEST_CASE("a restarted agent takes its own slot back, never a second one") {
  Fleet fleet(MaxNodes(2));
  fleet.Node("b");
  REQUIRE_FALSE(fleet.Ask(fleet.Node("a"), Widget(), "s1", nullptr));
  fleet.Node("a");  // a new gate for node a: the process restarted
  CHECK_FALSE(fleet.Ask(*fleet.gates["a"], Widget(), "s1", nullptr));
  CHECK(fleet.SlotsHeldBy("a") == 1);
  CHECK_FALSE(fleet.Ask(*fleet.gates["b"], Widget(), "s1", nullptr));
}

TEST_CASE("a soaking node keeps its slot for the soak, then the slot frees itself") {
  RolloutPolicy p = MaxNodes(1);
  p.soak = std::chrono::seconds(20);
  Fleet fleet(p);
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  REQUIRE_FALSE(fleet.Ask(a, Widget(), "s1", nullptr));
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  CHECK(fleet.Lease(SlotLeaseName(RolloutId(fleet.resource.ref.Id()), 0)).phase == NodeStep::kSoaking);
  fleet.clock.Advance(std::chrono::seconds(19));
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));
  fleet.clock.Advance(std::chrono::seconds(2));
  CHECK_FALSE(fleet.Ask(b, Widget(), "s1", nullptr));
}

TEST_CASE_METHOD(SlotOfA, "a reboot's step holds the slot for its time without renewals; a step not written says so") {
  // The API server is away: the step is not shown, so no hold was taken either.
  fleet.api.RefuseReplaces(Status(StatusCode::kUnavailable, "connection refused"));
  CHECK_FALSE(a.ShowStep(Widget(), NodeStep::kRebooting, "waiting for a new boot ID", std::chrono::seconds(300)));
  CHECK(fleet.Lease(Slot0(fleet)).phase != NodeStep::kRebooting);
  fleet.api.RefuseReplaces(Status::Ok());
  CHECK(a.ShowStep(Widget(), NodeStep::kRebooting, "waiting for a new boot ID", std::chrono::seconds(300)));
  CHECK(fleet.Lease(Slot0(fleet)).phase == NodeStep::kRebooting);
  CHECK(fleet.Lease(Slot0(fleet)).lease_duration_seconds == 306);
  // Looked at again while the node waits for its reboot (what is left of the same deadline):
  // nothing written, so no event reaches the watchers of the rollout's Leases.
  const int writes = fleet.api.writes();
  fleet.clock.Advance(std::chrono::seconds(10));
  CHECK(a.ShowStep(Widget(), NodeStep::kRebooting, "waiting for a new boot ID", std::chrono::seconds(290)));
  CHECK(fleet.api.writes() == writes);
  ObjectMeta other = Widget();
  other.uid = "u2";
  CHECK_FALSE(a.ShowStep(other, NodeStep::kDraining, "", Duration{0}));  // no slot for it
  // The node is down (nothing renews): the slot stays held for the others well past a lease.
  fleet.clock.Advance(std::chrono::seconds(280));
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));
  fleet.clock.Advance(std::chrono::seconds(20));
  CHECK_FALSE(fleet.Ask(b, Widget(), "s1", nullptr));
}

TEST_CASE("failures count after failure_after_retries; two failed nodes halt and post once") {
  RolloutPolicy p = MaxNodes(2);
  p.failure_after_retries = 2;
  p.max_failed_nodes = NodeCount{2, false};
  Fleet fleet(p, {"a", "b", "c"});
  REQUIRE_FALSE(fleet.Ask(*fleet.gates["a"], Widget(), "s1", nullptr));
  REQUIRE_FALSE(fleet.Ask(*fleet.gates["b"], Widget(), "s1", nullptr));
  fleet.gates["a"]->Failed(fleet.resource.ref, Widget(), "s1", 1, false, "first");
  CHECK(fleet.SlotsHeldBy("a") == 1);  // one failure: it keeps its slot for the retry
  fleet.gates["a"]->Failed(fleet.resource.ref, Widget(), "s1", 2, false, "second");
  CHECK(fleet.SlotsHeldBy("a") == 0);
  fleet.Coordinate();
  CHECK(fleet.events.posted.empty());
  fleet.gates["b"]->Failed(fleet.resource.ref, Widget(), "s1", 1, true, "permanent");
  fleet.Coordinate();  // the coordinator judges the halt and posts it
  fleet.Coordinate();
  REQUIRE(fleet.events.posted.size() == 1);
  CHECK(fleet.events.posted[0].rfind("RolloutHalted: ", 0) == 0);
  CHECK(fleet.events.posted[0].find("a: second") != std::string::npos);
  CHECK(fleet.Ask(*fleet.gates["c"], Widget(), "s1", nullptr));  // halted
  ObjectFacts resumed;
  resumed.rollout_resume = "s1";
  CHECK_FALSE(fleet.Ask(*fleet.gates["c"], Widget(), "s1", &resumed));
}

TEST_CASE("a fix after a failure runs in the slot its failed state held; the others wait for it, then go on") {
  Fleet fleet(RetriedInOneSlot());
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  FailOnce(fleet, a, Widget(), "s1");
  // The object is fixed: s2. Its retry for s1 will never come; a goes on with s2 in that slot.
  CHECK_FALSE(fleet.Ask(a, Widget(), "s2", nullptr));
  CHECK(fleet.Lease(Slot0(fleet)).state == "s2");
  CHECK(fleet.SlotsHeldBy("a") == 1);
  CHECK(fleet.Ask(b, Widget(), "s2", nullptr));  // max_nodes 1: a is inside
  a.Succeeded(fleet.resource.ref, Widget(), "s2", "done");
  CHECK_FALSE(fleet.Ask(b, Widget(), "s2", nullptr));
}

TEST_CASE("an object deleted while its node holds a slot for a retry frees the slot and its result") {
  Fleet fleet(RetriedInOneSlot());
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  ObjectMeta other{"u2", "ns", "w2", "3", false};
  REQUIRE_FALSE(fleet.Ask(a, other, "t1", nullptr));
  a.Succeeded(fleet.resource.ref, other, "t1", "done");
  FailOnce(fleet, a, Widget(), "s1");
  const ObjectMeta third{"u3", "ns", "w3", "1", false};
  CHECK(fleet.Ask(b, third, "x", nullptr));  // the one slot is a's
  int before = fleet.api.writes();
  a.Gone(Widget());
  a.Gone(other);
  // Its ask withdrawn (else the coordinator grants it again) and the slot released; the results
  // wait for the next write.
  CHECK(fleet.api.writes() - before == 2);
  CHECK(fleet.SlotsHeldBy("a") == 0);
  CHECK_FALSE(fleet.Ask(b, third, "x", nullptr));
  b.Succeeded(fleet.resource.ref, third, "x", "done");
  REQUIRE_FALSE(fleet.Ask(a, third, "x", nullptr));
  a.Succeeded(fleet.resource.ref, third, "x", "done");  // a's next write leaves the deleted objects out
  const auto results = fleet.Lease(NodeLeaseName(RolloutId(fleet.resource.ref.Id()), "a")).results;
  CHECK(results.size() == 1);
  CHECK(results.count("u3") == 1);
}

TEST_CASE("a retry while the rollout is paused or outside a window gives the slot up until it may run") {
  Fleet fleet(RetriedInOneSlot());
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  FailOnce(fleet, a, Widget(), "s1");
  ObjectFacts paused;
  paused.rollout_paused = true;
  CHECK(fleet.Ask(a, Widget(), "s1", &paused));  // the retry waits
  CHECK(fleet.SlotsHeldBy("a") == 0);
  CHECK(fleet.Ask(b, Widget(), "s1", &paused));
  CHECK_FALSE(fleet.Ask(b, Widget(), "s1", nullptr));  // unpaused: the free slot goes to whoever asks
  CHECK(fleet.Ask(a, Widget(), "s1", nullptr));
}

TEST_CASE("a slot Lease annotated by someone else is renewed by its holder, not lost") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  REQUIRE_FALSE(fleet.Ask(a, Widget(), "s1", nullptr));
  fleet.Touch(Slot0(fleet));
  fleet.clock.Advance(std::chrono::seconds(3));
  a.RenewDue();
  CHECK_FALSE(a.LostSlot(Widget()));
  CHECK(fleet.Lease(Slot0(fleet)).holder == "a");
  fleet.Touch(Slot0(fleet));
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  CHECK(fleet.SlotsHeldBy("a") == 0);  // released over the edit, not left to expire
}

TEST_CASE_METHOD(SlotOfA, "a slot Lease deleted by hand stays held for the others; its holder writes it again") {
  fleet.api.Remove(Slot0(fleet));
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));  // not free: a may still run
  CHECK_FALSE(fleet.api.Has(Slot0(fleet)));
  fleet.clock.Advance(std::chrono::seconds(3));
  a.RenewDue();
  CHECK_FALSE(a.LostSlot(Widget()));
  CHECK(fleet.Lease(Slot0(fleet)).holder == "a");
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));
}

TEST_CASE_METHOD(SlotOfA, "a slot Lease deleted with its holder gone frees itself a lease after the deletion") {
  fleet.clock.Advance(std::chrono::seconds(2));
  fleet.api.Remove(Slot0(fleet));
  fleet.clock.Advance(std::chrono::seconds(5));
  CHECK(fleet.Ask(b, Widget(), "s1", nullptr));  // 5 s since the deletion, of a 6-s lease
  fleet.clock.Advance(std::chrono::seconds(1));
  CHECK_FALSE(fleet.Ask(b, Widget(), "s1", nullptr));  // taken by a create
  CHECK(fleet.Lease(Slot0(fleet)).holder == "b");
}

TEST_CASE("a node Lease deleted by hand keeps the node in the fleet and is written again") {
  RolloutPolicy p = MaxNodes(1);
  Fleet fleet(p);
  RolloutGate& a = fleet.Node("a");
  fleet.Node("b");
  const std::string lease = NodeLeaseName(RolloutId(fleet.resource.ref.Id()), "a");
  REQUIRE_FALSE(fleet.Ask(a, Widget(), "s1", nullptr));
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  fleet.api.Remove(lease);
  CHECK(fleet.CoordinatorBoard().View().nodes.count("a") == 1);  // the coordinator still counts a
  a.RenewDue();
  REQUIRE(fleet.api.Has(lease));
  CHECK(fleet.Lease(lease).results.count("u1") == 1);
}

TEST_CASE("a node Lease someone edited is written again when its requests or results went; a touch alone is not") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  const std::string rid = RolloutIdOf(fleet.resource.ref);
  const std::string lease = NodeLeaseName(rid, "a");
  auto edit = [&](const std::function<void(RolloutLease&)>& change) {
    RolloutLease edited = fleet.Lease(lease);
    change(edited);
    fleet.api.Put("nodehook", RolloutLeaseJson("nodehook", rid, edited));
  };
  REQUIRE_FALSE(fleet.Ask(b, Widget(), "s1", nullptr));  // b inside
  REQUIRE(a.Enter(Widget(), "s1", nullptr));             // a asks
  fleet.Touch(lease);  // someone's annotation: the content stands
  int writes = fleet.api.writes();
  a.RenewDue();
  CHECK(fleet.api.writes() == writes);
  edit([](RolloutLease& l) { l.requests.clear(); });  // kubectl edit: the ask taken out
  a.RenewDue();
  CHECK(fleet.api.writes() == writes + 1);
  CHECK(fleet.Lease(lease).requests.count("u1") == 1);
  b.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  REQUIRE(fleet.Coordinate() == 1);  // granted to a on the ask written again
  REQUIRE_FALSE(a.Enter(Widget(), "s1", nullptr));
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  edit([](RolloutLease& l) { l.results.clear(); });  // a result taken out would hold the completion
  writes = fleet.api.writes();
  a.RenewDue();
  CHECK(fleet.api.writes() == writes + 1);
  CHECK(fleet.Lease(lease).results.count("u1") == 1);
  a.RenewDue();
  CHECK(fleet.api.writes() == writes + 1);  // its own write is not an edit
}

TEST_CASE("a node Lease is named after its node; one under the hashed name of an earlier version moves, "
          "results kept, and goes") {
  Fleet fleet(MaxNodes(1));
  const std::string rid = RolloutIdOf(fleet.resource.ref);
  CHECK(NodeLeaseName(rid, "a") == "nodehook-rollout-" + rid + "-node-a");
  CHECK(NodeLeaseName(rid, std::string(240, 'n')) == HashedNodeLeaseName("rollout", rid, std::string(240, 'n')));
  RolloutLease old;
  old.name = HashedNodeLeaseName("rollout", rid, "a");
  old.kind = "node";
  old.holder = "a";
  old.lease_duration_seconds = 60;
  old.results["u9"] = NodeResult{"s9", false, 5, "done"};
  fleet.Seed(old);
  fleet.Node("a");  // registers
  REQUIRE(fleet.api.Has(NodeLeaseName(rid, "a")));
  CHECK(fleet.Lease(NodeLeaseName(rid, "a")).results.at("u9").state == "s9");
  CHECK_FALSE(fleet.api.Has(old.name));
  CHECK(fleet.CoordinatorBoard().View().nodes.at("a").count("u9") == 1);
}

TEST_CASE("two entries for one plural in two namespaces are two rollouts, each with its own slots") {
  Fleet fleet(MaxNodes(1));
  WatchedResource team_b = fleet.resource;
  fleet.resource.ref.namespace_name = "team-a";
  team_b.ref.namespace_name = "team-b";
  RolloutGate& a = fleet.Node("n1");
  // The same node, for the entry of the other namespace: a board and a gate of its own.
  fleet.boards.push_back(std::make_unique<RolloutBoard>(fleet.clock));
  fleet.feed.Attach(fleet.boards.back().get(), RolloutIdOf(team_b.ref), "n1");
  RolloutGateOptions options;
  options.node = "n1";
  options.namespace_name = "nodehook";
  RolloutGate b(team_b, fleet.api, *fleet.boards.back(), fleet.clock, fleet.server, options);
  REQUIRE(b.Register().ok());
  RolloutBoard b_all(fleet.clock);
  fleet.feed.Attach(&b_all, RolloutIdOf(team_b.ref));
  RolloutCoordinator b_coordinator(team_b, fleet.api, fleet.server, fleet.events, RolloutCoordinatorOptions{"nodehook", {}});
  ObjectMeta in_a{"ua", "team-a", "w1", "1", false};
  ObjectMeta in_b{"ub", "team-b", "w1", "1", false};
  CHECK_FALSE(fleet.Ask(a, in_a, "s1", nullptr));
  REQUIRE(b.Enter(in_b, "s1", nullptr));
  CHECK(b_coordinator.Round(b_all) == 1);
  CHECK_FALSE(b.Enter(in_b, "s1", nullptr));  // not "busy": team-a's slot is another rollout's
  CHECK(fleet.SlotsHeldBy("n1") == 2);
  a.Succeeded(fleet.resource.ref, in_a, "s1", "done");
  b.Succeeded(team_b.ref, in_b, "s1", "done");
  const std::string lease_a = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "n1");
  const std::string lease_b = NodeLeaseName(RolloutIdOf(team_b.ref), "n1");
  CHECK(fleet.Lease(lease_a).results.count("ua") == 1);
  CHECK(fleet.Lease(lease_b).results.count("ub") == 1);
  CHECK(fleet.Lease(lease_b).scope == "team-b");
}

TEST_CASE("a grant refused for a lasting reason backs off, doubling up to a minute") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  fleet.api.RefuseCreates(Status(StatusCode::kForbidden, "leases is forbidden"));
  const int before = fleet.api.creates();
  for (int round = 0; round < 240; ++round) {  // two minutes of rounds, every half second
    fleet.Coordinate();
    fleet.server.now_ms += 500;
  }
  // Tried at 0, 1, 3, 7, 15, 31, 63 and 123 s: not 240 times.
  CHECK(fleet.api.creates() - before >= 6);
  CHECK(fleet.api.creates() - before <= 8);
  fleet.api.RefuseCreates(Status::Ok());
  for (int round = 0; round < 120 && a.Enter(Widget(), "s1", nullptr); ++round) {
    fleet.Coordinate();
    fleet.server.now_ms += 500;
  }
  CHECK(fleet.SlotsHeldBy("a") == 1);  // granted within the minute, and taken
}

TEST_CASE_METHOD(BothAsked<2>,
                 "completion is posted once, by the coordinator, when the last nodes finish at once") {
  CHECK(fleet.Coordinate() == 2);
  REQUIRE_FALSE(a.Enter(Widget(), "s1", nullptr));
  REQUIRE_FALSE(b.Enter(Widget(), "s1", nullptr));
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  b.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  CHECK(fleet.events.posted.empty());
  fleet.Coordinate();
  REQUIRE(fleet.events.posted.size() == 1);
  CHECK(fleet.events.posted[0].rfind("RolloutCompleted: ", 0) == 0);
  fleet.Coordinate();
  CHECK(fleet.events.posted.size() == 1);  // once
}

TEST_CASE("a node Lease deleted for good leaves the boards after a minute, and the board forgets it") {
  Fleet fleet(MaxNodes(1));
  fleet.Node("a");  // its agent is gone after this: nobody writes its Lease again
  fleet.Node("b");
  const std::string lease = NodeLeaseName(RolloutId(fleet.resource.ref.Id()), "a");
  RolloutBoard& b_board = fleet.CoordinatorBoard();
  fleet.api.Remove(lease);
  fleet.clock.Advance(std::chrono::seconds(59));
  CHECK(b_board.View().nodes.count("a") == 1);
  fleet.clock.Advance(std::chrono::seconds(1));
  CHECK(b_board.View().nodes.count("a") == 0);
  CHECK(b_board.Deleted(lease));
  fleet.Touch(NodeLeaseName(RolloutId(fleet.resource.ref.Id()), "b"));  // any change: the watch brings it
  CHECK_FALSE(b_board.Deleted(lease));  // pruned
  CHECK(b_board.Lease(lease).kind.empty());
}


TEST_CASE("a node that handled 2,000 gated objects keeps every result on its Lease, one write each") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  // A hook's outcome as the executor words it: the exit and the first of its output.
  const std::string outcome = "exited 0: " + std::string(180, 'x');
  for (int i = 0; i < 2000; ++i) {
    ObjectMeta object{"00000000-0000-0000-0000-" + std::to_string(100000000000 + i), "ns", "w" + std::to_string(i),
                      "7", false};
    // Granted before it asks (the coordinator's part is tested above): one node-Lease write per
    // object, the result, as the test's subject.
    fleet.Grant(Slot0(fleet), 0, "a", object.uid, "s1");
    REQUIRE_FALSE(a.Enter(object, "s1", nullptr));
    a.Succeeded(fleet.resource.ref, object, "s1", outcome);
  }
  const std::string lease = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "a");
  CHECK(fleet.Lease(lease).results.size() == 2000);
  const int writes = fleet.api.writes();
  for (int round = 0; round < 10; ++round) {
    fleet.clock.Advance(std::chrono::seconds(2));
    a.RenewDue();
  }
  CHECK(fleet.api.writes() == writes);  // nothing left to write again
}

TEST_CASE("a node Lease write refused for good is tried again backing off, not every round") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  const std::string lease = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "a");
  fleet.api.Remove(lease);
  fleet.api.RefuseCreates(Status(StatusCode::kForbidden, "leases is forbidden"));
  for (int second = 0; second < 120; ++second) {
    fleet.clock.Advance(std::chrono::seconds(1));
    a.RenewDue();
  }
  // The poll (2 s) doubled with each refusal: 2, 4, 8, 16, 32, 64 s.
  CHECK(fleet.api.refused() <= 7);
  CHECK(fleet.api.refused() >= 5);
  fleet.api.RefuseCreates(Status::Ok());
  for (int second = 0; second < 300; ++second) {
    fleet.clock.Advance(std::chrono::seconds(1));
    a.RenewDue();
  }
  CHECK(fleet.api.Has(lease));  // written again once the refusal ended, within the backoff
}


TEST_CASE("a node Lease names its Node as owner, also when the Node becomes known after the Lease") {
  Fleet fleet(MaxNodes(1));
  fleet.presence["a"] = NodePresence{"node-uid-a", false};
  fleet.Node("a");
  const std::string a_lease = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "a");
  CHECK(fleet.Lease(a_lease).owner_uid == "node-uid-a");

  RolloutGate& b = fleet.Node("b");  // its Node not listed yet: no owner
  const std::string b_lease = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "b");
  CHECK(fleet.Lease(b_lease).owner_uid.empty());
  fleet.presence["b"] = NodePresence{"node-uid-b", false};
  const int before = fleet.api.writes();
  b.RenewDue();
  CHECK(fleet.Lease(b_lease).owner_uid == "node-uid-b");
  b.RenewDue();
  CHECK(fleet.api.writes() == before + 1);
}

TEST_CASE("a node whose Node is deleted writes its Lease no more, so it leaves the fleet") {
  Fleet fleet(MaxNodes(1));
  fleet.presence["a"] = NodePresence{"node-uid-a", false};
  RolloutGate& a = fleet.Node("a");
  const std::string lease = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "a");
  REQUIRE(fleet.api.Has(lease));
  REQUIRE_FALSE(fleet.Ask(a, Widget(), "s1", nullptr));  // work in progress still runs
  fleet.presence["a"] = NodePresence{"", true};
  fleet.api.Remove(lease);  // the garbage collector, after the Node
  for (int round = 0; round < 100; ++round) {
    fleet.clock.Advance(std::chrono::seconds(1));
    a.RenewDue();
  }
  CHECK_FALSE(fleet.api.Has(lease));
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  CHECK_FALSE(fleet.api.Has(lease));
  fleet.presence["a"] = NodePresence{"node-uid-a2", false};  // registered again, a new Node
  fleet.clock.Advance(std::chrono::minutes(5));
  a.RenewDue();
  REQUIRE(fleet.api.Has(lease));
  CHECK(fleet.Lease(lease).owner_uid == "node-uid-a2");
}


TEST_CASE("a node Lease carries its node's labels, written again when they change") {
  Fleet fleet(MaxNodes(1));
  fleet.presence["a"] = NodePresence{"node-uid-a", false, LabelMap{{"pool", "gpu"}}};
  RolloutGate& a = fleet.Node("a");
  const std::string lease = NodeLeaseName(RolloutIdOf(fleet.resource.ref), "a");
  CHECK(fleet.Lease(lease).labels == LabelMap{{"pool", "gpu"}});
  const int before = fleet.api.writes();
  a.RenewDue();
  CHECK(fleet.api.writes() == before);
  fleet.presence["a"].labels = LabelMap{{"pool", "gpu"}, {"nodehook.io/rollout-hold", "true"}};
  a.RenewDue();
  a.RenewDue();
  CHECK(fleet.api.writes() == before + 1);
  CHECK(fleet.Lease(lease).labels->count("nodehook.io/rollout-hold") == 1);
}


TEST_CASE("a canary that fails marks its result as a canary's") {
  RolloutPolicy policy = MaxNodes(3);
  policy.canary_nodes = 1;
  policy.max_failed_nodes = NodeCount{5, false};
  Fleet fleet(policy, {"a", "b", "c"});
  std::string canary;
  for (auto& [name, gate] : fleet.gates) {
    if (!fleet.Ask(*gate, Widget(), "s1", nullptr)) canary = name;
  }
  REQUIRE_FALSE(canary.empty());
  fleet.gates[canary]->Failed(fleet.resource.ref, Widget(), "s1", 1, true, "boom");
  auto result = fleet.Lease(NodeLeaseName(RolloutIdOf(fleet.resource.ref), canary)).results.at("u1");
  CHECK(result.failed);
  CHECK(result.canary);
}

}  // namespace nodehook

namespace nodehook {

TEST_CASE("a state that waited for a node that left is posted complete when that node leaves the board") {
  Fleet fleet(MaxNodes(2));
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  fleet.Node("c");  // never runs it: it has left, though its Lease is still there
  for (RolloutGate* node : {&a, &b}) {
    REQUIRE_FALSE(fleet.Ask(*node, Widget(), "s1", nullptr));
    node->Succeeded(fleet.resource.ref, Widget(), "s1", "done");
  }
  for (int round = 0; round < 70; ++round) {
    fleet.clock.Advance(std::chrono::seconds(1));
    fleet.Coordinate();
  }
  CHECK(fleet.events.posted.empty());
  fleet.api.Remove(NodeLeaseName(RolloutIdOf(fleet.resource.ref), "c"));  // the garbage collector
  for (int round = 0; round < 70; ++round) {  // the minute a deleted node Lease stays on the board
    fleet.clock.Advance(std::chrono::seconds(1));
    fleet.Coordinate();
  }
  REQUIRE_FALSE(fleet.events.posted.empty());
  CHECK(fleet.events.posted.front().rfind("RolloutCompleted", 0) == 0);
}

TEST_CASE("the coordinator grants at most max_grants_per_second, a second's worth at once, in rollout order") {
  RolloutPolicy policy = MaxNodes(10);
  policy.max_grants_per_second = 3;
  Fleet fleet(policy);
  for (int i = 0; i < 10; ++i) fleet.Node("n" + std::to_string(i));
  for (auto& [name, gate] : fleet.gates) REQUIRE(gate->Enter(Widget(), "s1", nullptr));  // each asks
  auto inside = [&] {
    std::set<std::string> in;
    for (auto& [name, gate] : fleet.gates) {
      if (!gate->Enter(Widget(), "s1", nullptr)) in.insert(name);
    }
    return in;
  };
  CHECK(fleet.Coordinate() == 3);  // a second's worth, though seven more slots are free
  // The first three of the rollout order.
  const std::vector<std::string> order =
      RolloutOrder(fleet.CoordinatorBoard().View(), RolloutObject{"u1", "s1", false, "", std::nullopt});
  REQUIRE(order.size() == 10);
  CHECK(inside() == std::set<std::string>(order.begin(), order.begin() + 3));
  fleet.server.now_ms += 300;
  CHECK(fleet.Coordinate() == 0);  // 0.9 of a grant refilled
  fleet.server.now_ms += 100;
  CHECK(fleet.Coordinate() == 1);  // 1.2
  fleet.server.now_ms += 10'000;
  CHECK(fleet.Coordinate() == 3);  // never more than a second's worth, however long it waited
  fleet.server.now_ms += 1'000;
  CHECK(fleet.Coordinate() == 3);
  CHECK(inside().size() == 10);
}

TEST_CASE("with the fleet's size known, each node asks at its place among the nodes, spread over the fleet") {
  RolloutPolicy policy = MaxNodes(10);
  policy.max_grants_per_second = 50;  // asks come at four times that: 200 a second
  Fleet fleet(policy);
  for (int i = 0; i < 10; ++i) fleet.Node("n" + std::to_string(i));
  fleet.fleet_size = 1000;  // as a coordinator counted them: the first asks spread over 5 s
  const TimePoint start = fleet.clock.Now();
  std::map<std::string, TimePoint> due;
  const int before = fleet.api.writes();
  for (auto& [name, gate] : fleet.gates) {
    auto wait = gate->Enter(Widget(), "s1", nullptr);
    REQUIRE(wait);
    CHECK(*wait < std::chrono::seconds(5));
    due[name] = start + *wait;
    // Each at its place: the fraction of the hash range times 5 s.
    const std::string rid = RolloutIdOf(fleet.resource.ref);
    CHECK(*wait == Duration(static_cast<int64_t>(AskPlace(rid, name) * 5000.0)));
  }
  CHECK(fleet.api.writes() == before);  // nobody asked yet
  std::vector<std::string> by_time;
  for (const auto& [name, at] : due) by_time.push_back(name);
  std::sort(by_time.begin(), by_time.end(), [&](const auto& a, const auto& b) { return due[a] < due[b]; });
  // Each asks once its time has come (one write), and not before.
  for (const std::string& node : by_time) {
    if (fleet.clock.Now() < due[node] - std::chrono::milliseconds(1)) {
      fleet.clock.Advance(due[node] - std::chrono::milliseconds(1) - fleet.clock.Now());
      const int writes = fleet.api.writes();
      REQUIRE(fleet.gates[node]->Enter(Widget(), "s1", nullptr));
      CHECK(fleet.api.writes() == writes);
    }
    fleet.clock.Advance(due[node] - fleet.clock.Now());
    const int writes = fleet.api.writes();
    REQUIRE(fleet.gates[node]->Enter(Widget(), "s1", nullptr));  // queued
    CHECK(fleet.api.writes() == writes + 1);
  }
  CHECK(fleet.Coordinate() == 10);
}

TEST_CASE("a node asks for the objects that changed together in one write") {
  Fleet fleet(MaxNodes(10));  // 20 grants a second, so asks spread over 1000 / 80 s
  RolloutGate& node = fleet.Node("n0");
  fleet.Node("n1");
  fleet.fleet_size = 1000;
  const ObjectMeta w1{"u1", "ns", "w1", "7", false}, w2{"u2", "ns", "w2", "3", false}, w3{"u3", "ns", "w3", "5", false};
  auto first = node.Enter(w1, "s1", nullptr);
  fleet.clock.Advance(std::chrono::milliseconds(200));
  auto second = node.Enter(w2, "s2", nullptr);
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*second == *first);  // one place for every object: each due that long after it changed
  fleet.clock.Advance(*first - std::chrono::milliseconds(200));  // w1 is due; w2 in 200 ms
  const int before = fleet.api.writes();
  REQUIRE(node.Enter(w1, "s1", nullptr));
  CHECK(fleet.api.writes() == before + 1);
  const auto asked = fleet.CoordinatorBoard().View().requests["n0"];
  CHECK(asked.count("u1") == 1);
  CHECK(asked.count("u2") == 1);  // w2's ask, due 200 ms later, went in the same write
  REQUIRE(node.Enter(w2, "s2", nullptr));  // asked for already: nothing to write
  CHECK(fleet.api.writes() == before + 1);
  // An object that changes later is asked for at its own time, not now.
  auto later = node.Enter(w3, "s3", nullptr);
  REQUIRE(later);
  CHECK(*later > std::chrono::seconds(0));
  CHECK(fleet.api.writes() == before + 1);
  CHECK(fleet.Coordinate() == 1);  // one of the two asked for: a node holds one slot at a time
}

}  // namespace nodehook

namespace nodehook {
namespace {

std::string SlotHolder(Fleet& fleet) { return fleet.Lease(Slot0(fleet)).holder; }

TEST_CASE_METHOD(BothAsked<1>,
                 "a node that asked and died is granted once: its lapsed grant is withdrawn, the next node goes in, "
                 "and its agent's return asks again") {
  REQUIRE(fleet.Coordinate() == 1);
  const std::string dead = SlotHolder(fleet);
  const std::string alive = dead == "a" ? "b" : "a";
  fleet.clock.Advance(std::chrono::seconds(7));  // never taken: the slot lapses
  REQUIRE(fleet.Coordinate() == 1);
  REQUIRE(SlotHolder(fleet) == alive);
  REQUIRE_FALSE(fleet.gates[alive]->Enter(Widget(), "s1", nullptr));
  fleet.gates[alive]->Succeeded(fleet.resource.ref, Widget(), "s1", "ok");
  // Granted nothing more while its node Lease stays as it was.
  fleet.clock.Advance(std::chrono::seconds(1));
  CHECK(fleet.Coordinate() == 0);
  fleet.clock.Advance(std::chrono::seconds(30));
  CHECK(fleet.Coordinate() == 0);
  // Its agent comes back: a new process asks again, with a write, and is granted.
  RolloutGate& back = fleet.Node(dead);
  REQUIRE(back.Enter(Widget(), "s1", nullptr));
  REQUIRE(fleet.Coordinate() == 1);
  CHECK_FALSE(back.Enter(Widget(), "s1", nullptr));
}

TEST_CASE("a live node that saw its grant lapse untaken asks again, once, and is granted again") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  REQUIRE(fleet.Coordinate() == 1);
  fleet.clock.Advance(std::chrono::seconds(7));  // its worker was busy: the grant lapsed
  REQUIRE(fleet.Coordinate() == 0);              // withdrawn
  const int writes = fleet.api.writes();
  REQUIRE(a.Enter(Widget(), "s1", nullptr));     // sees the lapse: asks again
  CHECK(fleet.api.writes() == writes + 1);
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  CHECK(fleet.api.writes() == writes + 1);       // once
  REQUIRE(fleet.Coordinate() == 1);
  CHECK_FALSE(a.Enter(Widget(), "s1", nullptr));
}

// a asked; its agent is stopped (SIGSTOP) while the coordinator grants it the slot, withdraws the
// lapsed grant and gives the slot to b, who is done with it. Returns a, not yet woken.
RolloutGate& StoppedThroughItsGrant(Fleet& fleet) {
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  fleet.feed.Pause("a");
  REQUIRE(fleet.Coordinate() == 1);
  REQUIRE(SlotHolder(fleet) == "a");
  fleet.clock.Advance(std::chrono::seconds(7));  // never taken: the grant lapses
  REQUIRE(fleet.Coordinate() == 0);              // and is withdrawn
  REQUIRE(b.Enter(Widget(), "s1", nullptr));
  REQUIRE(fleet.Coordinate() == 1);
  REQUIRE_FALSE(b.Enter(Widget(), "s1", nullptr));
  b.Succeeded(fleet.resource.ref, Widget(), "s1", "ok");  // and the slot released
  fleet.clock.Advance(std::chrono::seconds(30));
  REQUIRE(fleet.Coordinate() == 0);  // a is granted nothing while its node Lease stays as it was
  return a;
}

// a (in StoppedThroughItsGrant's fleet), waking, asks again with one write and no more, and is
// granted the slot.
void AsksAgainOnceAndIsGranted(Fleet& fleet, RolloutGate& a, int writes_before) {
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  CHECK(fleet.api.writes() == writes_before + 1);  // asked again
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  CHECK(fleet.api.writes() == writes_before + 1);  // once
  REQUIRE(fleet.Coordinate() == 1);
  CHECK(SlotHolder(fleet) == "a");
  CHECK_FALSE(a.Enter(Widget(), "s1", nullptr));
}

TEST_CASE("a node stopped while its grant came and went reads both on waking, asks again once, and is granted") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = StoppedThroughItsGrant(fleet);
  fleet.feed.Resume("a");  // the grant, then the slot leaving a's watch (b's, then released)
  const int writes = fleet.api.writes();
  AsksAgainOnceAndIsGranted(fleet, a, writes);
}

TEST_CASE("a node whose watch came back too late to resume asks again after the list, once, at its place") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = StoppedThroughItsGrant(fleet);
  fleet.feed.Relist("a");  // the grant came and went unseen: the list shows nothing of it
  fleet.fleet_size = 200;   // 20 grants a second, asks at 80: the relisted asks spread over 2.5 s
  const int writes = fleet.api.writes();
  const Duration place(static_cast<int64_t>(AskPlace(RolloutIdOf(fleet.resource.ref), "a") * 2500.0));
  REQUIRE(place > Duration::zero());
  auto wait = a.Enter(Widget(), "s1", nullptr);
  REQUIRE(wait);
  CHECK(*wait == place);  // not at once, as every relisted node would after an API server restart
  CHECK(fleet.api.writes() == writes);
  fleet.clock.Advance(place);
  AsksAgainOnceAndIsGranted(fleet, a, writes);
}

TEST_CASE("the coordinator counts nodes the rollout keeps cordoned against max_nodes, and lets them back in") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  RolloutGate& b = fleet.Node("b");
  fleet.cordoned["a"] = "ns/w1";  // a's agent was away past its lease: its slot lapsed, its cordon did not
  REQUIRE(b.Enter(Widget(), "s1", nullptr));
  CHECK(fleet.Coordinate() == 0);
  CHECK(b.Enter(Widget(), "s1", nullptr));
  // a asks to go on with the work it started: granted past a pause (it is disrupted already).
  ObjectFacts paused;
  paused.rollout_paused = true;
  REQUIRE(a.Enter(Widget(), "s1", &paused, true));
  REQUIRE(fleet.Coordinate() == 1);
  CHECK(SlotHolder(fleet) == "a");
  CHECK_FALSE(a.Enter(Widget(), "s1", &paused, true));
  // New work waits for the pause: b is not granted even once a is uncordoned and done.
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "ok");
  fleet.cordoned.clear();
  CHECK(b.Enter(Widget(), "s1", &paused));
  CHECK(fleet.Coordinate() == 0);
  CHECK(b.Enter(Widget(), "s1", nullptr));
  CHECK(fleet.Coordinate() == 1);
}

}  // namespace
}  // namespace nodehook

namespace nodehook {
namespace {

int Completions(const Fleet& fleet) {
  return static_cast<int>(std::count_if(fleet.events.posted.begin(), fleet.events.posted.end(), [](const std::string& e) {
    return e.rfind("RolloutCompleted", 0) == 0;
  }));
}

TEST_CASE("RolloutCompleted is posted once per state across a coordinator handover after the last grant") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  REQUIRE(fleet.Coordinate() == 1);
  REQUIRE_FALSE(a.Enter(Widget(), "s1", nullptr));  // inside: its ask is gone from its Lease
  // The coordinator changes hands: the new one takes up what the old one still owes.
  const std::string handover = fleet.coordinator->Handover();
  CHECK(handover.find("\"u1/s1\"") != std::string::npos);
  fleet.coordinator = std::make_unique<RolloutCoordinator>(fleet.resource, fleet.api, fleet.server, fleet.events,
                                                           RolloutCoordinatorOptions{"nodehook", {}});
  fleet.coordinator->TakeOver(handover);
  a.Succeeded(fleet.resource.ref, Widget(), "s1", "ok");
  fleet.Coordinate();
  CHECK(Completions(fleet) == 1);
  fleet.Coordinate();
  CHECK(Completions(fleet) == 1);
  // Nothing is owed any more: a later coordinator posts nothing again.
  CHECK(fleet.coordinator->Handover().empty());
  fleet.coordinator = std::make_unique<RolloutCoordinator>(fleet.resource, fleet.api, fleet.server, fleet.events,
                                                           RolloutCoordinatorOptions{"nodehook", {}});
  fleet.Coordinate();
  CHECK(Completions(fleet) == 1);
}

TEST_CASE("a handover keeps whether a halt was posted, and an unreadable one is left") {
  Fleet fleet(MaxNodes(1));
  RolloutGate& a = fleet.Node("a");
  fleet.Node("b");
  REQUIRE(a.Enter(Widget(), "s1", nullptr));
  REQUIRE(fleet.Coordinate() == 1);
  REQUIRE_FALSE(a.Enter(Widget(), "s1", nullptr));
  a.Failed(fleet.resource.ref, Widget(), "s1", 1, true, "broken");
  fleet.Coordinate();
  const auto halts = [&] {
    return std::count_if(fleet.events.posted.begin(), fleet.events.posted.end(),
                         [](const std::string& e) { return e.rfind("RolloutHalted", 0) == 0; });
  };
  REQUIRE(halts() == 1);
  const std::string handover = fleet.coordinator->Handover();
  fleet.coordinator = std::make_unique<RolloutCoordinator>(fleet.resource, fleet.api, fleet.server, fleet.events,
                                                           RolloutCoordinatorOptions{"nodehook", {}});
  fleet.coordinator->TakeOver("not json");
  fleet.coordinator->TakeOver(handover);
  fleet.Coordinate();
  CHECK(halts() == 1);
}

}  // namespace
}  // namespace nodehook
