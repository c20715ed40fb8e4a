#include <catch2/catch.hpp>

#include <string>

#include "storage/state_report.h"
#include "test/storage/store_samples.h"

namespace nodehook {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;

TEST_CASE("relative times use at most two units and say which way") {
  CHECK(RelativeTime(kNow, kNow) == "now");
  CHECK(RelativeTime(kNow + 999, kNow) == "now");
  CHECK(RelativeTime(kNow + 5'000, kNow) == "in 5s");
  CHECK(RelativeTime(kNow - 200'000, kNow) == "3m 20s ago");
  CHECK(RelativeTime(kNow + 3'600'000, kNow) == "in 1h");
  CHECK(RelativeTime(kNow + 7'500'000, kNow) == "in 2h 5m");
  CHECK(RelativeTime(kNow - 97'200'000, kNow) == "1d 3h ago");
}

// Stores object `uid` named `name` as handled (by its create) at `handled_at_ms`.
void Handled(StateStore& store, const std::string& uid, const std::string& name, int64_t handled_at_ms) {
  ObjectRecord o = SampleObject(uid);
  o.name = name;
  o.handled_at_ms = handled_at_ms;
  REQUIRE(store.RecordHandled(o, "create").ok());
}

// Stores `retries` failed attempts of `handler` on object `uid` named `name`, the last saying `message`.
void Failing(StateStore& store, const std::string& uid, const std::string& name, const std::string& handler,
             int retries, int64_t next_attempt_ms, const std::string& message) {
  HandlerRecord h = SampleHandler(uid, handler);
  h.name = name;
  h.retries = retries;
  h.next_attempt_ms = next_attempt_ms;
  h.last_message = message;
  REQUIRE(store.RecordAttempt(h).ok());
}

// One handled object with nothing pending, one failing create, one handled object whose update fails.
std::unique_ptr<SqliteStateStore> SampleState() {
  auto store = OpenStore(":memory:");
  Handled(*store, "u-quiet", "alpha", kNow - 300'000);
  Failing(*store, "u-new", "beta", "create", 3, kNow + 8'000, "exited 1: disk busy");
  Handled(*store, "u-changed", "gamma", kNow - 3'600'000);
  Failing(*store, "u-changed", "gamma", "update", 1, kNow - 2'000, std::string(100, 'm'));
  return store;
}

TEST_CASE("objects are collected with their handlers, whether or not they were ever handled") {
  auto store = SampleState();
  auto views = CollectObjectViews(*store);
  REQUIRE(views.ok());
  REQUIRE(views->size() == 3);
  CHECK((*views)[0].name == "alpha");
  CHECK((*views)[0].handled_at_ms.has_value());
  CHECK((*views)[0].handlers.empty());
  CHECK((*views)[1].name == "beta");
  CHECK_FALSE((*views)[1].handled_at_ms.has_value());
  CHECK((*views)[1].handlers.size() == 1);
  CHECK((*views)[2].name == "gamma");
  CHECK((*views)[2].handlers.at(0).handler == "update");
}

TEST_CASE("the table shows one line per handler with outcome, retries, next attempt and message") {
  auto store = SampleState();
  std::string table = FormatObjectTable(*CollectObjectViews(*store), kNow);
  std::string expected =
      "RESOURCE                OBJECT    UID        HANDLER  OUTCOME  RETRIES  NEXT ATTEMPT  MESSAGE\n"
      "widgets.example.com/v1  ns/alpha  u-quiet    -        handled  0        -             handled 5m ago\n"
      "widgets.example.com/v1  ns/beta   u-new      create   failed   3        in 8s         exited 1: disk busy\n"
      "widgets.example.com/v1  ns/gamma  u-changed  update   failed   1        2s ago        " +
      std::string(57, 'm') + "...\n";
  CHECK(table == expected);
}

TEST_CASE("an empty state says so") {
  auto store = OpenStore(":memory:");
  CHECK_THAT(FormatObjectTable(*CollectObjectViews(*store), kNow), Catch::EndsWith("(no objects)\n"));
}

TEST_CASE("the JSON list carries every handler field with epoch and relative times") {
  auto store = SampleState();
  std::string json = ObjectsToJson(*CollectObjectViews(*store), kNow, /*with_diffbase=*/false);
  CHECK_THAT(json, Catch::StartsWith(R"([{"resource":"widgets.example.com/v1","namespace":"ns","name":"alpha",)"
                                     R"("uid":"u-quiet","handled":true,"handled_at_ms":1699999700000,)"
                                     R"("handled_at_ms_relative":"5m ago","handlers":[]},)"));
  CHECK_THAT(json, Catch::Contains(R"({"handler":"create","outcome":"failed","retries":3,)"
                                   R"("next_attempt_ms":1700000008000,"next_attempt_ms_relative":"in 8s",)"));
  CHECK_THAT(json, Catch::Contains(R"("last_message":"exited 1: disk busy","target":"sha256:abc"})"));
  CHECK_THAT(json, !Catch::Contains("essence"));
}

TEST_CASE("show describes one object, its diffbase embedded as JSON") {
  auto store = SampleState();
  auto view = CollectObjectView(*store, "u-changed");
  REQUIRE(view.ok());
  std::string detail = FormatObjectDetail(*view, kNow);
  CHECK_THAT(detail, Catch::StartsWith("object:    ns/gamma\nresource:  widgets.example.com/v1\nuid:       u-changed\n"
                                       "handled:   1h ago (1699996400000 ms)\nessence:   {\"spec\":{\"size\":3}}\n"
                                       "handler update:\n  outcome:       failed\n  retries:       1\n"
                                       "  next attempt:  2s ago\n"));
  CHECK_THAT(ObjectToJson(*view, kNow), Catch::Contains(R"("essence":{"spec":{"size":3}},)"));
}

TEST_CASE("show tells a rollout's node steps: the step, whose cordon, the pods left and the evictions") {
  auto store = SampleState();
  NodeStepsRecord steps;
  steps.uid = "u-changed";
  steps.resource = "widgets.example.com/v1";
  steps.state = "abc";
  steps.step = "draining";
  steps.cordoned = true;
  steps.step_started_ms = kNow - 90'000;
  steps.pods_left = "shop/db-0\nshop/web-1\n";
  steps.evictions = 5;
  steps.message = "shop/db-0: Cannot evict pod as it would violate the pod's disruption budget.";
  REQUIRE(store->PutNodeSteps(steps).ok());
  auto view = FindObjectView(*store, "u-changed");
  REQUIRE(view.ok());
  CHECK_THAT(FormatObjectDetail(*view, kNow),
             Catch::EndsWith("node steps (its rollout's, on this node):\n"
                             "  step:          draining, since 1m 30s ago\n"
                             "  cordon:        ours (the Node carries this rollout's mark)\n"
                             "  pods left:     shop/db-0 shop/web-1 \n"
                             "  evictions:     5 calls\n"
                             "  last word:     shop/db-0: Cannot evict pod as it would violate the pod's disruption "
                             "budget.\n"));
  CHECK_THAT(ObjectToJson(*view, kNow), Catch::Contains(R"("node_steps":{"step":"draining","state":"abc",)"));
  auto quiet = FindObjectView(*store, "u-quiet");
  CHECK(FormatObjectDetail(*quiet, kNow).find("node steps") == std::string::npos);
  // A reboot recorded: whether its command ran yet.
  steps.step = "rebooting";
  steps.pods_left.clear();
  steps.evictions = 0;
  steps.message.clear();
  steps.boot_id = "boot-1";
  REQUIRE(store->PutNodeSteps(steps).ok());
  CHECK_THAT(FormatObjectDetail(*FindObjectView(*store, "u-changed"), kNow),
             Catch::EndsWith("  boot ID:       boot-1 (before the reboot; the reboot command has not run yet)\n"));
  steps.reboot_started = true;
  REQUIRE(store->PutNodeSteps(steps).ok());
  CHECK_THAT(FormatObjectDetail(*FindObjectView(*store, "u-changed"), kNow),
             Catch::EndsWith("  boot ID:       boot-1 (before the reboot; the reboot command ran)\n"));
  CHECK_THAT(ObjectToJson(*FindObjectView(*store, "u-changed"), kNow),
             Catch::Contains(R"("boot_id":"boot-1","reboot_started":true,)"));
}

TEST_CASE("show of an unknown uid is not found, naming the node") {
  auto store = SampleState();
  auto view = CollectObjectView(*store, "nope");
  REQUIRE_FALSE(view.ok());
  CHECK(view.status().code() == StatusCode::kNotFound);
  CHECK(view.status().message() == "node node-a has no state for uid nope");
}

TEST_CASE("an object is found by namespace/name as well as by uid") {
  auto store = SampleState();
  auto by_name = FindObjectView(*store, "ns/gamma");
  REQUIRE(by_name.ok());
  CHECK(by_name->uid == "u-changed");
  auto by_uid = FindObjectView(*store, "u-changed");
  REQUIRE(by_uid.ok());
  CHECK(by_uid->name == "gamma");
  auto unknown = FindObjectView(*store, "ns/delta");
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK_THAT(unknown.status().message(), Catch::StartsWith("node node-a has no state for uid or object ns/delta"));
}

TEST_CASE("a name that several objects share is refused with a list of their resources and uids") {
  auto store = SampleState();
  ObjectRecord gadget = SampleObject("u-gadget", "gadgets.example.com/v1");
  gadget.name = "gamma";
  REQUIRE(store->RecordHandled(gadget, "create").ok());
  auto found = FindObjectView(*store, "ns/gamma");
  REQUIRE_FALSE(found.ok());
  CHECK(found.status().code() == StatusCode::kInvalid);
  CHECK(found.status().message() ==
        "ns/gamma names 2 objects on node node-a; pass one of their uids instead:\n"
        "  gadgets.example.com/v1 ns/gamma uid u-gadget\n"
        "  widgets.example.com/v1 ns/gamma uid u-changed");
}

TEST_CASE("a permanent failure shows no next attempt in the table, the details or JSON") {
  auto store = SampleState();
  HandlerRecord given_up = *(*store->GetHandler("u-new", "create"));
  given_up.last_outcome = kOutcomePermanentFailure;
  given_up.next_attempt_ms = 0;  // what the reconciler stores: would read as "53y ago"
  REQUIRE(store->RecordAttempt(given_up).ok());
  auto view = CollectObjectView(*store, "u-new");
  REQUIRE(view.ok());
  CHECK_THAT(FormatObjectTable({*view}, kNow),
             Catch::Contains("create   permanent_failure  3        -             exited 1: disk busy"));
  CHECK_THAT(FormatObjectDetail(*view, kNow),
             Catch::Contains("  next attempt:  none (gave up; `nodehook state retry` runs it once more)\n"));
  CHECK_THAT(ObjectToJson(*view, kNow), Catch::Contains(R"("next_attempt_ms":null,"next_attempt_ms_relative":"",)"));
  CHECK_THAT(FormatObjectTable({*view}, kNow), !Catch::Contains("ago"));
}

TEST_CASE("a retry request makes the handlers due now and waits for the agent to take it once") {
  auto store = SampleState();
  REQUIRE(store->RequestRetry("u-new", "", kNow + 1).ok());
  CHECK((*store->GetHandler("u-new", "create"))->next_attempt_ms == kNow + 1);

  auto taken = store->TakeRetryRequests();
  REQUIRE(taken.ok());
  REQUIRE(taken->size() == 1);
  CHECK((*taken)[0].uid == "u-new");
  CHECK((*taken)[0].handler.empty());
  CHECK((*taken)[0].requested_at_ms == kNow + 1);
  CHECK(store->TakeRetryRequests()->empty());
}

TEST_CASE("a retry of one handler leaves the object's other handlers alone") {
  auto store = SampleState();
  HandlerRecord resume = SampleHandler("u-changed", "resume");
  REQUIRE(store->RecordAttempt(resume).ok());
  REQUIRE(store->RequestRetry("u-changed", "update", kNow).ok());
  CHECK((*store->GetHandler("u-changed", "update"))->next_attempt_ms == kNow);
  CHECK((*store->GetHandler("u-changed", "resume"))->next_attempt_ms == resume.next_attempt_ms);
}

TEST_CASE("a retry with nothing pending is refused and leaves no request behind") {
  auto store = SampleState();
  Status status = store->RequestRetry("u-quiet", "", kNow).status();
  CHECK(status.code() == StatusCode::kNotFound);
  CHECK(status.message() == "no pending handler for uid u-quiet on node node-a that could run: nothing to retry");
  CHECK(store->RequestRetry("u-new", "delete", kNow).status().message() ==
        "no pending handler delete for uid u-new on node node-a that could run: nothing to retry");
  CHECK(store->TakeRetryRequests()->empty());
}

TEST_CASE("forgetting an object also drops its retry requests") {
  auto store = SampleState();
  REQUIRE(store->RequestRetry("u-new", "create", kNow).ok());
  REQUIRE(store->Forget("u-new").ok());
  CHECK(store->TakeRetryRequests()->empty());
}

}  // namespace
}  // namespace nodehook
