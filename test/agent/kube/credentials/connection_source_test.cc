// The one kubeconfig loading rule: its precedence, with the environment and the files faked.
#include <catch2/catch.hpp>

#include <set>

#include "agent/kube/credentials/connection_source.h"

using namespace nodehook;

namespace {

FileExists Files(std::set<std::string> present) {
  return [present = std::move(present)](const std::string& path) { return present.count(path) > 0; };
}

const EnvLookup kLaptop = MapEnvironment({{"HOME", "/home/ann"}});
const EnvLookup kPod = MapEnvironment({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}});

}  // namespace

TEST_CASE("a kubeconfig named explicitly wins over every fallback and the environment") {
  EnvLookup env = MapEnvironment({{"KUBECONFIG", "/env/config"}, {"HOME", "/home/ann"}, {"KUBERNETES_SERVICE_HOST", "h"}});
  for (WithoutKubeconfig fallback : {WithoutKubeconfig::kInCluster, WithoutKubeconfig::kUserKubeconfig,
                                     WithoutKubeconfig::kUserElseInCluster}) {
    ConnectionSource source = ChooseConnection("/flag/config", fallback, env, Files({}));
    CHECK_FALSE(source.in_cluster);
    CHECK(source.kubeconfig == "/flag/config");
  }
}

TEST_CASE("the agent and the steward without a kubeconfig connect in cluster, whatever the environment says") {
  EnvLookup env = MapEnvironment({{"KUBECONFIG", "/env/config"}, {"HOME", "/home/ann"}});
  ConnectionSource source = ChooseConnection("", WithoutKubeconfig::kInCluster, env, Files({"/home/ann/.kube/config"}));
  CHECK(source.in_cluster);
  CHECK(source.kubeconfig.empty());
}

TEST_CASE("kubectl nodehook: $KUBECONFIG, else ~/.kube/config, and never in cluster") {
  EnvLookup listed = MapEnvironment({{"KUBECONFIG", "/a:/b"}, {"HOME", "/home/ann"}});
  CHECK(ChooseConnection("", WithoutKubeconfig::kUserKubeconfig, listed, Files({})).kubeconfig == "/a:/b");
  // Set but empty counts as not set.
  EnvLookup empty = MapEnvironment({{"KUBECONFIG", ""}, {"HOME", "/home/ann"}});
  CHECK(ChooseConnection("", WithoutKubeconfig::kUserKubeconfig, empty, Files({})).kubeconfig ==
        "/home/ann/.kube/config");
  ConnectionSource in_pod = ChooseConnection("", WithoutKubeconfig::kUserKubeconfig, kPod, Files({}));
  CHECK_FALSE(in_pod.in_cluster);
  CHECK(in_pod.kubeconfig == "/.kube/config");  // no HOME
}

TEST_CASE("release-finalizers: the user's kubeconfig when it exists, in cluster in a pod without one") {
  CHECK(ChooseConnection("", WithoutKubeconfig::kUserElseInCluster, kLaptop, Files({"/home/ann/.kube/config"}))
            .kubeconfig == "/home/ann/.kube/config");
  // No file and no API server in the environment: the missing file is what gets reported.
  ConnectionSource laptop = ChooseConnection("", WithoutKubeconfig::kUserElseInCluster, kLaptop, Files({}));
  CHECK_FALSE(laptop.in_cluster);
  CHECK(laptop.kubeconfig == "/home/ann/.kube/config");
  CHECK(ChooseConnection("", WithoutKubeconfig::kUserElseInCluster, kPod, Files({})).in_cluster);
  // KUBERNETES_SERVICE_HOST only needs to be set.
  EnvLookup bare = MapEnvironment({{"KUBERNETES_SERVICE_HOST", ""}});
  CHECK(ChooseConnection("", WithoutKubeconfig::kUserElseInCluster, bare, Files({})).in_cluster);
  // An existing $KUBECONFIG in a pod is still used.
  EnvLookup both = MapEnvironment({{"KUBECONFIG", "/env/config"}, {"KUBERNETES_SERVICE_HOST", "h"}});
  CHECK(ChooseConnection("", WithoutKubeconfig::kUserElseInCluster, both, Files({"/env/config"})).kubeconfig ==
        "/env/config");
}

TEST_CASE("a named kubeconfig that does not exist is loaded, and says so") {
  Result<TransportConfig> loaded = LoadConnection(ConnectionSource{false, "/nonexistent/nodehook-kubeconfig"});
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == StatusCode::kNotFound);
}
