#include <catch2/catch.hpp>

#include <memory>

#include "agent/kube/client/rest_kube_client.h"
#include "test/agent/kube/transport/fake_http_transport.h"
#include "test/agent/kube/client/kube_test_data.h"

namespace nodehook {
namespace {

struct Fixture {
  Metrics metrics;
  FakeHttpTransport* transport;
  RestKubeClient client;
  CancelToken cancel;

  explicit Fixture(std::unique_ptr<FakeHttpTransport> t = std::make_unique<FakeHttpTransport>())
      : transport(t.get()), client(std::move(t), ObjectLimits{}, &metrics) {}

  bool Shows(const std::string& line) { return metrics.Render().find(line + "\n") != std::string::npos; }
};

TEST_CASE("API requests are counted by verb, resource and HTTP status, and transport failures as error") {
  Fixture f;
  f.transport->PushResponse(200, WidgetListJson("10", "", ""));
  f.transport->PushResponse(403, R"({"kind":"Status","code":403,"message":"forbidden"})");
  ScriptedResponse refused;
  refused.transport_error = UnavailableError("connection refused");
  f.transport->Push(refused);
  f.transport->PushResponse(200, "{}");
  REQUIRE(f.client.List(WidgetsRef(), ListOptions{}).ok());
  REQUIRE_FALSE(f.client.List(WidgetsRef(), ListOptions{}).ok());
  REQUIRE_FALSE(f.client.List(WidgetsRef(), ListOptions{}).ok());
  REQUIRE(f.client.Patch(ObjectRef{WidgetsRef(), "ns", "a"}, PatchType::kMerge, "{}").ok());
  const std::string widgets = "resource=\"widgets.example.com/v1\"";
  REQUIRE(f.Shows("nodehook_api_requests_total{code=\"200\"," + widgets + ",verb=\"list\"} 1"));
  REQUIRE(f.Shows("nodehook_api_requests_total{code=\"403\"," + widgets + ",verb=\"list\"} 1"));
  REQUIRE(f.Shows("nodehook_api_requests_total{code=\"error\"," + widgets + ",verb=\"list\"} 1"));
  REQUIRE(f.Shows("nodehook_api_requests_total{code=\"200\"," + widgets + ",verb=\"patch\"} 1"));
  REQUIRE(f.Shows("nodehook_api_request_duration_seconds_count{" + widgets + ",verb=\"list\"} 3"));
}

TEST_CASE("a watch is recorded once its headers arrive, before its stream ends, and only once") {
  Fixture f;
  const std::string watches = "nodehook_api_requests_total{code=\"200\",resource=\"widgets.example.com/v1\","
                              "verb=\"watch\"}";
  bool counted_during_stream = false;
  f.transport->PushStream({EventLine("ADDED", WidgetJson("a", "11"))});
  Status st = f.client.Watch(WidgetsRef(), WatchOptions{}, [&](WatchEvent) { counted_during_stream = f.Shows(watches + " 1"); },
                             f.cancel);
  REQUIRE(st.ok());
  REQUIRE(counted_during_stream);
  REQUIRE(f.Shows(watches + " 1"));
  REQUIRE(f.Shows("nodehook_api_request_duration_seconds_count{resource=\"widgets.example.com/v1\",verb=\"watch\"} 1"));
}

TEST_CASE("a request the agent cancelled itself is not counted as a server error") {
  Fixture f;
  ScriptedResponse cancelled;
  cancelled.transport_error = Status(StatusCode::kCancelled, "stopping");
  f.transport->Push(cancelled);
  REQUIRE_FALSE(f.client.List(WidgetsRef(), ListOptions{}).ok());
  REQUIRE(f.metrics.Render().find("code=\"error\"") == std::string::npos);
}

}  // namespace
}  // namespace nodehook
