#include "agent/kube/credentials/connection_config.h"

#include "agent/base/log.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "agent/kube/credentials/file_source.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

// Written by kubectl v1.32 (google-cloud-sdk build), verbatim:
//   kubectl config set-cluster dev --server=https://127.0.0.1:6443 --certificate-authority=ca.crt
//     --embed-certs=true --tls-server-name=api.dev.internal --proxy-url=http://proxy.corp:3128
//   kubectl config set-credentials admin --client-certificate=admin.crt --client-key=admin.key
//   kubectl config set-credentials robot --token=0123456789
//   kubectl config set-credentials eks --exec-api-version=client.authentication.k8s.io/v1beta1
//     --exec-command=aws --exec-arg=--region,us-west-2,eks,get-token,--cluster-name,demo
//     --exec-env=AWS_PROFILE=prod --exec-interactive-mode=Never --exec-provide-cluster-info=true
//   kubectl config set-context dev --cluster=dev --user=admin --namespace=default
//   kubectl config use-context dev
// "Q0EgUEVNCg==" is "CA PEM\n".
const char* kKubectlSetOutput = R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Q0EgUEVNCg==
    proxy-url: http://proxy.corp:3128
    server: https://127.0.0.1:6443
    tls-server-name: api.dev.internal
  name: dev
contexts:
- context:
    cluster: dev
    namespace: default
    user: admin
  name: dev
current-context: dev
kind: Config
preferences: {}
users:
- name: admin
  user:
    client-certificate: admin.crt
    client-key: admin.key
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - us-west-2
      - eks
      - get-token
      - --cluster-name
      - demo
      command: aws
      env:
      - name: AWS_PROFILE
        value: prod
      interactiveMode: Never
      provideClusterInfo: true
- name: robot
  user:
    token: "0123456789"
)";

// The same file as `kubectl config view --raw -o json --minify` prints it.
const char* kKubectlJsonOutput = R"({
    "kind": "Config",
    "apiVersion": "v1",
    "preferences": {},
    "clusters": [
        {
            "name": "dev",
            "cluster": {
                "server": "https://127.0.0.1:6443",
                "tls-server-name": "api.dev.internal",
                "certificate-authority-data": "Q0EgUEVNCg==",
                "proxy-url": "http://proxy.corp:3128"
            }
        }
    ],
    "users": [
        {
            "name": "admin",
            "user": {
                "client-certificate": "admin.crt",
                "client-key": "admin.key"
            }
        }
    ],
    "contexts": [
        {
            "name": "dev",
            "context": {
                "cluster": "dev",
                "user": "admin",
                "namespace": "default"
            }
        }
    ],
    "current-context": "dev"
}
)";

TEST_CASE("a kubeconfig written by kubectl config set-cluster/set-credentials/set-context loads") {
  TempDir dir;
  dir.Write("admin.crt", "CERT");
  dir.Write("admin.key", "KEY");
  for (const char* text : {kKubectlSetOutput, kKubectlJsonOutput}) {
    auto config = LoadKubeconfig(dir.Write("config", text));
    REQUIRE(config.ok());
    CHECK(config->server == "https://127.0.0.1:6443");
    CHECK(config->ca_pem == "CA PEM\n");
    CHECK(config->tls_server_name == "api.dev.internal");
    CHECK(config->proxy_url == "http://proxy.corp:3128");
    CHECK(config->client_cert_pem == "CERT");  // relative to the kubeconfig's directory
    CHECK(config->client_key_pem == "KEY");
    CHECK_FALSE(config->insecure_skip_tls_verify);
    CHECK_FALSE(config->bearer_token);
  }
}

TEST_CASE("a token kubectl quoted because it looks like a number is read as a string") {
  TempDir dir;
  std::string text = kKubectlSetOutput;
  text.replace(text.find("    user: admin\n"), 16, "    user: robot\n");
  auto config = LoadKubeconfig(dir.Write("config", text));
  REQUIRE(config.ok());
  REQUIRE(config->bearer_token);
  CHECK(*config->bearer_token() == "0123456789");
}

// `kubectl config view --raw` of a minikube-style file: extensions, flow style `{}`, a plain
// scalar folded over two lines, `null` lists.
const char* kViewRawWithExtensions = R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: Q0EgUEVNCg==
    extensions:
    - extension:
        last-update: Mon, 01 Jan 2024 10:00:00 UTC
        provider: minikube.sigs.k8s.io
        version: v1.32.0
      name: cluster_info
    server: https://192.168.49.2:8443
  name: minikube
contexts:
- context:
    cluster: minikube
    extensions:
    - extension:
        last-update: Mon, 01 Jan 2024 10:00:00 UTC
        provider: minikube.sigs.k8s.io
        version: v1.32.0
      name: context_info
    namespace: default
    user: minikube
  name: minikube
current-context: minikube
kind: Config
preferences: {}
users:
- name: minikube
  user:
    token: |-
      multi-line-safe-token
)";

TEST_CASE("kubectl config view --raw output with extensions and block scalars loads") {
  TempDir dir;
  auto config = LoadKubeconfig(dir.Write("config", kViewRawWithExtensions));
  REQUIRE(config.ok());
  CHECK(config->server == "https://192.168.49.2:8443");
  CHECK(*config->bearer_token() == "multi-line-safe-token");
}

TEST_CASE("a tokenFile is resolved against the kubeconfig directory and trimmed") {
  TempDir dir;
  dir.Write("tok", "file-token\n");
  std::string path = dir.Write("kc", R"(current-context: c
contexts:
- name: c
  context: {cluster: k, user: u}
clusters:
- name: k
  cluster: {server: "https://k"}
users:
- name: u
  user:
    tokenFile: tok
)");
  auto config = LoadKubeconfig(path);
  REQUIRE(config.ok());
  CHECK(*config->bearer_token() == "file-token");
}

// Two files as kubectl merges them (checked with `KUBECONFIG=a:b kubectl config view --raw`):
// `shared` and `u` come whole from a (b's insecure flag and client certificate are dropped),
// current-context comes from b because a sets it to "".
const char* kMergeA = R"(apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster: {server: "https://a.example:6443"}
users:
- name: u
  user: {token: from-a}
contexts: null
current-context: ""
)";
const char* kMergeB = R"(apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster:
    server: https://b.example:6443
    insecure-skip-tls-verify: true
users:
- name: u
  user: {client-certificate: b.crt}
contexts:
- name: ctx
  context: {cluster: shared, user: u}
current-context: ctx
)";

TEST_CASE("a KUBECONFIG list is merged as kubectl merges it: first definition wins whole") {
  TempDir dir;
  std::string a = dir.Write("a.yaml", kMergeA);
  std::string b = dir.Write("b.yaml", kMergeB);
  auto config = LoadKubeconfig(a + ":" + b);
  REQUIRE(config.ok());
  CHECK(config->server == "https://a.example:6443");
  CHECK_FALSE(config->insecure_skip_tls_verify);
  CHECK(*config->bearer_token() == "from-a");
  CHECK(config->client_cert_pem.empty());  // b.crt does not even exist: never read

  SECTION("the other order takes b's definitions") {
    dir.Write("b.crt", "B CERT");
    auto reversed = LoadKubeconfig(b + ":" + a);
    REQUIRE(reversed.ok());
    CHECK(reversed->server == "https://b.example:6443");
    CHECK(reversed->insecure_skip_tls_verify);
    CHECK(reversed->client_cert_pem == "B CERT");
  }
  SECTION("a missing file in the list is skipped with a warning, like kubectl") {
    CapturedLog log;
    auto skipped = LoadKubeconfig(dir.path() + "/missing.yaml:" + a + "::" + b + ":" + a);
    REQUIRE(skipped.ok());
    CHECK(skipped->server == "https://a.example:6443");
    CHECK(log.Count("kubeconfig file missing") == 1);
  }
  SECTION("a list of only missing files is not found") {
    auto none = LoadKubeconfig(dir.path() + "/x:" + dir.path() + "/y");
    CHECK(none.status().code() == StatusCode::kNotFound);
  }
  SECTION("a malformed file anywhere in the list is an error naming it") {
    std::string bad = dir.Write("bad.yaml", "clusters: [\n");
    auto broken = LoadKubeconfig(a + ":" + bad);
    CHECK_THAT(broken.status().message(), Catch::Contains(bad + ": line 2, column 1"));
  }
}

TEST_CASE("relative paths in a merged list resolve against the file that names them") {
  TempDir dir;
  dir.Write("one/ca.crt", "CA ONE");
  dir.Write("two/token", "two-token\n");
  std::string one = dir.Write("one/config", R"(clusters:
- name: k
  cluster: {server: "https://k", certificate-authority: ca.crt}
current-context: c
)");
  std::string two = dir.Write("two/config", R"(users:
- name: u
  user: {tokenFile: token}
contexts:
- name: c
  context: {cluster: k, user: u}
)");
  auto config = LoadKubeconfig(one + ":" + two);
  REQUIRE(config.ok());
  CHECK(config->ca_pem == "CA ONE");
  CHECK(*config->bearer_token() == "two-token");
}

TEST_CASE("kubeconfig errors name the file, the line and column, the entry and the key") {
  struct Case {
    const char* name;
    std::string text;
    const char* expected;
  };
  const std::string head = "current-context: c\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n";
  const std::string cluster = "clusters:\n- name: k\n  cluster:\n    server: https://k\n";
  const Case cases[] = {
      {"current context unset", "contexts:\n", "current-context is not set"},
      {"context missing", "current-context: x\ncontexts:\n- name: c\n  context: {}\n",
       "current-context names context 'x', which is not defined"},
      {"entry without name", "contexts:\n- context: {}\n", "line 2, column 3: contexts: every entry needs a 'name'"},
      {"bad base64", head + "clusters:\n- name: k\n  cluster:\n    server: https://k\n    certificate-authority-data: '*'\n",
       "line 11, column 33: cluster 'k' key 'certificate-authority-data': invalid base64"},
      {"bad bool", head + "clusters:\n- name: k\n  cluster:\n    server: https://k\n    insecure-skip-tls-verify: 'true'\n",
       "line 11, column 31: cluster 'k' key 'insecure-skip-tls-verify': expected true or false (unquoted), got 'true'"},
      {"missing file", head + cluster + "users:\n- name: u\n  user:\n    client-key: nope.key\n",
       "line 14, column 17: user 'u' key 'client-key': cannot read"},
      {"auth provider", head + cluster + "users:\n- name: u\n  user:\n    auth-provider:\n      name: gcp\n",
       "user 'u' key 'auth-provider': auth-provider plugins were removed"},
      {"impersonation", head + cluster + "users:\n- name: u\n  user:\n    as: someone\n",
       "user 'u' key 'as': impersonation is not supported"},
      {"no server", head + "clusters:\n- name: k\n  cluster:\n    server: ''\n", "cluster 'k' key 'server': is not set"},
      {"server is a map", head + "clusters:\n- name: k\n  cluster:\n    server:\n      x: 1\n",
       "line 11, column 7: cluster 'k' key 'server': expected a string"},
      {"socks proxy", head + "clusters:\n- name: k\n  cluster:\n    server: https://k\n    proxy-url: socks5://p:1080\n",
       "cluster 'k' key 'proxy-url': only http:// proxies are supported"},
      {"not a mapping", "- a\n- b\n", "line 1, column 1: expected a mapping at the top level"},
      {"deep JSON", std::string(100'000, '[') + std::string(100'000, ']'), "line 1, column"},
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

TEST_CASE("YAML 1.1 booleans are accepted unquoted, as kubectl accepts them") {
  TempDir dir;
  auto config = LoadKubeconfig(dir.Write("kc", R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://k", insecure-skip-tls-verify: yes}}]
)"));
  REQUIRE(config.ok());
  CHECK(config->insecure_skip_tls_verify);
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
    CHECK(*config->bearer_token() == "sa-token");
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
