// KubeRolloutCluster: what `kubectl nodehook rollout|wait` sends to the API server, checked on
// the wire (a scripted transport), and what it makes of the answers.
#include <catch2/catch.hpp>

#include "agent/kubectl/rollout_cluster.h"
#include "agent/kube/client/rest_kube_client.h"
#include "test/agent/kubectl/rollout_fakes.h"
#include "test/agent/kube/transport/fake_http_transport.h"

namespace nodehook {
namespace {

struct Wire {
  FakeHttpTransport* api = nullptr;
  FakeHttpTransport* raw = nullptr;
  std::unique_ptr<RolloutCluster> cluster;
  Wire() {
    auto a = std::make_unique<FakeHttpTransport>();
    auto r = std::make_unique<FakeHttpTransport>();
    api = a.get();
    raw = r.get();
    cluster = NewKubeRolloutCluster(std::make_unique<RestKubeClient>(std::move(a)), std::move(r), "nodehook-sys");
  }
};

TEST_CASE("rollout Leases are listed by label in the agents' namespace; unreadable ones are skipped") {
  Wire w;
  RolloutLease node = NodeLease("node-a", RolloutPolicy{});
  std::string good = RolloutLeaseJson("nodehook-sys", RolloutId(kWidgets), node);
  good.replace(good.find("\"metadata\":{"), 12, R"("metadata":{"uid":"l1",)");  // as stored: with a uid
  std::string odd = R"({"metadata":{"name":"x","namespace":"nodehook-sys","uid":"l2","labels":{"nodehook.io/rollout":"r"}}})";
  w.api->PushResponse(200, R"({"kind":"LeaseList","metadata":{"resourceVersion":"9"},"items":[)" + good + "," + odd + "]}");
  auto leases = w.cluster->ListRolloutLeases();
  REQUIRE(leases.ok());
  REQUIRE(leases->size() == 1);
  CHECK((*leases)[0].holder == "node-a");
  CHECK((*leases)[0].resource == kWidgets);
  CHECK_THAT(w.api->requests().at(0).path_and_query,
             Catch::StartsWith("/apis/coordination.k8s.io/v1/namespaces/nodehook-sys/leases?") &&
                 Catch::Contains("labelSelector=nodehook.io%2Frollout"));
}

TEST_CASE("node labels come from the Node list; a group's preferred version from its discovery document") {
  Wire w;
  w.api->PushResponse(200, R"({"kind":"NodeList","metadata":{"resourceVersion":"3"},"items":[
      {"metadata":{"name":"node-a","uid":"n1","labels":{"nodehook.io/rollout-hold":"","zone":"z1"}}},
      {"metadata":{"name":"node-b","uid":"n2"}}]})");
  auto labels = w.cluster->NodeLabels();
  REQUIRE(labels.ok());
  CHECK(labels->at("node-a").count("nodehook.io/rollout-hold") == 1);
  CHECK(labels->at("node-b").empty());
  CHECK_THAT(w.api->requests().at(0).path_and_query, Catch::StartsWith("/api/v1/nodes"));

  w.raw->PushResponse(200, R"({"kind":"APIGroup","name":"example.com","preferredVersion":{"groupVersion":"example.com/v2","version":"v2"}})");
  CHECK(w.cluster->PreferredVersion("example.com").value() == "v2");
  CHECK(w.raw->requests().at(0).path_and_query == "/apis/example.com");
  CHECK(w.cluster->PreferredVersion("").value() == "v1");  // the core group: no request
  w.raw->PushResponse(404, R"({"kind":"Status","message":"the server could not find the requested resource"})");
  auto missing = w.cluster->PreferredVersion("nope.io");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
}

TEST_CASE("pause and resume reach the object as a merge patch") {
  Wire w;
  w.api->PushResponse(200, "{}");
  ObjectRef ref{ResourceRef{"example.com", "v1", "widgets", "team-a", ""}, "team-a", "w1"};
  REQUIRE(w.cluster->MergePatchObject(ref, R"({"metadata":{}})").ok());
  const HttpRequest& req = w.api->requests().at(0);
  CHECK(req.method == "PATCH");
  CHECK(req.path_and_query == "/apis/example.com/v1/namespaces/team-a/widgets/w1");
  bool merge = false;
  for (const auto& [k, v] : req.headers) merge = merge || (k == "Content-Type" && v == "application/merge-patch+json");
  CHECK(merge);
}

}  // namespace
}  // namespace nodehook
