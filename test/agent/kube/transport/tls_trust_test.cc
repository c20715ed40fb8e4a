// TLS as kubectl does it, over the real cpprest transport: a configured CA is the only one
// trusted, the server name is checked (or tls-server-name instead), insecure-skip-tls-verify
// skips verification, and an http:// proxy carries https through CONNECT. The API server is a
// FakeApiServer behind a TlsFront whose certificates come from CAs made for the test.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "agent/kube/client/rest_kube_client.h"
#include "agent/kube/credentials/base64.h"
#include "agent/kube/credentials/connection_config.h"
#include "test/agent/kube/client/kube_test_data.h"
#include "test/fakes/captured_log.h"
#include "test/fakes/connect_proxy.h"
#include "test/fakes/fake_api_server.h"
#include "test/fakes/temp_dir.h"
#include "test/fakes/test_pki.h"
#include "test/fakes/tls_front.h"

namespace nodehook {
namespace {

const char* kWidgets = "/apis/example.com/v1/widgets";

// Sets an environment variable for the life of the object (restoring "unset" afterwards).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

struct TlsFixture {
  FakeApiServer server;
  TestCa ca{"nodehook test CA"};
  TestCa other_ca{"some other CA"};
  std::unique_ptr<TlsFront> front;

  TlsFixture() {
    server.ServeCollection(kWidgets);
    server.PutObject(kWidgets, WidgetJson("a", "1"));
  }
  void Serve(const TestCa& issuer, const std::vector<std::string>& alt_names) {
    front = std::make_unique<TlsFront>(server.port(), issuer.IssueServer(alt_names));
  }
  TransportConfig Config() const {
    TransportConfig config;
    config.server = front->url();
    config.connect_timeout_seconds = 20;
    return config;
  }
  Status List(const TransportConfig& config) {
    RestKubeClient client(NewCpprestTransport(config));
    auto list = client.List(WidgetsRef(), {});
    return list.ok() ? Status::Ok() : list.status();
  }
};

TEST_CASE("a configured CA is the only one trusted, even when the system store trusts the server's CA") {
  TlsFixture f;
  f.Serve(f.other_ca, {"IP:127.0.0.1"});
  TempDir dir;
  // OpenSSL's default verify paths follow SSL_CERT_FILE: the "system store" trusts other_ca.
  ScopedEnv system_store("SSL_CERT_FILE", dir.Write("system-bundle.pem", f.other_ca.cert_pem()));

  TransportConfig system_trust = f.Config();
  CHECK(f.List(system_trust).ok());  // without a CA the system store decides, and trusts it

  TransportConfig own_ca = f.Config();
  own_ca.ca_pem = f.ca.cert_pem();
  Status refused = f.List(own_ca);
  CHECK(refused.code() == StatusCode::kUnavailable);
  CHECK_THAT(refused.message(), Catch::Contains("handshake"));
}

TEST_CASE("a server certificate from the configured CA is trusted when it names the server") {
  TlsFixture f;
  f.Serve(f.ca, {"IP:127.0.0.1"});
  TransportConfig config = f.Config();
  config.ca_pem = f.ca.cert_pem();
  CHECK(f.List(config).ok());
  SECTION("a bundle with the CA among others works too") {
    config.ca_pem = f.other_ca.cert_pem() + f.ca.cert_pem();
    CHECK(f.List(config).ok());
  }
}

TEST_CASE("tls-server-name is sent as SNI and checked instead of the server address") {
  TlsFixture f;
  f.Serve(f.ca, {"DNS:api.internal.test"});  // not valid for 127.0.0.1
  TransportConfig config = f.Config();
  config.ca_pem = f.ca.cert_pem();
  CHECK(f.List(config).code() == StatusCode::kUnavailable);

  config.tls_server_name = "api.internal.test";
  REQUIRE(f.List(config).ok());
  CHECK(f.front->server_names().back() == "api.internal.test");

  config.tls_server_name = "other.internal.test";
  CHECK(f.List(config).code() == StatusCode::kUnavailable);
}

TEST_CASE("insecure-skip-tls-verify connects to a server no CA vouches for") {
  TlsFixture f;
  f.Serve(f.other_ca, {"DNS:somewhere.else"});
  TransportConfig config = f.Config();
  CHECK(f.List(config).code() == StatusCode::kUnavailable);
  config.insecure_skip_tls_verify = true;
  CHECK(f.List(config).ok());
}

TEST_CASE("an https server is reached through an http proxy with CONNECT and proxy credentials") {
  TlsFixture f;
  f.Serve(f.ca, {"IP:127.0.0.1"});
  ConnectProxy proxy;
  TransportConfig config = f.Config();
  config.ca_pem = f.ca.cert_pem();
  config.proxy_url = "http://user:pa%3Ass@127.0.0.1:" + std::to_string(proxy.port());
  REQUIRE(f.List(config).ok());
  REQUIRE(proxy.request_lines().size() == 1);
  CHECK(proxy.request_lines()[0] == "CONNECT 127.0.0.1:" + std::to_string(f.front->port()) + " HTTP/1.1");
  CHECK(proxy.authorizations()[0] == "Basic " + Base64Encode("user:pa:ss"));
}

TEST_CASE("a kubeconfig with CA data, tls-server-name, proxy-url and a token drives the real transport") {
  TlsFixture f;
  f.Serve(f.ca, {"DNS:api.internal.test"});
  f.server.RequireToken("s3cret");
  ConnectProxy proxy;
  TempDir dir;
  std::string path = dir.Write("config", R"(apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: )" + Base64Encode(f.ca.cert_pem()) + R"(
    proxy-url: )" + proxy.url() + R"(
    server: )" + f.front->url() + R"(
    tls-server-name: api.internal.test
  name: dev
contexts:
- context:
    cluster: dev
    user: robot
  name: dev
current-context: dev
kind: Config
preferences: {}
users:
- name: robot
  user:
    token: s3cret
)");
  auto config = LoadKubeconfig(path);
  REQUIRE(config.ok());
  REQUIRE(f.List(*config).ok());
  CHECK(proxy.request_lines().size() == 1);
  CHECK(f.front->server_names().back() == "api.internal.test");
  CHECK(f.server.requests().back().Header("authorization") == "Bearer s3cret");
}

// A kubeconfig for `server` with the given cluster and user lines.
std::string Kubeconfig(const std::string& server, const std::string& cluster_extra, const std::string& user) {
  return "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n"
         "  cluster:\n    server: " + server + "\n" + cluster_extra + "users:\n- name: u\n  user:\n" + user;
}

TEST_CASE("insecure-skip-tls-verify beside a CA is refused, as kubectl refuses it") {
  TempDir dir;
  auto config = LoadKubeconfig(dir.Write("kc", Kubeconfig("https://k:6443",
                                                          "    insecure-skip-tls-verify: true\n"
                                                          "    certificate-authority-data: Q0EK\n",
                                                          "    token: t\n")));
  REQUIRE_FALSE(config.ok());
  CHECK_THAT(config.status().message(),
             Catch::Contains("specifying a root certificates file with the insecure flag is not allowed"));
}

TEST_CASE("insecure-skip-tls-verify alone is honoured with a warning at start") {
  TempDir dir;
  CapturedLog log;
  auto config = LoadKubeconfig(dir.Write("kc", Kubeconfig("https://k:6443", "    insecure-skip-tls-verify: true\n",
                                                          "    token: t\n")));
  REQUIRE(config.ok());
  CHECK(config->insecure_skip_tls_verify);
  CHECK(log.Count("insecure API connection") == 1);
  CHECK(log.Count("not verified") == 1);
}

TEST_CASE("an http:// server never gets a credential: token, exec plugin or client certificate") {
  TempDir dir;
  std::string marker = dir.path() + "/plugin-ran";
  dir.Write("plugin", "#!/bin/sh\ntouch " + marker + "\n");
  std::filesystem::permissions(dir.path() + "/plugin", std::filesystem::perms::owner_all);
  dir.Write("cert", "CERT");
  const std::string users[] = {
      "    token: t\n",
      "    tokenFile: cert\n",
      "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./plugin\n"
      "      interactiveMode: Never\n",
      "    client-certificate: cert\n    client-key: cert\n",
  };
  FakeApiServer server;  // plain http: would record anything sent
  for (const std::string& user : users) {
    INFO(user);
    auto config = LoadKubeconfig(dir.Write("kc", Kubeconfig(server.url(), "", user)));
    REQUIRE_FALSE(config.ok());
    CHECK_THAT(config.status().message(), Catch::Contains("plain http://") && Catch::Contains("use https://"));
  }
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK(server.requests().empty());
}

TEST_CASE("an http:// server without credentials is allowed with a warning") {
  TempDir dir;
  CapturedLog log;
  auto config = LoadKubeconfig(dir.Write("kc", Kubeconfig("http://127.0.0.1:8080", "", "    {}\n")));
  REQUIRE(config.ok());
  CHECK_FALSE(config->bearer_token);
  CHECK(log.Count("neither encrypted nor authenticated") == 1);
}

}  // namespace
}  // namespace nodehook
