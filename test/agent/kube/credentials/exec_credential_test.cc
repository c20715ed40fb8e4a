// Exec credential plugins (kubeconfig `exec`), run for real: small shell scripts stand in for
// aws/gke-gcloud-auth-plugin. Expiry is driven by a FakeClock that starts at
// 2023-11-14T22:13:20Z.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/credentials/base64.h"
#include "agent/kube/credentials/connection_config.h"
#include "agent/kube/credentials/exec_credential.h"
#include "test/agent/kube/client/kube_test_data.h"
#include "test/agent/kube/refusals.h"
#include "test/fakes/fake_api_server.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"
#include "test/fakes/test_pki.h"
#include "test/fakes/tls_front.h"

namespace nodehook {
namespace {

// A plugin that counts its runs in $DIR/count, saves its environment and arguments per run,
// and prints an ExecCredential for `api_version` with token-<run> and `status_extra`.
std::string CountingPlugin(const TempDir& dir, const std::string& api_version, const std::string& status_extra) {
  std::string path = dir.Write("bin/plugin", R"(#!/bin/sh
d=)" + dir.path() + R"(
n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 ))
echo $n > "$d/count"
env > "$d/env.$n"
echo "$@" > "$d/args.$n"
echo "plugin says hello" >&2
printf '{"kind":"ExecCredential","apiVersion":")" + api_version + R"(","status":{"token":"token-%s")" +
                                 status_extra + R"(}}' "$n"
)");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::string Script(const TempDir& dir, const std::string& name, const std::string& body) {
  std::string path = dir.Write(name, "#!/bin/sh\n" + body);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int Runs(const TempDir& dir) {
  std::string count = ReadFile(dir.path() + "/count");
  return count.empty() ? 0 : std::stoi(count);
}

// A kubeconfig whose user runs `exec_body` (the lines under exec:, indented 6).
std::string ExecKubeconfig(const std::string& server, const std::string& exec_body, const std::string& cluster_extra = "") {
  return R"(apiVersion: v1
clusters:
- cluster:
    server: )" + server + "\n" + cluster_extra + R"(  name: dev
contexts:
- context:
    cluster: dev
    user: cloud
  name: dev
current-context: dev
kind: Config
preferences: {}
users:
- name: cloud
  user:
    exec:
)" + exec_body;
}

TEST_CASE("a v1 exec plugin's token is cached until its expirationTimestamp, then the plugin runs again") {
  TempDir dir;
  CountingPlugin(dir, kExecApiV1, R"(,"expirationTimestamp":"2023-11-14T22:23:20Z")");
  FakeClock clock;  // 22:13:20Z: the token is valid for ten minutes
  auto config = LoadKubeconfig(dir.Write("kc", ExecKubeconfig("https://k:6443", R"(      apiVersion: client.authentication.k8s.io/v1
      command: bin/plugin
      args:
      - get-token
      - --cluster=demo
      env:
      - name: PLUGIN_PROFILE
        value: prod
      interactiveMode: Never
      provideClusterInfo: false
)")), clock);
  REQUIRE(config.ok());
  CHECK(Runs(dir) == 0);  // nothing runs until a token is needed
  CHECK(*config->bearer_token() == "token-1");
  clock.Advance(std::chrono::minutes(9));
  CHECK(*config->bearer_token() == "token-1");
  CHECK(Runs(dir) == 1);
  clock.Advance(std::chrono::minutes(1));
  CHECK(*config->bearer_token() == "token-2");
  CHECK(Runs(dir) == 2);

  CHECK(ReadFile(dir.path() + "/args.1") == "get-token --cluster=demo\n");
  std::string env = ReadFile(dir.path() + "/env.1");
  CHECK_THAT(env, Catch::Contains("PLUGIN_PROFILE=prod\n"));
  CHECK_THAT(env, Catch::Contains(
                      R"(KUBERNETES_EXEC_INFO={"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1",)"
                      R"("spec":{"interactive":false}})"));
}

TEST_CASE("a v1beta1 plugin without expiry is cached until the API server rejects its token") {
  TempDir dir;
  CountingPlugin(dir, kExecApiV1Beta1, "");
  FakeClock clock;
  auto config = LoadKubeconfig(dir.Write("kc", ExecKubeconfig("https://k:6443", R"(      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/plugin
)")), clock);
  REQUIRE(config.ok());
  CHECK(*config->bearer_token() == "token-1");
  clock.Advance(std::chrono::hours(24 * 365));
  CHECK(*config->bearer_token() == "token-1");
  CHECK(*config->reload_bearer_token("token-1") == "token-2");
  // A second caller that saw token-1 rejected too gets token-2 without another run.
  CHECK(*config->reload_bearer_token("token-1") == "token-2");
  CHECK(Runs(dir) == 2);
}

TEST_CASE("provideClusterInfo passes the cluster and its exec extension in KUBERNETES_EXEC_INFO") {
  TempDir dir;
  CountingPlugin(dir, kExecApiV1Beta1, "");
  auto config = LoadKubeconfig(dir.Write("kc", ExecKubeconfig("https://k:6443", R"(      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/plugin
      installHint: Install the plugin for use with kubectl by following
        https://example.com/install
      provideClusterInfo: true
      env: null
)", R"(    certificate-authority-data: Q0EgUEVNCg==
    tls-server-name: api.internal
    extensions:
    - extension:
        audience: api://demo
        retries: 3
        verbose: yes
      name: client.authentication.k8s.io/exec
    - extension:
        provider: minikube.sigs.k8s.io
      name: cluster_info
)")));
  REQUIRE(config.ok());
  REQUIRE(config->bearer_token().ok());
  CHECK_THAT(ReadFile(dir.path() + "/env.1"),
             Catch::Contains(R"("spec":{"cluster":{"server":"https://k:6443","tls-server-name":"api.internal",)"
                             R"("certificate-authority-data":"Q0EgUEVNCg==",)"
                             R"("config":{"audience":"api://demo","retries":3,"verbose":true}},"interactive":false})"));
}

TEST_CASE("a failing plugin's error names it, its exit code and its stderr") {
  TempDir dir;
  Script(dir, "plugin", "echo 'boom: no credentials for profile prod' >&2\nexit 3\n");
  auto config = LoadKubeconfig(dir.Write("kc", ExecKubeconfig("https://k:6443", R"(      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./plugin
)")));
  REQUIRE(config.ok());
  auto token = config->bearer_token();
  REQUIRE_FALSE(token.ok());
  CHECK(token.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(token.status().message(), Catch::Contains("exec plugin '" + dir.path() + "/./plugin' of user 'cloud'") &&
                                           Catch::Contains("exited 3") &&
                                           Catch::Contains("boom: no credentials for profile prod"));
}

TEST_CASE("a plugin that prints garbage or the wrong ExecCredential is a clear error") {
  const std::vector<Refusal> cases = {
      {"not json", "printed no ExecCredential JSON"},
      {R"({"kind":"Secret","apiVersion":"client.authentication.k8s.io/v1"})", "not an ExecCredential"},
      {R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"t"}})",
       "is configured to use API version client.authentication.k8s.io/v1, plugin returned version "
       "'client.authentication.k8s.io/v1beta1'"},
      {R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1"})", "didn't return a status field"},
      {R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{}})",
       "didn't return a token"},
      {R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"t","expirationTimestamp":"tomorrow"}})",
       "expirationTimestamp: expected an RFC 3339 time"},
  };
  CheckRefusals(cases, [](const std::string& out) { return ParseExecCredential(out, kExecApiV1); }, std::nullopt);
  TempDir dir;
  ExecPluginConfig plugin;
  plugin.user = "u";
  plugin.api_version = kExecApiV1;
  plugin.argv = {Script(dir, "garbage", "echo '<html>login page</html>'\necho 'warning: stale cache' >&2\n")};
  FakeClock clock;
  auto token = ExecCredentialSource(plugin, clock).Token();
  CHECK_THAT(token.status().message(), Catch::Contains("printed no ExecCredential JSON") &&
                                           Catch::Contains("stderr: warning: stale cache"));
}

TEST_CASE("a plugin that hangs is killed at its timeout, and one that cannot start names the install hint") {
  TempDir dir;
  FakeClock clock;
  ExecPluginConfig plugin;
  plugin.user = "u";
  plugin.api_version = kExecApiV1;
  plugin.argv = {Script(dir, "hang", "exec sleep 600\n")};
  plugin.timeout = std::chrono::milliseconds(200);
  auto hung = ExecCredentialSource(plugin, clock).Token();
  CHECK(hung.status().code() == StatusCode::kTimeout);
  CHECK_THAT(hung.status().message(), Catch::Contains("did not finish within 200ms"));

  plugin.argv = {"nodehook-no-such-plugin"};
  plugin.install_hint = "Install nodehook-no-such-plugin from your cloud's SDK.";
  auto missing = ExecCredentialSource(plugin, clock).Token();
  CHECK(missing.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(missing.status().message(), Catch::Contains("exec nodehook-no-such-plugin: No such file") &&
                                             Catch::Contains("Install nodehook-no-such-plugin from your cloud's SDK."));
}

TEST_CASE("exec sections kubectl refuses, or that need a terminal, are refused when loading") {
  const std::vector<Refusal> cases = {
      {"      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n",
       "key 'interactiveMode': must be set for client.authentication.k8s.io/v1"},
      {"      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      interactiveMode: Always\n",
       "is Always, but the agent never has a terminal"},
      {"      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: aws\n",
       "key 'apiVersion': expected client.authentication.k8s.io/v1 or"},
      {"      apiVersion: client.authentication.k8s.io/v1beta1\n", "key 'command': must be set"},
      {"      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n      env:\n      - value: x\n",
       "key 'env': expected a list of {name, value}"},
  };
  CheckRefusals(
      cases,
      [](const std::string& exec_body) {
        TempDir dir;
        return LoadKubeconfig(dir.Write("kc", ExecKubeconfig("https://k:6443", exec_body)));
      },
      std::nullopt, "user 'cloud' exec");
}

TEST_CASE("after a 401 the exec plugin runs again and the request is retried with its new token") {
  TempDir dir;
  CountingPlugin(dir, kExecApiV1Beta1, "");
  TestCa ca("exec test CA");
  FakeApiServer server;
  server.ServeCollection("/apis/example.com/v1/widgets");
  server.RequireToken("token-2");
  TlsFront front(server.port(), ca.IssueServer({"IP:127.0.0.1"}));
  auto config = LoadKubeconfig(dir.Write("kc", ExecKubeconfig(front.url(), R"(      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/plugin
)", "    certificate-authority-data: " + Base64Encode(ca.cert_pem()) + "\n")));
  REQUIRE(config.ok());
  RestKubeClient client(NewCpprestTransport(*config));
  REQUIRE(client.List(WidgetsRef(), {}).ok());
  auto requests = server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].Header("authorization") == "Bearer token-1");
  CHECK(requests[1].Header("authorization") == "Bearer token-2");
  REQUIRE(client.List(WidgetsRef(), {}).ok());
  CHECK(Runs(dir) == 2);
}

TEST_CASE("a request whose exec plugin fails is not sent at all") {
  TempDir dir;
  TestCa ca("exec test CA");
  FakeApiServer server;
  TlsFront front(server.port(), ca.IssueServer({"IP:127.0.0.1"}));
  Script(dir, "plugin", "exit 1\n");
  auto config = LoadKubeconfig(dir.Write("kc", ExecKubeconfig(front.url(), R"(      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./plugin
)", "    certificate-authority-data: " + Base64Encode(ca.cert_pem()) + "\n")));
  REQUIRE(config.ok());
  RestKubeClient client(NewCpprestTransport(*config));
  auto list = client.List(WidgetsRef(), {});
  CHECK(list.status().code() == StatusCode::kUnavailable);
  CHECK_THAT(list.status().message(), Catch::Contains("exited 1 with no output on stderr"));
  CHECK(server.requests().empty());
}

}  // namespace
}  // namespace nodehook
