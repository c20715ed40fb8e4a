#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "agent/app/release_command.h"
#include "agent/kubectl/finalizer_uninstall.h"
#include "agent/rollout/rules/rollout_leases.h"
#include "test/fakes/fake_kube_client.h"
#include "test/fakes/forwarding_kube_client.h"

using namespace nodehook;

namespace {

// A config file in a fresh directory, removed when the test ends. No node name, and hooks that
// do not exist here: neither matters for releasing finalizers.
class ConfigFile {
 public:
  // `rollout`: the entry's rollout policy as JSON ("" = none).
  explicit ConfigFile(const std::string& plural = "widgets", const std::string& rollout = "") {
    char pattern[] = "/tmp/nodehook-release-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::ofstream(path()) << R"({"state_file": "/s.db", "api": {"in_cluster": true}, "resources": [
      {"group": "example.com", "version": "v1", "plural": ")" << plural << R"(", "namespace": "shop",)"
                          << (rollout.empty() ? "" : R"("rollout": )" + rollout + ",") << R"(
       "hooks": {"create": {"argv": ["/nowhere/hook"]}, "delete": {"argv": ["/nowhere/hook"]}}}]})";
  }
  ~ConfigFile() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string path() const { return dir_ + "/config.json"; }

 private:
  std::string dir_;
};

}  // namespace

TEST_CASE("release-finalizers without --yes says what it would do, that no delete hook runs, and changes nothing") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), false};
  bool connected = false;
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    connected = true;
    return std::unique_ptr<KubeClient>(std::make_unique<FakeKubeClient>());
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 2);
  CHECK_FALSE(connected);
  CHECK(err.str().find("widgets.example.com/v1 (namespace shop)") != std::string::npos);
  CHECK(err.str().find("No delete hook runs") != std::string::npos);
  CHECK(err.str().find("--yes") != std::string::npos);
}

TEST_CASE("release-finalizers --previous also releases the resources of configs the agents ran before") {
  ConfigFile config, older("gadgets"), oldest("widgets");
  ReleaseCommandArgs args{config.path(), false};
  args.previous_paths = {older.path(), oldest.path()};
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    return std::unique_ptr<KubeClient>(std::make_unique<FakeKubeClient>());
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 2);
  // Each resource once, the config's first.
  CHECK(err.str().find("  widgets.example.com/v1 (namespace shop)\n  gadgets.example.com/v1 (namespace shop)\nNo") !=
        std::string::npos);
  args.previous_paths = {"/nonexistent/old.json"};
  std::ostringstream out2, err2;
  CHECK(RunReleaseCommand(FleetCommandArgs{}, args, factory, out2, err2) == 2);
  CHECK(err2.str().find("/nonexistent/old.json") != std::string::npos);
}

TEST_CASE("release-finalizers --yes releases, says so, and exits 1 when an object could not be released") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), true};
  auto* fake = new FakeKubeClient();
  KubeObject w;
  w.meta = {"u1", "shop", "w1", "3", true};
  w.json = R"({"metadata":{"name":"w1","namespace":"shop","finalizers":["nodehook.io/node-a"]}})";
  ObjectList list;
  list.items = {w};
  fake->QueueList(ObjectList{});  // no agent pod runs: none labelled nodehook.io/agent,
  fake->QueueList(ObjectList{});  // nor of older manifests
  fake->QueueList(list);
  fake->QueuePatchResult(Status(StatusCode::kForbidden, "HTTP 403"));
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    return std::unique_ptr<KubeClient>(fake);
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 1);
  CHECK(out.str().find("No delete hook runs") == 0);
  CHECK(out.str().find("released 0 finalizers from 0 of 1 objects; 1 failed (see above)") != std::string::npos);
  CHECK(err.str() == "cannot release widgets.example.com/v1 shop/w1: HTTP 403\n");
}

TEST_CASE("release-finalizers gives back the cordons of rollouts that cordon, and looks at no Node otherwise") {
  ConfigFile plain, cordoning("widgets", R"({"max_nodes": 1, "drain": true})");
  auto run = [](const ConfigFile& config, const std::vector<std::string>& previous, FakeKubeClient* fake,
                std::ostringstream& out, std::ostringstream& err) {
    ReleaseCommandArgs args{config.path(), true};
    args.previous_paths = previous;
    fake->QueueList(ObjectList{});  // no agent pod
    fake->QueueList(ObjectList{});
    fake->QueueList(ObjectList{});  // no widget
    KubeObject node;
    node.meta = {"n1", "", "node-1", "5", false};
    node.json = R"({"metadata":{"name":"node-1","resourceVersion":"5","annotations":{"nodehook.io/cordoned-)" +
                RolloutIdOf(ResourceRef{"example.com", "v1", "widgets", "shop", ""}) +
                R"(.0123456789ab":"{}"}},"spec":{"unschedulable":true}})";
    ObjectList nodes;
    nodes.items = {node};
    fake->QueueList(nodes);
    fake->PutObject(node);
    return RunReleaseCommand(FleetCommandArgs{}, args,
                             [fake](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
                               return std::unique_ptr<KubeClient>(std::make_unique<ForwardingKubeClient>(*fake));
                             },
                             out, err);
  };
  SECTION("a config without node steps") {
    FakeKubeClient fake;
    std::ostringstream out, err;
    REQUIRE(run(plain, {}, &fake, out, err) == 0);
    CHECK(fake.list_resources().size() == 3);  // no list of Nodes: no right to it is needed
    CHECK(fake.patches().empty());
    CHECK(out.str().find("cordon") == std::string::npos);
  }
  for (bool previous : {false, true}) {
    SECTION(previous ? "a config the agents ran before drained" : "the config drains") {
      FakeKubeClient fake;
      std::ostringstream out, err;
      const int code = run(previous ? plain : cordoning,
                           previous ? std::vector<std::string>{cordoning.path()} : std::vector<std::string>{}, &fake,
                           out, err);
      INFO(err.str());
      REQUIRE(code == 0);
      REQUIRE(fake.list_resources().size() == 4);
      CHECK(fake.list_resources()[3].plural == "nodes");
      REQUIRE(fake.patches().size() == 1);
      CHECK(fake.patches()[0].name == "node-1");
      CHECK(out.str().find("node-1: uncordoned (, state )\ngave back 1 of 1 node cordon (1 uncordoned)\n") !=
            std::string::npos);
    }
  }
}

TEST_CASE("release-finalizers exits 2 on a config it cannot read") {
  ReleaseCommandArgs args{"/nonexistent/config.json", true};
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, DefaultReleaseClient, out, err) == 2);
  CHECK(err.str().find("/nonexistent/config.json: cannot read the file") == 0);
}

namespace {


KubeObject RunningAgentPod(const std::string& name, const std::string& node) {
  KubeObject pod;
  pod.meta = {"uid-" + name, "nodehook", name, "1", false};
  pod.json = R"({"metadata":{"name":")" + name +
             R"(","ownerReferences":[{"kind":"DaemonSet","name":"nodehook","controller":true}]},"spec":{"nodeName":")" +
             node + R"("}})";
  return pod;
}

}  // namespace

TEST_CASE("release-finalizers refuses while agent pods run, naming them, and releases nothing") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), true};
  FakeKubeClient client;  // lent to the command, which destroys the client it is given
  FakeKubeClient* fake = &client;
  ObjectList pods;
  pods.items = {RunningAgentPod("nodehook-x1", "node-a")};
  fake->QueueList(pods);          // the pods labelled nodehook.io/agent
  fake->QueueList(ObjectList());  // older manifests' agent pods: none
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    return std::unique_ptr<KubeClient>(std::make_unique<ForwardingKubeClient>(client));
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 2);
  CHECK(err.str().find("agents still run") != std::string::npos);
  CHECK(err.str().find("  nodehook/nodehook-x1 on node-a (DaemonSet nodehook/nodehook)\n") != std::string::npos);
  CHECK(err.str().find("--stop-agents NAMESPACE/DAEMONSET") != std::string::npos);
  CHECK(err.str().find("Nothing was released.") != std::string::npos);
  CHECK(fake->list_call_count() == 2);  // the pods; no widget was listed
  CHECK(fake->patches().empty());
}

TEST_CASE("release-finalizers --stop-agents deletes the DaemonSet, waits for its pods, then releases") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), true, "nodehook/nodehook"};
  FakeKubeClient client;  // lent to the command, which destroys the client it is given
  FakeKubeClient* fake = &client;
  fake->QueueList(ObjectList{});  // the DaemonSet's pods: none left
  KubeObject w;
  w.meta = {"u1", "shop", "w1", "3", false};
  w.json = R"({"metadata":{"name":"w1","namespace":"shop","finalizers":["nodehook.io/singleton"]}})";
  ObjectList widgets;
  widgets.items = {w};
  fake->QueueList(widgets);
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    return std::unique_ptr<KubeClient>(std::make_unique<ForwardingKubeClient>(client));
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 0);
  REQUIRE(fake->delete_calls().size() == 1);
  CHECK(fake->delete_calls()[0].name == "nodehook");
  CHECK(fake->list_resources()[0].plural == "pods");
  CHECK(fake->list_resources()[1].plural == "widgets");
  CHECK(fake->patches().size() == 1);
  CHECK(out.str().find("deleted DaemonSet nodehook/nodehook\nno agent pod of DaemonSet nodehook/nodehook is left\n") !=
        std::string::npos);
  CHECK(out.str().find("released 1 finalizer from 1 of 1 objects") != std::string::npos);
}

TEST_CASE("release-finalizers --stop-agents releases nothing when the DaemonSet cannot be deleted") {
  ConfigFile config;
  ReleaseCommandArgs args{config.path(), true, "nodehook/nodehook"};
  FakeKubeClient client;  // lent to the command, which destroys the client it is given
  FakeKubeClient* fake = &client;
  fake->QueueDeleteResult(Status(StatusCode::kForbidden, "HTTP 403"));
  auto factory = [&](const FleetCommandArgs&) -> Result<std::unique_ptr<KubeClient>> {
    return std::unique_ptr<KubeClient>(std::make_unique<ForwardingKubeClient>(client));
  };
  std::ostringstream out, err;
  REQUIRE(RunReleaseCommand(FleetCommandArgs{}, args, factory, out, err) == 1);
  CHECK(err.str() == "kubectl nodehook release-finalizers: cannot delete DaemonSet nodehook/nodehook: HTTP 403\n"
                     "Nothing was released.\n");
  CHECK(fake->list_call_count() == 0);
}

TEST_CASE("the uninstall covers each resource once across configs, and the rollouts whose node steps cordon") {
  auto watched = [](const std::string& plural, const std::string& ns) {
    WatchedResource r;
    r.ref = ResourceRef{"example.com", "v1", plural, ns, ""};
    return r;
  };
  Config first, second;
  first.resources = {watched("widgets", ""), watched("gadgets", "team-a")};
  first.resources[1].rollout = RolloutPolicy{};
  first.resources[1].rollout->cordon = true;
  second.resources = {watched("widgets", ""), watched("gadgets", "team-b")};
  UninstallScope scope;
  AddToUninstall(first, &scope);
  AddToUninstall(second, &scope);
  REQUIRE(scope.resources.size() == 3);
  CHECK(scope.resources[1].namespace_name == "team-a");
  CHECK(scope.resources[2].namespace_name == "team-b");
  CHECK(scope.cordoning == std::set<std::string>{RolloutIdOf(first.resources[1].ref)});
}
