#include <catch2/catch.hpp>

#include <fstream>

#include "test/agent/reconcile/reconciler_fixture.h"
#include "test/storage/store_samples.h"

using namespace nodehook;

TEST_CASE("a new object runs the create hook once and stores its diffbase") {
  Fixture f;
  auto r = Resource({"create", "update"});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 1);
  auto call = f.runner.calls()[0];
  REQUIRE(call.argv == std::vector<std::string>{"/hooks/create"});
  REQUIRE(FakeRunner::Env(call, "NODEHOOK_REASON") == "create");
  REQUIRE(FakeRunner::Env(call, "NODEHOOK_NODE") == "node-a");
  REQUIRE(FakeRunner::Env(call, "NODEHOOK_UID") == "u1");
  REQUIRE(FakeRunner::Env(call, "NODEHOOK_NAMESPACE") == "ns");
  REQUIRE(FakeRunner::Env(call, "NODEHOOK_NAME") == "w-u1");
  REQUIRE(FakeRunner::Env(call, "NODEHOOK_RETRY") == "0");
  REQUIRE(call.stdin_data.find(R"("size":1)") != std::string::npos);
  auto stored = f.store->GetObject("u1");
  REQUIRE(stored.ok());
  REQUIRE(stored->has_value());

  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 1);
}

TEST_CASE("a spec change runs the update hook with old, new and diff files") {
  Fixture f;
  auto r = f.Created(Resource({"create", "update"}));
  std::string old_file_content, new_file_content, diff_content;
  f.runner.OnRun([&](const ActionRequest& req) {
    old_file_content = ReadFile(FakeRunner::Env(req, "NODEHOOK_OLD_FILE"));
    new_file_content = ReadFile(FakeRunner::Env(req, "NODEHOOK_NEW_FILE"));
    diff_content = ReadFile(FakeRunner::Env(req, "NODEHOOK_DIFF_FILE"));
  });
  f.cache.Upsert(Widget("u1", "2", 2));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 2);
  REQUIRE(f.LastReason() == "update");
  REQUIRE(old_file_content.find(R"("size":1)") != std::string::npos);
  REQUIRE(new_file_content.find(R"("size":2)") != std::string::npos);
  REQUIRE(diff_content == R"([{"op":"change","path":["spec","size"],"old":1,"new":2}])");
}

TEST_CASE("a status-only change runs nothing") {
  Fixture f;
  auto r = f.Created(Resource({"create", "update"}));
  f.cache.Upsert(Widget("u1", "2", 1, "Degraded"));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 1);
}

TEST_CASE("a failing hook is retried with growing delays and its retry count reaches the hook") {
  Fixture f;
  auto r = Resource({"create"});
  f.runner.QueueExitCodes({1, 1});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  // Not due yet: the hook does not run, and the remaining time comes back.
  f.clock.Advance(Duration(400));
  REQUIRE(f.Reconcile(r, "u1") == Duration(600));
  REQUIRE(f.runner.call_count() == 1);
  f.clock.Advance(Duration(600));
  REQUIRE(f.Reconcile(r, "u1") == Duration(2000));
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "1");
  auto progress = f.store->GetHandler("u1", "create");
  REQUIRE((*progress)->retries == 2);
  REQUIRE((*progress)->last_outcome == "failed");
  f.clock.Advance(Duration(2000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "2");
  REQUIRE_FALSE(f.store->GetHandler("u1", "create")->has_value());
}

TEST_CASE("retry delays are capped") {
  Fixture f;
  REQUIRE(f.policy.RetryDelay(1) == Duration(1000));
  REQUIRE(f.policy.RetryDelay(3) == Duration(4000));
  REQUIRE(f.policy.RetryDelay(30) == Duration(8000));
}

TEST_CASE("retry state survives a restart of the reconciler") {
  Fixture f;
  f.runner.QueueExitCodes({1});
  auto r = f.Created(Resource({"create"}));
  f.Restart();  // a new process on the same state file
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  f.clock.Advance(Duration(1000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "1");
}

TEST_CASE("after a restart an unchanged object runs nothing, or resume when there is a resume hook") {
  Fixture f;
  auto plain = Resource({"create", "update"});
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(plain, "u1");
  f.Restart();
  REQUIRE_FALSE(f.Reconcile(plain, "u1"));
  REQUIRE(f.runner.call_count() == 1);

  auto with_resume = Resource({"create", "update", "resume"});
  f.Restart();
  f.Reconcile(with_resume, "u1");
  REQUIRE(f.runner.call_count() == 2);
  REQUIRE(f.LastReason() == "resume");
  f.Reconcile(with_resume, "u1");
  REQUIRE(f.runner.call_count() == 2);  // once per start, not per look
}

TEST_CASE("a change made while the agent was down is an update after restart") {
  Fixture f;
  auto r = f.Created(Resource({"create", "update"}));
  f.Restart();
  ObjectCache fresh;
  fresh.Upsert(Widget("u1", "7", 3));
  f.reconciler->Reconcile(f.Context(r, fresh), "u1", f.stop);
  REQUIRE(f.LastReason() == "update");
}

TEST_CASE("a vanished object that this node handled runs delete with its last state, then is forgotten") {
  Fixture f;
  auto r = f.Created(Resource({"create", "delete"}));
  f.cache.MarkGone("u1", nullptr);  // as after a relist that no longer has it
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.LastReason() == "delete");
  REQUIRE(f.runner.calls().back().stdin_data.find(R"("size":1)") != std::string::npos);
  REQUIRE_FALSE(f.store->GetObject("u1")->has_value());
  REQUIRE_FALSE(f.cache.Get("u1").has_value());
}

TEST_CASE("a failing delete hook keeps the object remembered and retries") {
  Fixture f;
  auto r = f.Created(Resource({"create", "delete"}));
  f.runner.QueueExitCodes({2});
  f.cache.MarkGone("u1", Widget("u1", "2", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  REQUIRE(f.store->GetObject("u1")->has_value());
  f.clock.Advance(Duration(1000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "1");
  REQUIRE_FALSE(f.store->GetObject("u1")->has_value());
}

TEST_CASE("an object deleted before this node ever handled it runs nothing") {
  Fixture f;
  auto r = Resource({"create", "delete"});
  f.cache.MarkGone("u9", Widget("u9", "3", 1));
  REQUIRE_FALSE(f.Reconcile(r, "u9"));
  REQUIRE(f.runner.call_count() == 0);
}

TEST_CASE("a deletion timestamp runs delete once, not again on later modifications") {
  Fixture f;
  auto r = f.Created(Resource({"create", "delete"}));
  f.cache.Upsert(Widget("u1", "2", 1, "Ready", /*deleting=*/true));
  f.Reconcile(r, "u1");
  REQUIRE(f.LastReason() == "delete");
  f.cache.Upsert(Widget("u1", "3", 1, "Terminating", /*deleting=*/true));
  f.Reconcile(r, "u1");
  REQUIRE(f.runner.call_count() == 2);
}

TEST_CASE("a reason without a hook still moves the diffbase forward") {
  Fixture f;
  auto r = f.Created(Resource({"create"}));
  f.cache.Upsert(Widget("u1", "2", 2));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 1);
  REQUIRE((*f.store->GetObject("u1"))->essence.find(R"("size":2)") != std::string::npos);
}

namespace {
void WriteResult(const ActionRequest& req, const std::string& json) {
  std::ofstream(FakeRunner::Env(req, "NODEHOOK_RESULT_FILE")) << json;
}
}  // namespace

TEST_CASE("exit 75 retries later after the delay the hook asked for, with its message") {
  Fixture f;
  auto r = Resource({"create"});
  f.runner.QueueExitCodes({75});
  f.runner.OnRun([](const ActionRequest& req) {
    WriteResult(req, R"({"delay_seconds": 30, "message": "volume still attached"})");
  });
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(30'000));
  auto progress = *f.store->GetHandler("u1", "create");
  REQUIRE(progress->last_outcome == "retry_later");
  REQUIRE(progress->last_message == "volume still attached");
  REQUIRE(progress->retries == 1);
}

TEST_CASE("exit 100 means in progress: not an error, no retry counted, run again after the delay") {
  Fixture f;
  auto r = Resource({"create"});
  f.runner.QueueExitCodes({100, 100});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(10'000));  // the default in-progress delay
  auto progress = *f.store->GetHandler("u1", "create");
  REQUIRE(progress->last_outcome == "in_progress");
  REQUIRE(progress->retries == 0);
  f.clock.Advance(Duration(10'000));
  REQUIRE(f.Reconcile(r, "u1") == Duration(10'000));
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "0");
  f.clock.Advance(Duration(10'000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 3);
  REQUIRE((*f.store->GetObject("u1")).has_value());
}

TEST_CASE("an in-progress hook runs again at once when the object changes") {
  Fixture f;
  f.runner.QueueExitCodes({100});
  auto r = f.Created(Resource({"create"}));
  f.cache.Upsert(Widget("u1", "2", 2));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 2);
}

TEST_CASE("a handler that reaches its retry limit fails permanently until the object changes") {
  Fixture f;
  RetryOptions retry = TestRetryOptions();
  retry.limit = 2;
  BackoffRetryPolicy policy(f.clock, retry);
  ReconcilerOptions o{"node-a", f.work_dir};
  f.reconciler = std::make_unique<Reconciler>(*f.store, f.runner, f.clock, policy, f.reporter, o);
  auto r = Resource({"create"});
  f.runner.QueueExitCodes({1, 1});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  f.clock.Advance(Duration(1000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));  // second failure: permanent
  REQUIRE((*f.store->GetHandler("u1", "create"))->last_outcome == "permanent_failure");
  f.clock.Advance(Duration(3'600'000));
  f.reconciler = std::make_unique<Reconciler>(*f.store, f.runner, f.clock, policy, f.reporter, o);  // not even after a restart
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 2);
  f.cache.Upsert(Widget("u1", "2", 2));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 3);
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_RETRY") == "0");
}

TEST_CASE("a hook's own max_retries overrides the default limit") {
  Fixture f;
  auto r = Resource({"create"});
  r.hooks["create"].max_retries = 1;
  f.runner.QueueExitCodes({1});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE((*f.store->GetHandler("u1", "create"))->last_outcome == "permanent_failure");
}

TEST_CASE("a handler gives up once its total retry time is spent") {
  Fixture f;
  auto r = Resource({"create"});
  r.hooks["create"].max_total_seconds = 5;
  f.runner.QueueExitCodes({1, 1, 1, 1});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  f.clock.Advance(Duration(1000));
  REQUIRE(f.Reconcile(r, "u1") == Duration(2000));
  f.clock.Advance(Duration(2000));
  REQUIRE(f.Reconcile(r, "u1") == Duration(4000));
  f.clock.Advance(Duration(4000));  // 7 s after the first attempt
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE((*f.store->GetHandler("u1", "create"))->last_outcome == "permanent_failure");
}

TEST_CASE("a malformed result file is reported and never turns a failure into success") {
  Fixture f;
  auto r = Resource({"create"});
  f.runner.QueueExitCodes({3});
  f.runner.OnRun([](const ActionRequest& req) { WriteResult(req, R"({"delay_seconds": "soon", "colour": 1})"); });
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));
  auto progress = *f.store->GetHandler("u1", "create");
  REQUIRE(progress->last_outcome == "failed");
  REQUIRE(progress->last_message.find("delay_seconds: expected a number >= 0") != std::string::npos);
  REQUIRE(progress->last_message.find("colour: unknown key") != std::string::npos);
}

TEST_CASE("retry delays grow by the configured factor and jitter stays within its bounds") {
  Fixture f;
  RetryOptions o;
  o.base = Duration(1000);
  o.max = Duration(100'000);
  o.factor = 3;
  o.jitter = 0.1;
  o.seed = 5;
  BackoffRetryPolicy rec(f.clock, o);
  for (int i = 0; i < 50; ++i) {
    Duration d = rec.RetryDelay(3);  // 9 s +- 10 %
    REQUIRE(d >= Duration(8100));
    REQUIRE(d <= Duration(9900));
  }
}

TEST_CASE("after a state recovery the first list's objects are adopted without running create") {
  Fixture f;
  auto r = Resource({"create"});
  REQUIRE(f.store->SetAdoptExisting(true).ok());
  f.reconciler->ExpectAdoption(1);
  f.reconciler->AdoptOnce({"u1"});
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 0);
  REQUIRE(f.store->GetObject("u1")->has_value());
  REQUIRE_FALSE(*f.store->AdoptExistingPending());  // the last adoption clears the mark
  f.cache.Upsert(Widget("u2", "2", 1));             // a new object after the first list
  f.Reconcile(r, "u2");
  REQUIRE(f.LastReason() == "create");
}

namespace {
std::vector<std::string> EventsSeen(const FakeRunner& runner) {
  std::vector<std::string> seen;
  for (const auto& call : runner.calls()) {
    if (FakeRunner::Env(call, "NODEHOOK_REASON") == "event") {
      seen.push_back(FakeRunner::Env(call, "NODEHOOK_EVENT") + "/" + FakeRunner::Env(call, "NODEHOOK_RETRY"));
    }
  }
  return seen;
}
}  // namespace

TEST_CASE("event hooks run once per stored event, in order, even after the object is gone") {
  Fixture f;
  auto r = Resource({"event"});
  for (auto [type, size] : {std::pair{"ADDED", 1}, {"MODIFIED", 2}, {"DELETED", 2}}) {
    REQUIRE(f.store->AppendEvent(SampleEvent("u1", type, size)).ok());
  }
  REQUIRE_FALSE(f.Reconcile(r, "u1"));  // nothing in the cache: the object is long gone
  REQUIRE(EventsSeen(f.runner) == std::vector<std::string>{"ADDED/0", "MODIFIED/0", "DELETED/0"});
  REQUIRE(f.runner.calls()[1].stdin_data.find(R"("size":2)") != std::string::npos);
  REQUIRE(f.store->PendingEvents("u1")->empty());
}

TEST_CASE("a failing event hook is retried durably and later events wait for it") {
  Fixture f;
  auto r = Resource({"event"});
  REQUIRE(f.store->AppendEvent(SampleEvent("u1", "ADDED", 1)).ok());
  REQUIRE(f.store->AppendEvent(SampleEvent("u1", "MODIFIED", 2)).ok());
  f.runner.QueueExitCodes({0, 1, 1});
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));  // ADDED done, MODIFIED failed once
  f.Restart();                 // a restart
  REQUIRE(f.Reconcile(r, "u1") == Duration(1000));   // not due yet: the stored delay holds
  f.clock.Advance(Duration(1000));
  REQUIRE(f.Reconcile(r, "u1") == Duration(2000));
  f.clock.Advance(Duration(2000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(EventsSeen(f.runner) == std::vector<std::string>{"ADDED/0", "MODIFIED/0", "MODIFIED/1", "MODIFIED/2"});
}

TEST_CASE("a hook's start is stored before it runs, with the object it works on") {
  Fixture f;
  auto r = Resource({"create"});
  std::optional<HandlerRecord> during;
  f.runner.OnRun([&](const ActionRequest&) { during = *f.store->GetHandler("u1", "create"); });
  f.cache.Upsert(Widget("u1", "1", 1));
  f.Reconcile(r, "u1");
  REQUIRE(during.has_value());
  REQUIRE(during->last_outcome == "running");
  REQUIRE(during->last_object.find(R"("size":1)") != std::string::npos);
  REQUIRE_FALSE(f.store->GetHandler("u1", "create")->has_value());  // done: the marker is gone
}

TEST_CASE("an object deleted while the agent was down, whose create was running at the crash, gets its delete") {
  Fixture f;
  auto r = Resource({"create", "delete"});
  // What a crash during the create hook leaves behind: a running marker, no diffbase.
  HandlerRecord running;
  running.uid = "u1";
  running.handler = "create";
  running.resource = "widgets.example.com/v1";
  running.namespace_name = "ns";
  running.name = "w-u1";
  running.last_outcome = "running";
  running.last_object = Widget("u1", "1", 1)->json;
  REQUIRE(f.store->RecordAttempt(running).ok());
  f.cache.MarkGone("u1", nullptr);  // the relist after the restart no longer has it
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.LastReason() == "delete");
  REQUIRE(FakeRunner::Env(f.runner.calls().back(), "NODEHOOK_NAME") == "w-u1");
  REQUIRE(f.runner.calls().back().stdin_data.find(R"("size":1)") != std::string::npos);
  REQUIRE(f.store->ListHandlers("u1")->empty());
}

TEST_CASE("with the disk full no hook is reported done; once there is room the change is stored") {
  Fixture f;
  auto r = Resource({"create"});
  std::string big(64 * 1024, 'x');  // larger than the free pages of a capped file
  auto widget = std::make_shared<KubeObject>(*Widget("u1", "1", 1));
  widget->json.insert(widget->json.size() - 1, R"(,"data":")" + big + "\"");
  f.cache.Upsert(widget);
  REQUIRE(f.store->SetMaxPageCountForTesting(1).ok());  // no room beyond what the file has
  REQUIRE(f.Reconcile(r, "u1") == Duration(5000));      // the hook ran, but nothing says it is done
  REQUIRE(f.runner.call_count() == 1);
  REQUIRE_FALSE(f.store->GetObject("u1")->has_value());
  REQUIRE(f.store->SetMaxPageCountForTesting(0).ok());  // space is back
  f.clock.Advance(Duration(5000));
  REQUIRE_FALSE(f.Reconcile(r, "u1"));
  REQUIRE(f.runner.call_count() == 2);  // at-least-once: it ran again, then was stored
  REQUIRE(f.store->GetObject("u1")->has_value());
}

TEST_CASE("after a failed store write the reconciler waits as long as the store-retry delay it is given says") {
  Fixture f;
  auto r = Resource({"create"});
  std::string big(64 * 1024, 'x');
  auto widget = std::make_shared<KubeObject>(*Widget("u1", "1", 1));
  widget->json.insert(widget->json.size() - 1, R"(,"data":")" + big + "\"");
  f.cache.Upsert(widget);
  Duration asked{20'000};
  int asks = 0;
  RetryOptions retry = TestRetryOptions();
  retry.store_backoff = [&] {
    ++asks;
    return asked;
  };
  BackoffRetryPolicy policy(f.clock, retry);
  f.reconciler = std::make_unique<Reconciler>(*f.store, f.runner, f.clock, policy, f.reporter,
                                              ReconcilerOptions{"node-a", f.work_dir});
  REQUIRE(f.store->SetMaxPageCountForTesting(1).ok());
  CHECK(f.Reconcile(r, "u1") == Duration(20'000));  // not the fixed 5 s
  CHECK(asks >= 1);
  asked = Duration(40'000);
  CHECK(f.Reconcile(r, "u1") == Duration(40'000));  // asked again each time: it may back off
}

TEST_CASE("a hook asking for an absurd delay waits a day, never a negative time in a hot loop") {
  Fixture f;
  auto r = Resource({"create"});
  f.runner.QueueExitCodes({75});
  f.runner.OnRun([](const ActionRequest& req) { WriteResult(req, R"({"delay_seconds": 1e33})"); });
  f.cache.Upsert(Widget("u1", "1", 1));
  REQUIRE(f.Reconcile(r, "u1") == kMaxHookDelay);
  auto progress = *f.store->GetHandler("u1", "create");
  REQUIRE(progress->next_attempt_ms == ToMillis(f.clock.Now() + kMaxHookDelay));
  REQUIRE(progress->last_message.find("1e+33 is more than the maximum 86400") != std::string::npos);
}
