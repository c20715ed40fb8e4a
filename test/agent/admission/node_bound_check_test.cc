// The agent's self-check: a dry run of a write in another node's name, refused only by the rules.
#include <catch2/catch.hpp>

#include <thread>

#include "agent/admission/node_bound_check.h"
#include "agent/admission/node_bound_policy.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

using namespace nodehook;

namespace {

const char* const kRefusedByRules =
    "create events.k8s.io/v1/events in default: HTTP 403: events.events.k8s.io \"x\" is forbidden: "
    "ValidatingAdmissionPolicy 'nodehook-node-bound-events' with binding 'nodehook-node-bound-events' denied "
    "request: node n1 may write only as its own node (reportingInstance n1-self-check)";

}  // namespace

TEST_CASE("only a refusal by the node-bound rules counts as protected") {
  CHECK(JudgeSelfCheck(Status(StatusCode::kForbidden, kRefusedByRules)).answer == NodeBound::kProtected);
  CHECK(JudgeSelfCheck(Status::Ok()).answer == NodeBound::kUnprotected);
  // RBAC refusing the create says nothing about the rules.
  CHECK(JudgeSelfCheck(Status(StatusCode::kForbidden, "HTTP 403: User cannot create resource \"events\"")).answer ==
        NodeBound::kUnknown);
  // Another policy's refusal is not ours.
  CHECK(JudgeSelfCheck(Status(StatusCode::kForbidden, "HTTP 403: ValidatingAdmissionPolicy 'other' denied request"))
            .answer == NodeBound::kUnknown);
  CHECK(JudgeSelfCheck(Status(StatusCode::kUnavailable, "connection refused")).answer == NodeBound::kUnknown);
}

TEST_CASE("the dry-run Event is about this node, in another node's name") {
  std::string body = SelfCheckEventJson("node-1", TimePoint{});
  CHECK(body.find(R"("reportingInstance":"node-1-self-check")") != std::string::npos);
  CHECK(body.find(R"("regarding":{"apiVersion":"v1","kind":"Node","name":"node-1")") != std::string::npos);
  CHECK(body.find(R"("namespace":"default")") != std::string::npos);
}

TEST_CASE("the check sets the gauge and asks again sooner, backing off, while not protected") {
  FakeKubeClient client;
  FakeClock clock;
  Metrics metrics;
  NodeBoundCheckOptions options;
  options.node_name = "n1";
  options.metrics = &metrics;
  NodeBoundCheck check(client, clock, options);
  Gauge& gauge = metrics.GetGauge("node_bound", "");
  CHECK(gauge.value() == -1);
  client.QueueDryRunResult(Status(StatusCode::kUnavailable, "down"));
  client.QueueDryRunResult(Status(StatusCode::kForbidden, kRefusedByRules));
  client.QueueDryRunResult(Status::Ok());  // the rules were deleted
  client.QueueDryRunResult(Status::Ok());
  client.QueueDryRunResult(Status::Ok());
  CancelToken stop;
  std::thread runner([&] { check.Run(stop); });
  // Each step: move the clock, then wait until the loop is asleep again (having checked or not).
  auto step = [&](Duration d) {
    size_t sleeps = clock.sleeps();
    clock.Advance(d);
    while (clock.sleeps() == sleeps) std::this_thread::yield();
  };
  while (clock.sleeps() == 0) std::this_thread::yield();
  CHECK(check.Latest().answer == NodeBound::kUnknown);
  step(options.unknown_retry);
  CHECK(check.Latest().answer == NodeBound::kProtected);
  CHECK(gauge.value() == 1);
  step(options.unknown_retry);  // protected: the next check is an hour away
  CHECK(client.dry_run_bodies().size() == 2);
  step(options.every - options.unknown_retry);
  CHECK(client.dry_run_bodies().size() == 3);
  CHECK(check.Latest().answer == NodeBound::kUnprotected);
  CHECK(gauge.value() == 0);
  step(options.unknown_retry);  // a minute after the first unprotected answer
  CHECK(client.dry_run_bodies().size() == 4);
  step(options.unknown_retry);  // then two
  CHECK(client.dry_run_bodies().size() == 4);
  step(options.unknown_retry);
  CHECK(client.dry_run_bodies().size() == 5);
  stop.Cancel();
  runner.join();
}
