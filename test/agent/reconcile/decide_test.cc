// Decide, table-driven: each row of the README's "What runs when" table is a case here (the test
// fails when the README gains a row this table lacks), and so is each mode's arm around it.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "agent/reconcile/decide.h"

using namespace nodehook;

namespace {

const TimePoint kNow = FromMillis(1'000'000);

ObjectPtr Object(int size, bool deleting = false, const std::string& extra_meta = "") {
  auto o = std::make_shared<KubeObject>();
  o->meta = {"u1", "ns", "w", std::to_string(size), deleting};
  o->json = R"({"metadata":{"name":"w","namespace":"ns","uid":"u1")" + extra_meta + R"(},"spec":{"size":)" +
            std::to_string(size) + "}}";
  return o;
}

std::map<std::string, HookSpec> Hooks(std::initializer_list<const char*> reasons) {
  std::map<std::string, HookSpec> hooks;
  for (const char* r : reasons) hooks[r] = HookSpec{{std::string("/hooks/") + r}, std::chrono::seconds(5)};
  return hooks;
}

const std::map<std::string, HookSpec> kAllHooks = Hooks({"create", "update", "delete", "resume"});

// An input for the object `object` (null: a tombstone known only from the store), with the
// diffbase of `handled_size` stored when it is >= 0.
DecideInput Input(ObjectPtr object, int handled_size = -1) {
  DecideInput in;
  in.uid = "u1";
  in.object = object;
  if (object) in.facts = ReadFacts(object->json, FactsSpec{});
  if (handled_size >= 0) {
    auto handled = Object(handled_size);
    in.record = ObjectRecord{"u1", "widgets.example.com/v1", "ns", "w", ReadFacts(handled->json, {})->essence,
                             handled->json, 1};
  }
  in.hooks = &kAllHooks;
  in.resource_id = "widgets.example.com/v1";
  in.now = kNow;
  return in;
}

HandlerRecord Progress(const std::string& handler, const std::string& outcome, const std::string& target,
                       int64_t next_attempt_ms = 0) {
  HandlerRecord h;
  h.uid = "u1";
  h.handler = handler;
  h.last_outcome = outcome;
  h.target = target;
  h.retries = 2;
  h.next_attempt_ms = next_attempt_ms;
  return h;
}

std::string Steps(const Plan& plan) {
  std::string out;
  for (Step s : plan.steps) out += std::string(out.empty() ? "" : " ") + StepName(s);
  return out;
}

struct Case {
  std::string situation;  // for README rows: the row's text, exactly
  std::function<DecideInput()> input;
  std::string reason;     // "" = no handler
  std::string steps;
};

const std::string kRun = "record_start run_hook";
const std::string kKeep = "store_handled mark_seen drop_bytes";

std::vector<Case> ReadmeRows() {
  return {
      {"(node targeting) the object's node selector does not match this node's labels",
       [] {
         auto in = Input(Object(1), 1);
         in.targeted = false;
         return in;
       },
       "delete", kRun + " forget"},
      {"nothing stored for the object on this node", [] { return Input(Object(1)); }, "create", kRun + " " + kKeep},
      {"the essence differs from the stored diffbase", [] { return Input(Object(2), 1); }, "update",
       kRun + " " + kKeep},
      {"`metadata.deletionTimestamp` set, or the object is gone (DELETED event, or missing from a relist) and this "
       "node handled it",
       [] {
         auto in = Input(Object(1), 1);
         in.gone = true;
         return in;
       },
       "delete", kRun + " forget"},
      {"unchanged, first seen since the agent started", [] {
         auto in = Input(Object(1), 1);
         in.first_sight = true;
         return in;
       },
       "resume", kRun + " " + kKeep},
  };
}

std::vector<Case> MoreCases() {
  return {
      {"being deleted and handled here", [] { return Input(Object(1, true), 1); }, "delete", kRun + " forget"},
      {"a tombstone from the store alone (deleted while the agent was down)", [] { return Input(nullptr, 1); },
       "delete", kRun + " forget"},
      {"gone, and never handled here", [] {
         auto in = Input(Object(1));
         in.gone = true;
         return in;
       },
       "", "erase_tombstone"},
      {"not targeted, never handled here", [] {
         auto in = Input(Object(1));
         in.targeted = false;
         return in;
       },
       "", ""},
      {"unchanged and seen before: nothing, the bytes may go", [] { return Input(Object(1), 1); }, "",
       "mark_seen drop_bytes"},
      {"unchanged, first sight, no resume hook", [] {
         static const auto hooks = Hooks({"create"});
         auto in = Input(Object(1), 1);
         in.first_sight = true;
         in.hooks = &hooks;
         return in;
       },
       "", "mark_seen drop_bytes"},
      {"a reason without a hook still moves the diffbase", [] {
         static const auto hooks = Hooks({"create"});
         auto in = Input(Object(2), 1);
         in.hooks = &hooks;
         return in;
       },
       "update", kKeep},
      {"state recovery: adopted without create", [] {
         auto in = Input(Object(1));
         in.adopt = true;
         return in;
       },
       "adopt", kKeep},
      {"a failure not yet due waits", [] {
         auto in = Input(Object(2), 1);
         in.progress = {Progress("update", "failed", in.facts->digest, ToMillis(kNow) + 5000)};
         return in;
       },
       "update", ""},
      {"a failure that is due runs again with its progress", [] {
         auto in = Input(Object(2), 1);
         in.progress = {Progress("update", "failed", in.facts->digest, ToMillis(kNow))};
         return in;
       },
       "update", kRun + " " + kKeep},
      {"a permanent failure waits for a change", [] {
         auto in = Input(Object(2), 1);
         in.progress = {Progress("update", "permanent_failure", in.facts->digest)};
         return in;
       },
       "", ""},
      {"a permanent failure of an older state starts afresh", [] {
         auto in = Input(Object(2), 1);
         in.progress = {Progress("update", "permanent_failure", "older")};
         return in;
       },
       "update", kRun + " " + kKeep},
      {"unreadable: waits for the next change", [] {
         auto in = Input(Object(1), 1);
         auto bad = std::make_shared<KubeObject>(*in.object);
         bad->json = "[1]";
         in.object = bad;
         in.facts = ReadFacts(bad->json, {});
         return in;
       },
       "", "drop_bytes"},
      // Finalizer mode.
      {"finalizer mode: claimed before the first hook", [] {
         auto in = Input(Object(1));
         in.finalizer_mode = true;
         return in;
       },
       "create", "claim_finalizer " + kRun + " " + kKeep},
      {"finalizer mode: a deletion sweeps, runs, marks, releases, forgets", [] {
         auto in = Input(Object(1, true), 1);
         in.finalizer_mode = true;
         return in;
       },
       "delete", "sweep_departed " + kRun + " mark_finalizer_pending release_finalizer forget"},
      {"finalizer mode: a succeeded delete only releases", [] {
         auto in = Input(Object(1, true), 1);
         in.finalizer_mode = true;
         in.progress = {Progress("delete", "finalizer_pending", in.facts->digest)};
         return in;
       },
       "delete", "sweep_departed release_finalizer forget"},
      {"finalizer mode: a handled object without this node's finalizer claims it again, without a hook", [] {
         auto in = Input(Object(1), 1);
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/node-a";
         return in;
       },
       "", "claim_finalizer mark_seen drop_bytes"},
      {"finalizer mode: a handled object holding this node's finalizer claims nothing", [] {
         auto in = Input(Object(1, false, R"(,"finalizers":["nodehook.io/node-a"])"), 1);
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/node-a";
         return in;
       },
       "", "mark_seen drop_bytes"},
      {"finalizer mode: our finalizer on an object this node knows nothing of", [] {
         auto in = Input(Object(1, true));
         in.finalizer_mode = true;
         return in;
       },
       "", "sweep_departed release_stray_finalizer"},
      // Cluster singletons.
      {"singleton, not leading: nothing", [] {
         DecideInput in;
         in.uid = "u1";
         in.leadership = Leadership::kNotHeld;
         return in;
       },
       "", ""},
      {"singleton, not leading, gone: kept for the next leader", [] {
         DecideInput in;
         in.uid = "u1";
         in.gone = true;
         in.leadership = Leadership::kNotHeld;
         return in;
       },
       "", "await_leader"},
      {"singleton, leading: the handled state goes onto the object", [] {
         auto in = Input(Object(1));
         in.leadership = Leadership::kHeld;
         return in;
       },
       "create", kRun + " record_leader_handled " + kKeep},
      {"singleton: the previous leader handled exactly this state", [] {
         auto plain = Object(1);
         std::string digest = ReadFacts(plain->json, {})->digest;
         auto in = Input(Object(1, false, R"(,"annotations":{"nodehook.io/singleton-handled":")" + digest + "\"}"));
         // The annotation is an ignored path for singleton resources; the digest is the plain one.
         in.facts = std::make_shared<ObjectFacts>([&] {
           ObjectFacts f = *ReadFacts(plain->json, {});
           f.singleton_digest = digest;
           return f;
         }());
         in.leadership = Leadership::kHeld;
         return in;
       },
       "adopt", kKeep},
      {"singleton: gone after another leader handled it", [] {
         auto in = Input(Object(1, false, R"(,"annotations":{"nodehook.io/singleton-handled":"x"})"));
         in.gone = true;
         in.leadership = Leadership::kHeld;
         return in;
       },
       "delete", kRun + " forget"},
      // The singleton finalizer: finalizer mode over one cluster-wide name.
      {"singleton finalizer: claimed before the first hook", [] {
         auto in = Input(Object(1));
         in.leadership = Leadership::kHeld;
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/singleton";
         return in;
       },
       "create", "claim_finalizer " + kRun + " record_leader_handled " + kKeep},
      {"singleton finalizer: a deleting object holding it owes its delete, with no annotation or record", [] {
         auto in = Input(Object(1, true, R"(,"finalizers":["nodehook.io/singleton"])"));
         in.leadership = Leadership::kHeld;
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/singleton";
         return in;
       },
       "delete", kRun + " mark_finalizer_pending release_finalizer forget"},
      {"singleton finalizer: a deleting object without it and unknown here owes nothing", [] {
         auto in = Input(Object(1, true, R"(,"finalizers":["other.io/x"])"));
         in.leadership = Leadership::kHeld;
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/singleton";
         return in;
       },
       "", "release_stray_finalizer"},
      {"singleton finalizer: an object handled before it existed claims it", [] {
         auto in = Input(Object(1), 1);
         in.leadership = Leadership::kHeld;
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/singleton";
         return in;
       },
       "", "claim_finalizer mark_seen drop_bytes"},
      {"singleton finalizer: an object handled and holding it claims nothing", [] {
         auto in = Input(Object(1, false, R"(,"finalizers":["nodehook.io/singleton"])"), 1);
         in.leadership = Leadership::kHeld;
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/singleton";
         return in;
       },
       "", "mark_seen drop_bytes"},
      {"singleton finalizer: a follower plans none of its steps", [] {
         auto in = Input(Object(1, true, R"(,"finalizers":["nodehook.io/singleton"])"));
         in.leadership = Leadership::kNotHeld;
         in.finalizer_mode = true;
         in.finalizer = "nodehook.io/singleton";
         return in;
       },
       "", ""},
  };
}

}  // namespace

TEST_CASE("Decide gives each situation its handler and steps") {
  std::vector<Case> cases = ReadmeRows();
  for (auto& c : MoreCases()) cases.push_back(c);
  for (const Case& c : cases) {
    INFO(c.situation);
    Plan plan = Decide(c.input());
    CHECK(plan.reason == c.reason);
    CHECK(Steps(plan) == c.steps);
  }
}

TEST_CASE("every row of the README's \"What runs when\" table is a case of the Decide table") {
  std::ifstream in(std::string(NODEHOOK_SOURCE_DIR) + "/README.md");
  REQUIRE(in);
  std::vector<std::string> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) inside = line == "## What runs when";
    if (!inside || line.rfind("| ", 0) != 0 || line.rfind("| situation", 0) == 0 || line.rfind("| ---", 0) == 0) {
      continue;
    }
    rows.push_back(line.substr(2, line.find(" | ", 2) - 2));
  }
  REQUIRE(rows.size() >= 5);
  std::vector<Case> cases = ReadmeRows();
  for (const auto& row : rows) {
    INFO("README row without a Decide case: " << row);
    bool found = false;
    for (const auto& c : cases) found = found || c.situation == row;
    CHECK(found);
  }
}

TEST_CASE("Decide is pure: the same values give the same plan") {
  DecideInput in = Input(Object(2), 1);
  Plan a = Decide(in);
  Plan b = Decide(in);
  CHECK(a.reason == b.reason);
  CHECK(Steps(a) == Steps(b));
  CHECK(a.target == b.target);
}
