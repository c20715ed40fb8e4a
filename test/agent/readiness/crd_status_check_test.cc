#include "agent/readiness/crd_status_check.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_client.h"

namespace nodehook {
namespace {

WatchedResource Widgets() {
  WatchedResource r;
  r.ref = ResourceRef{"example.com", "v1", "widgets", "", ""};
  r.ready_condition = "Ready";
  return r;
}

std::string Crd(const std::string& version) {
  return R"({"metadata":{"name":"widgets.example.com"},"spec":{"versions":[)" + version + "]}}";
}

TEST_CASE("a CRD keeps the condition with a status subresource whose schema keeps status.conditions") {
  const WatchedResource r = Widgets();
  CHECK(CheckCrdKeepsConditions(Crd(R"({"name":"v1","subresources":{"status":{}},"schema":{"openAPIV3Schema":{
      "type":"object","properties":{"status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}})"), r).ok());
  CHECK(CheckCrdKeepsConditions(Crd(R"({"name":"v1","subresources":{"status":{}},"schema":{"openAPIV3Schema":{
      "type":"object","properties":{"status":{"type":"object","properties":{"conditions":{"type":"array",
      "items":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}}}})"), r).ok());
}

TEST_CASE("a CRD that would lose the condition is refused, naming the CRD and what it lacks") {
  const WatchedResource r = Widgets();
  Status no_status = CheckCrdKeepsConditions(Crd(R"({"name":"v1","schema":{"openAPIV3Schema":{"type":"object"}}})"), r);
  CHECK(no_status.code() == StatusCode::kInvalid);
  CHECK(no_status.message().find("CustomResourceDefinition widgets.example.com version v1 has no status subresource") !=
        std::string::npos);
  Status pruned = CheckCrdKeepsConditions(Crd(R"({"name":"v1","subresources":{"status":{}},"schema":{"openAPIV3Schema":{
      "type":"object","properties":{"status":{"type":"object","properties":{"phase":{"type":"string"}}}}}}})"), r);
  CHECK(pruned.code() == StatusCode::kInvalid);
  CHECK(pruned.message().find("no status.conditions list") != std::string::npos);
  CHECK(CheckCrdKeepsConditions(Crd(R"({"name":"v2","subresources":{"status":{}}})"), r).message().find(
            "has no version v1") != std::string::npos);
}

// A clock whose waits end at once at their deadline (no thread needed); `on_sleep` runs first.
class JumpingClock final : public Clock {
 public:
  explicit JumpingClock(std::function<void()> on_sleep) : on_sleep_(std::move(on_sleep)) {}
  TimePoint Now() const override { return now_; }
  bool WaitUntil(std::condition_variable&, std::unique_lock<std::mutex>&, TimePoint deadline,
                 const std::function<bool()>& pred) override {
    if (pred()) return true;
    ++sleeps;
    on_sleep_();
    now_ = std::max(now_, deadline);
    return pred();
  }
  int sleeps = 0;

 private:
  std::function<void()> on_sleep_;
  TimePoint now_{};
};

TEST_CASE("a missing CRD is refused; one that cannot be read yet is read again until it can") {
  FakeKubeClient client;
  Config config;
  config.resources.push_back(Widgets());
  FakeClock clock;
  CancelToken stop;
  Status missing = CheckReadyConditionCrds(client, config, stop, clock, Duration(10));
  CHECK(missing.code() == StatusCode::kInvalid);
  CHECK(missing.message().find("no CustomResourceDefinition widgets.example.com") != std::string::npos);

  client.PutObject(KubeObject{ObjectMeta{"uid", "", "widgets.example.com", "1", false},
                              Crd(R"({"name":"v1","subresources":{"status":{}}})")});
  // The server comes back after three more reads; the check sleeps between them.
  client.FailGets(UnavailableError("server away"));
  JumpingClock jumping([&] {
    if (client.get_call_count() >= 4) client.FailGets(Status::Ok());
  });
  CHECK(CheckReadyConditionCrds(client, config, stop, jumping, Duration(10)).ok());
  CHECK(client.get_call_count() == 5);
  CHECK(jumping.sleeps == 3);
}

}  // namespace
}  // namespace nodehook
