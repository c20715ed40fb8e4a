#include "agent/kube/credentials/connection_config.h"

#include <cstdlib>
#include <memory>

#include "agent/kube/credentials/exec_credential.h"
#include "agent/kube/credentials/file_source.h"
#include "agent/kube/credentials/kubeconfig_exec.h"
#include "agent/kube/credentials/kubeconfig_fields.h"
#include "agent/kube/credentials/kubeconfig_files.h"
#include "agent/kube/transport/transport_security.h"

namespace nodehook {
namespace {

constexpr const char* kExecExtension = "client.authentication.k8s.io/exec";

// A token file re-read every minute and at once after a 401.
void SetRotatingToken(const std::string& path, std::string initial, TransportConfig* config) {
  RotatingToken token = RotatingTokenSource(path, std::move(initial), SystemClock::Instance());
  config->bearer_token = std::move(token.current);
  config->reload_bearer_token = std::move(token.reload);
}

void SetExecToken(ExecPluginConfig plugin, Clock& clock, TransportConfig* config) {
  auto source = std::make_shared<ExecCredentialSource>(std::move(plugin), clock);
  config->bearer_token = [source] { return source->Token(); };
  config->reload_bearer_token = [source](const std::string& rejected) { return source->Refresh(rejected); };
}

Status ReadProxyUrl(const FieldReader& cluster, std::string* out) {
  NODEHOOK_RETURN_IF_ERROR(cluster.String("proxy-url", out));
  if (!out->empty() && out->rfind("http://", 0) != 0) {
    return cluster.Error("proxy-url", "only http:// proxies are supported (https:// servers are reached through "
                                      "them with CONNECT); got '" + *out + "'");
  }
  return Status::Ok();
}

// The exec plugin's cluster config: the cluster's extension named kExecExtension, as JSON.
Status ReadExecExtension(const FieldReader& cluster, std::string* out) {
  const YamlNode* list = cluster.Find("extensions");
  if (!list || list->kind == YamlNode::Kind::kNull) return Status::Ok();
  if (!list->is_list()) return cluster.Error("extensions", "expected a list of {name, extension}");
  for (const YamlNode& entry : list->items) {
    const YamlNode* name = entry.Find("name");
    const YamlNode* extension = entry.Find("extension");
    if (name && name->scalar == kExecExtension && extension) *out = YamlToJson(*extension);
  }
  return Status::Ok();
}

Status ReadCluster(const FieldReader& cluster, TransportConfig* config, ExecClusterInfo* info) {
  NODEHOOK_RETURN_IF_ERROR(cluster.String("server", &config->server));
  if (config->server.empty()) return cluster.Error("server", "is not set");
  NODEHOOK_RETURN_IF_ERROR(cluster.Bool("insecure-skip-tls-verify", &config->insecure_skip_tls_verify));
  NODEHOOK_RETURN_IF_ERROR(cluster.String("tls-server-name", &config->tls_server_name));
  NODEHOOK_RETURN_IF_ERROR(ReadProxyUrl(cluster, &config->proxy_url));
  std::string ca_file;
  NODEHOOK_RETURN_IF_ERROR(cluster.Pem("certificate-authority", &config->ca_pem, &ca_file));
  if (!ca_file.empty()) config->ca_pem_source = WatchedFileContent(ca_file, config->ca_pem);
  info->server = config->server;
  info->tls_server_name = config->tls_server_name;
  info->insecure_skip_tls_verify = config->insecure_skip_tls_verify;
  info->ca_pem = config->ca_pem;
  info->proxy_url = config->proxy_url;
  return ReadExecExtension(cluster, &info->config_json);
}

Status ReadUser(const FieldReader& user, const std::string& user_name, const ExecClusterInfo& cluster, Clock& clock,
                TransportConfig* config) {
  const char* unsupported[][2] = {
      {"auth-provider", "auth-provider plugins were removed from kubectl; use an exec plugin"},
      {"username", "basic authentication is not supported; use a token or client certificate"},
      {"password", "basic authentication is not supported; use a token or client certificate"},
      {"as", "impersonation is not supported"},
      {"as-uid", "impersonation is not supported"},
      {"as-groups", "impersonation is not supported"},
      {"as-user-extra", "impersonation is not supported"},
  };
  for (const auto& [key, why] : unsupported) {
    const YamlNode* node = user.Find(key);
    if (node && node->kind != YamlNode::Kind::kNull) return user.Error(key, why);
  }
  NODEHOOK_RETURN_IF_ERROR(user.Pem("client-certificate", &config->client_cert_pem));
  NODEHOOK_RETURN_IF_ERROR(user.Pem("client-key", &config->client_key_pem));
  std::string token, token_file;
  NODEHOOK_RETURN_IF_ERROR(user.String("token", &token));
  NODEHOOK_RETURN_IF_ERROR(user.String("tokenFile", &token_file));
  const YamlNode* exec = user.Find("exec");
  if (exec && exec->kind != YamlNode::Kind::kNull) {
    if (!exec->is_map()) return user.Error("exec", "expected a mapping");
    if (!token.empty() || !token_file.empty()) {
      return user.Error("exec", "is set together with token or tokenFile; keep one way to get a token");
    }
    auto plugin = ReadExecPlugin(FieldReader(user.file(), *exec, user.where() + " exec"), user_name, cluster);
    if (!plugin.ok()) return plugin.status();
    SetExecToken(std::move(plugin).value(), clock, config);
  } else if (!token.empty()) {  // like kubectl, an inline token wins over tokenFile
    config->bearer_token = [token] { return token; };
  } else if (!token_file.empty()) {
    std::string path = user.Resolve(token_file);
    auto content = ReadWholeFile(path);
    if (!content.ok()) return user.Error("tokenFile", content.status().message());
    SetRotatingToken(path, TrimWhitespace(*content), config);
  }
  return Status::Ok();
}

Result<const NamedEntry*> Lookup(const MergedKubeconfig& merged, const std::map<std::string, NamedEntry>& entries,
                                 const std::string& kind, const std::string& name, const std::string& named_by) {
  auto it = entries.find(name);
  if (it == entries.end()) {
    return InvalidError(merged.Describe() + ": " + named_by + " names " + kind + " '" + name +
                        "', which is not defined");
  }
  return &it->second;
}

Result<TransportConfig> ReadCurrentContext(const MergedKubeconfig& merged, Clock& clock) {
  const std::string& context_name = merged.current_context;
  if (context_name.empty()) return InvalidError(merged.Describe() + ": current-context is not set");
  auto context = Lookup(merged, merged.contexts, "context", context_name, "current-context");
  if (!context.ok()) return context.status();
  FieldReader ctx(*(*context)->file, *(*context)->body, "context '" + context_name + "'");
  std::string cluster_name, user_name;
  NODEHOOK_RETURN_IF_ERROR(ctx.String("cluster", &cluster_name));
  NODEHOOK_RETURN_IF_ERROR(ctx.String("user", &user_name));
  if (cluster_name.empty()) return ctx.Error("cluster", "names no cluster");

  TransportConfig config;
  ExecClusterInfo cluster_info;
  auto cluster = Lookup(merged, merged.clusters, "cluster", cluster_name, ctx.where());
  if (!cluster.ok()) return cluster.status();
  FieldReader cluster_fields(*(*cluster)->file, *(*cluster)->body, "cluster '" + cluster_name + "'");
  NODEHOOK_RETURN_IF_ERROR(ReadCluster(cluster_fields, &config, &cluster_info));
  if (!user_name.empty()) {
    auto user = Lookup(merged, merged.users, "user", user_name, ctx.where());
    if (!user.ok()) return user.status();
    NODEHOOK_RETURN_IF_ERROR(ReadUser(FieldReader(*(*user)->file, *(*user)->body, "user '" + user_name + "'"),
                                      user_name, cluster_info, clock, &config));
  }
  auto warnings = CheckTransportSecurity(config);
  if (!warnings.ok()) return InvalidError(merged.Describe() + ": " + warnings.status().message());
  LogTransportWarnings(config, *warnings);
  return config;
}

}  // namespace

Result<TransportConfig> LoadKubeconfig(const std::string& path_list, Clock& clock) {
  auto merged = LoadKubeconfigFiles(path_list);
  if (!merged.ok()) return merged.status();
  auto config = ReadCurrentContext(*merged, clock);
  if (!config.ok()) return Status(config.status().code(), "kubeconfig " + config.status().message());
  return config;
}

Result<TransportConfig> LoadInClusterConfig(const std::string& secrets_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return InvalidError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set "
        "(not running in a pod? use --kubeconfig)");
  }
  std::string host_text = host;
  if (host_text.find(':') != std::string::npos) host_text = "[" + host_text + "]";  // IPv6
  TransportConfig config;
  config.server = "https://" + host_text + ":" + port;
  auto ca = ReadWholeFile(secrets_dir + "/ca.crt");
  if (!ca.ok()) return Status(ca.status().code(), "in-cluster config: " + ca.status().message());
  config.ca_pem = std::move(ca).value();
  config.ca_pem_source = WatchedFileContent(secrets_dir + "/ca.crt", config.ca_pem);
  std::string token_path = secrets_dir + "/token";
  auto token = ReadWholeFile(token_path);
  if (!token.ok()) return Status(token.status().code(), "in-cluster config: " + token.status().message());
  SetRotatingToken(token_path, TrimWhitespace(*token), &config);
  return config;
}

}  // namespace nodehook
