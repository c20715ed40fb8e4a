#include <catch2/catch.hpp>

#include <rapidjson/document.h>

#include "agent/nodework/kube_node_api.h"

namespace nodehook {
namespace {

// Answers Get with a Node and records the writes.
class RecordingClient final : public KubeClient {
 public:
  Result<ObjectList> List(const ResourceRef& r, const ListOptions&) override {
    listed.push_back(r);
    ObjectList list;
    list.items.push_back(KubeObject{ObjectMeta{}, R"({"metadata":{"namespace":"default","name":"web-1","uid":"u1"},
      "status":{"phase":"Running"}})"});
    return list;
  }
  Status Watch(const ResourceRef&, const WatchOptions&, const std::function<void(WatchEvent)>&,
               const CancelToken&) override {
    return Status::Ok();
  }
  Result<KubeObject> Get(const ObjectRef& o) override {
    gets.push_back(o);
    return KubeObject{ObjectMeta{}, node_json};
  }
  Status Patch(const ObjectRef& o, PatchType, const std::string& body) override {
    patches.emplace_back(o, body);
    return Status::Ok();
  }
  Status PostTo(const ObjectRef& o, const std::string& body) override {
    posts.emplace_back(o, body);
    return Status::Ok();
  }
  std::string node_json;
  std::vector<ResourceRef> listed;
  std::vector<ObjectRef> gets;
  std::vector<std::pair<ObjectRef, std::string>> patches;
  std::vector<std::pair<ObjectRef, std::string>> posts;
};

TEST_CASE("the Node's cordon, marks and boot ID are read; other annotations are not marks") {
  auto node = ParseNodeState(R"({"metadata":{"resourceVersion":"42","annotations":{
      "nodehook.io/cordoned-abc":"{\"uid\":\"u\"}","nodehook.io/other":"x"}},
      "spec":{"unschedulable":true},"status":{"nodeInfo":{"bootID":"b-2"}}})");
  REQUIRE(node.ok());
  REQUIRE(node->unschedulable);
  REQUIRE(node->resource_version == "42");
  REQUIRE(node->boot_id == "b-2");
  REQUIRE(node->marks == std::map<std::string, std::string>{{"nodehook.io/cordoned-abc", "{\"uid\":\"u\"}"}});
  REQUIRE_FALSE(ParseNodeState(R"({"metadata":{}})")->unschedulable);
  REQUIRE_FALSE(ParseNodeState("[1]").ok());
}

TEST_CASE("pods that are never evicted are recognised") {
  auto pods = ParsePods({
      R"({"metadata":{"namespace":"a","name":"ds","uid":"1","ownerReferences":[{"kind":"DaemonSet","controller":true}]}})",
      R"({"metadata":{"namespace":"a","name":"static","uid":"2","annotations":{"kubernetes.io/config.mirror":"x"}}})",
      R"({"metadata":{"namespace":"a","name":"job","uid":"3"},"status":{"phase":"Succeeded"}})",
      R"({"metadata":{"namespace":"a","name":"going","uid":"4","deletionTimestamp":"2026-01-01T00:00:00Z"}})",
      R"({"metadata":{"namespace":"a","name":"rs","uid":"5","ownerReferences":[{"kind":"ReplicaSet","controller":true}]}})",
  });
  REQUIRE(pods.ok());
  REQUIRE(pods->size() == 5);
  REQUIRE((*pods)[0].daemon_set);
  REQUIRE((*pods)[1].mirror);
  REQUIRE((*pods)[2].finished);
  REQUIRE((*pods)[3].terminating);
  const PodOnNode& rs = (*pods)[4];
  REQUIRE_FALSE((rs.daemon_set || rs.mirror || rs.finished || rs.terminating));
  REQUIRE(rs.Key() == "a/rs");
  REQUIRE(rs.controlled);
  REQUIRE((*pods)[0].controlled);
  REQUIRE_FALSE((*pods)[1].controlled);
}

TEST_CASE("a pod's emptyDir volumes and a toleration of the cordon's taint are read as the scheduler reads them") {
  auto pods = ParsePods({
      R"({"metadata":{"name":"cache","uid":"1"},"spec":{"volumes":[{"name":"c","configMap":{}},{"name":"t","emptyDir":{}}]}})",
      R"({"metadata":{"name":"cfg","uid":"2"},"spec":{"volumes":[{"name":"c","configMap":{}}]}})",
      R"({"metadata":{"name":"all","uid":"3"},"spec":{"tolerations":[{"operator":"Exists"}]}})",
      R"({"metadata":{"name":"key","uid":"4"},"spec":{"tolerations":[{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"}]}})",
      R"({"metadata":{"name":"equal","uid":"5"},"spec":{"tolerations":[{"key":"node.kubernetes.io/unschedulable"}]}})",
      R"({"metadata":{"name":"other-effect","uid":"6"},"spec":{"tolerations":[{"operator":"Exists","effect":"NoExecute"}]}})",
      R"({"metadata":{"name":"other-key","uid":"7"},"spec":{"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists"}]}})",
      R"({"metadata":{"name":"other-value","uid":"8"},"spec":{"tolerations":[{"key":"node.kubernetes.io/unschedulable","value":"x"}]}})",
      R"({"metadata":{"name":"steward","uid":"9","labels":{"nodehook.io/steward":"true"}}})",
  });
  REQUIRE(pods.ok());
  std::vector<bool> local, tolerates;
  for (const PodOnNode& pod : *pods) {
    local.push_back(pod.local_storage);
    tolerates.push_back(pod.tolerates_cordon);
  }
  REQUIRE(local == std::vector<bool>{true, false, false, false, false, false, false, false, false});
  REQUIRE(tolerates == std::vector<bool>{false, false, true, true, true, false, false, false, false});
  REQUIRE(pods->back().steward);
  REQUIRE_FALSE(pods->front().steward);
}

TEST_CASE("a Node's name and uid are read for Events about it") {
  auto node = ParseNodeState(R"({"metadata":{"name":"node-a","uid":"n-1","resourceVersion":"3"}})");
  REQUIRE(node.ok());
  REQUIRE(node->name == "node-a");
  REQUIRE(node->uid == "n-1");
}

TEST_CASE("a cordon is one merge patch with the version read; an uncordon clears the field") {
  RecordingClient client;
  client.node_json = R"({"metadata":{"resourceVersion":"7"}})";
  KubeNodeApi api(client, "node-a");
  NodeState seen = *api.GetNode();
  REQUIRE(client.gets.at(0).name == "node-a");
  REQUIRE(api.Cordon(seen, "nodehook.io/cordoned-abc", "v", {}).ok());
  REQUIRE(api.Unmark(seen, "nodehook.io/cordoned-abc", true).ok());
  REQUIRE(api.Unmark(seen, "nodehook.io/cordoned-abc", false).ok());
  REQUIRE(client.patches.at(0).second ==
          R"({"metadata":{"resourceVersion":"7","annotations":{"nodehook.io/cordoned-abc":"v"}},"spec":{"unschedulable":true}})");
  REQUIRE(client.patches.at(1).second ==
          R"({"metadata":{"resourceVersion":"7","annotations":{"nodehook.io/cordoned-abc":null}},"spec":{"unschedulable":null}})");
  REQUIRE(client.patches.at(2).second ==
          R"({"metadata":{"resourceVersion":"7","annotations":{"nodehook.io/cordoned-abc":null}}})");
  // Stale marks go in the cordon's own write.
  REQUIRE(api.Cordon(seen, "nodehook.io/cordoned-abc", "v", {"nodehook.io/cordoned-old.1"}).ok());
  REQUIRE(client.patches.at(3).second ==
          R"({"metadata":{"resourceVersion":"7","annotations":{"nodehook.io/cordoned-abc":"v",)"
          R"("nodehook.io/cordoned-old.1":null}},"spec":{"unschedulable":true}})");
}

TEST_CASE("pods are listed by the node's field selector, and evicted by policy/v1 with the uid as precondition") {
  RecordingClient client;
  KubeNodeApi api(client, "node-a");
  auto pods = api.Pods("app=web");
  REQUIRE(pods.ok());
  REQUIRE(client.listed.at(0).field_selector == "spec.nodeName=node-a");
  REQUIRE(client.listed.at(0).label_selector == "app=web");
  REQUIRE(api.Evict(pods->at(0), 5).ok());
  REQUIRE(api.Evict(pods->at(0), -1).ok());
  const auto& [ref, body] = client.posts.at(0);
  REQUIRE(ref.resource.plural == "pods");
  REQUIRE(ref.namespace_name == "default");
  REQUIRE(ref.name == "web-1");
  REQUIRE(ref.subresource == "eviction");
  REQUIRE(body == R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web-1","namespace":"default"},)"
                  R"("deleteOptions":{"gracePeriodSeconds":5,"preconditions":{"uid":"u1"}}})");
  REQUIRE(client.posts.at(1).second.find("gracePeriodSeconds") == std::string::npos);
}

}  // namespace
}  // namespace nodehook
