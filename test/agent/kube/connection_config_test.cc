#include "agent/kube/connection_config.h"

#include "agent/base/log.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "agent/kube/file_source.h"
#include "test/agent/kube/temp_dir.h"
#include "test/fakes/fake_clock.h"

namespace nodehook {
namespace {

// "Q0EgUEVN" = "CA PEM", "Q0VSVA==" = "CERT".
const char* kYamlKubeconfig = R"(apiVersion: v1
kind: Config
clusters:
- name: other
  cluster:
    server: https://other:6443
- name: dev
  cluster:
    server: "https://127.0.0.1:6443"
    certificate-authority-data: Q0EgUEVN
    insecure-skip-tls-verify: false
contexts:
- name: dev-admin
  context:
    cluster: dev
    user: admin
    namespace: default
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key: keys/admin.key   # relative to the kubeconfig
current-context: dev-admin
preferences:
)";

TEST_CASE("a YAML kubeconfig yields the current context's server, CA, and client certificate") {
  TempDir dir;
  dir.Write("keys/admin.key", "KEY PEM");
  auto config = LoadKubeconfig(dir.Write("kubeconfig", kYamlKubeconfig));
  REQUIRE(config.ok());
  CHECK(config->server == "https://127.0.0.1:6443");
  CHECK(config->ca_pem == "CA PEM");
  CHECK(config->client_cert_pem == "CERT");
  CHECK(config->client_key_pem == "KEY PEM");
  CHECK_FALSE(config->insecure_skip_tls_verify);
  CHECK_FALSE(config->bearer_token);
}

TEST_CASE("a JSON kubeconfig is read the same way, with token and CA file") {
  TempDir dir;
  dir.Write("ca.crt", "CA FROM FILE");
  std::string path = dir.Write("config.json", R"({
    "current-context": "c",
    "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    "clusters": [{"name": "k", "cluster": {"server": "https://k:443", "certificate-authority": "ca.crt",
                  "insecure-skip-tls-verify": true}}],
    "users": [{"name": "u", "user": {"token": "s3cret"}}]
  })");
  auto config = LoadKubeconfig(path);
  REQUIRE(config.ok());
  CHECK(config->server == "https://k:443");
  CHECK(config->ca_pem == "CA FROM FILE");
  CHECK(config->insecure_skip_tls_verify);
  REQUIRE(config->bearer_token);
  CHECK(config->bearer_token() == "s3cret");
}

TEST_CASE("a tokenFile is resolved against the kubeconfig directory and trimmed") {
  TempDir dir;
  dir.Write("tok", "file-token\n");
  std::string path = dir.Write("kc", R"(current-context: c
contexts:
- name: c
  context: {cluster: k}
)");
  // Flow style in the context is refused, with its line.
  auto refused = LoadKubeconfig(path);
  CHECK_THAT(refused.status().message(), Catch::Contains("line 4: flow style"));

  path = dir.Write("kc", R"(current-context: c
contexts:
- name: c
  context:
    cluster: k
    user: u
clusters:
- name: k
  cluster:
    server: http://k
users:
- name: u
  user:
    tokenFile: tok
)");
  auto config = LoadKubeconfig(path);
  REQUIRE(config.ok());
  CHECK(config->bearer_token() == "file-token");
}

TEST_CASE("kubeconfig errors name the file, the key and the line") {
  struct Case {
    const char* name;
    std::string text;
    const char* expected;
  };
  const std::string head = "current-context: c\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n";
  const std::string cluster = "clusters:\n- name: k\n  cluster:\n    server: https://k\n";
  const Case cases[] = {
      {"no current context", "clusters: []\n", "flow style"},
      {"current context unset", "contexts:\n", "current-context is not set"},
      {"context missing", "current-context: x\ncontexts:\n- name: c\n", "key 'contexts' (line 2): has no entry named 'x'"},
      {"bad base64", head + "clusters:\n- name: k\n  cluster:\n    server: https://k\n    certificate-authority-data: '*'\n",
       "cluster 'k' key 'certificate-authority-data' (line 11): invalid base64"},
      {"bad bool", head + "clusters:\n- name: k\n  cluster:\n    server: https://k\n    insecure-skip-tls-verify: yes\n",
       "key 'insecure-skip-tls-verify' (line 11): expected true or false, got 'yes'"},
      {"missing file", head + cluster + "users:\n- name: u\n  user:\n    client-key: nope.key\n",
       "user 'u' key 'client-key' (line 14): cannot read"},
      {"exec plugin", head + cluster + "users:\n- name: u\n  user:\n    exec:\n      command: aws\n",
       "user 'u' key 'exec' (line 14): is not supported"},
      {"no server", head + "clusters:\n- name: k\n  cluster:\n    server: ''\n", "cluster 'k' key 'server' (line 10): is not set"},
      {"server is a map", head + "clusters:\n- name: k\n  cluster:\n    server:\n      x: 1\n",
       "key 'server' (line 10): expected a string"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    TempDir dir;
    std::string path = dir.Write("kubeconfig", c.text);
    auto config = LoadKubeconfig(path);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().code() == StatusCode::kInvalid);
    CHECK_THAT(config.status().message(), Catch::Contains(path) && Catch::Contains(c.expected));
  }
}

TEST_CASE("a missing kubeconfig is not found") {
  auto config = LoadKubeconfig("/nonexistent/kubeconfig");
  CHECK(config.status().code() == StatusCode::kNotFound);
  CHECK_THAT(config.status().message(), Catch::Contains("/nonexistent/kubeconfig"));
}

struct ServiceEnv {
  ServiceEnv(const char* host, const char* port) {
    ::setenv("KUBERNETES_SERVICE_HOST", host, 1);
    ::setenv("KUBERNETES_SERVICE_PORT", port, 1);
  }
  ~ServiceEnv() {
    ::unsetenv("KUBERNETES_SERVICE_HOST");
    ::unsetenv("KUBERNETES_SERVICE_PORT");
  }
};

TEST_CASE("in cluster, the service address, CA and token come from the environment and secrets dir") {
  TempDir secrets;
  secrets.Write("ca.crt", "CLUSTER CA");
  secrets.Write("token", "sa-token\n");
  {
    ServiceEnv env("10.96.0.1", "443");
    auto config = LoadInClusterConfig(secrets.path());
    REQUIRE(config.ok());
    CHECK(config->server == "https://10.96.0.1:443");
    CHECK(config->ca_pem == "CLUSTER CA");
    CHECK(config->bearer_token() == "sa-token");
  }
  {
    ServiceEnv env("fd00::1", "6443");
    CHECK(LoadInClusterConfig(secrets.path())->server == "https://[fd00::1]:6443");
  }
}

TEST_CASE("in-cluster config fails clearly outside a pod or without a token") {
  TempDir secrets;
  secrets.Write("ca.crt", "CLUSTER CA");
  CHECK_THAT(LoadInClusterConfig(secrets.path()).status().message(),
             Catch::Contains("KUBERNETES_SERVICE_HOST"));
  ServiceEnv env("10.96.0.1", "443");
  auto no_token = LoadInClusterConfig(secrets.path());
  CHECK(no_token.status().code() == StatusCode::kNotFound);
  CHECK_THAT(no_token.status().message(), Catch::Contains(secrets.path() + "/token"));
}

TEST_CASE("a rotating token file is re-read only once the refresh interval has passed") {
  TempDir dir;
  std::string path = dir.Write("token", "first\n");
  FakeClock clock;
  auto token = RotatingTokenSource(path, "first", clock, std::chrono::minutes(1)).current;
  dir.Write("token", "second\n");
  CHECK(token() == "first");
  clock.Advance(std::chrono::seconds(59));
  CHECK(token() == "first");
  clock.Advance(std::chrono::seconds(1));
  CHECK(token() == "second");
  SECTION("a vanished file keeps the last good token, with a warning") {
    std::string logged;
    SetLogSink([&](const std::string& line) { logged += line; });
    std::filesystem::remove(path);
    clock.Advance(std::chrono::minutes(2));
    CHECK(token() == "second");
    SetLogSink(nullptr);
    CHECK_THAT(logged, Catch::Contains("token file unreadable") && Catch::Contains(path));
  }
}

}  // namespace
}  // namespace nodehook
