#include "agent/kube/connection_config.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdlib>
#include <filesystem>

#include "agent/kube/base64.h"
#include "agent/kube/file_source.h"
#include "agent/kube/yaml_lite.h"

namespace nodehook {
namespace {

// A token file re-read every minute and at once after a 401.
void SetRotatingToken(const std::string& path, std::string initial, TransportConfig* config) {
  RotatingToken token = RotatingTokenSource(path, std::move(initial), SystemClock::Instance());
  config->bearer_token = std::move(token.current);
  config->reload_bearer_token = std::move(token.reload);
}

// JSON kubeconfigs are read into the same tree as YAML ones (without line numbers).
YamlNode FromJson(const rapidjson::Value& v) {
  YamlNode node;
  if (v.IsObject()) {
    node.kind = YamlNode::Kind::kMap;
    for (const auto& m : v.GetObject()) node.entries.emplace_back(m.name.GetString(), FromJson(m.value));
  } else if (v.IsArray()) {
    node.kind = YamlNode::Kind::kList;
    for (const auto& item : v.GetArray()) node.items.push_back(FromJson(item));
  } else if (v.IsString()) {
    node.kind = YamlNode::Kind::kScalar;
    node.scalar.assign(v.GetString(), v.GetStringLength());
  } else if (!v.IsNull()) {  // numbers and booleans keep their JSON spelling
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    node.kind = YamlNode::Kind::kScalar;
    node.scalar = buffer.GetString();
  }
  return node;
}

Result<YamlNode> ParseKubeconfigText(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return ParseYamlLite(text);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
  if (doc.HasParseError()) {
    return InvalidError("malformed JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                        rapidjson::GetParseError_En(doc.GetParseError()));
  }
  return FromJson(doc);
}

// Reads the current context's cluster and user from a parsed kubeconfig.
class KubeconfigReader {
 public:
  KubeconfigReader(const std::string& path, const YamlNode& root)
      : root_(root), dir_(std::filesystem::path(path).parent_path().string()) {
    if (dir_.empty()) dir_ = ".";
  }

  Result<TransportConfig> Read() {
    if (!root_.is_map()) return Error("kubeconfig", "", &root_, "expected a mapping at the top level");
    std::string context_name;
    NODEHOOK_RETURN_IF_ERROR(Scalar(root_, "", "current-context", &context_name));
    if (context_name.empty()) return Error("kubeconfig", "", &root_, "current-context is not set");
    auto context = Named("contexts", "context", context_name);
    if (!context.ok()) return context.status();
    std::string where = "context '" + context_name + "'";
    std::string cluster_name, user_name;
    NODEHOOK_RETURN_IF_ERROR(Scalar(**context, where, "cluster", &cluster_name));
    NODEHOOK_RETURN_IF_ERROR(Scalar(**context, where, "user", &user_name));
    if (cluster_name.empty()) return Error(where, "cluster", *context, "names no cluster");

    TransportConfig config;
    auto cluster = Named("clusters", "cluster", cluster_name);
    if (!cluster.ok()) return cluster.status();
    NODEHOOK_RETURN_IF_ERROR(ReadCluster(**cluster, "cluster '" + cluster_name + "'", &config));
    if (!user_name.empty()) {
      auto user = Named("users", "user", user_name);
      if (!user.ok()) return user.status();
      NODEHOOK_RETURN_IF_ERROR(ReadUser(**user, "user '" + user_name + "'", &config));
    }
    return config;
  }

 private:
  static Status Error(const std::string& where, const std::string& key, const YamlNode* node,
                      const std::string& what) {
    std::string text = where;
    if (!key.empty()) text += " key '" + key + "'";
    if (node && node->line > 0) text += " (line " + std::to_string(node->line) + ")";
    return InvalidError(text + ": " + what);
  }

  // An optional scalar: absent or null leaves *out unchanged.
  static Status Scalar(const YamlNode& map, const std::string& where, const std::string& key, std::string* out) {
    const YamlNode* node = map.Find(key);
    if (!node || node->kind == YamlNode::Kind::kNull) return Status::Ok();
    if (!node->is_scalar()) return Error(where, key, node, "expected a string");
    *out = node->scalar;
    return Status::Ok();
  }

  static Status Bool(const YamlNode& map, const std::string& where, const std::string& key, bool* out) {
    std::string text;
    NODEHOOK_RETURN_IF_ERROR(Scalar(map, where, key, &text));
    if (text.empty()) return Status::Ok();
    if (text == "true" || text == "True" || text == "TRUE") *out = true;
    else if (text == "false" || text == "False" || text == "FALSE") *out = false;
    else return Error(where, key, map.Find(key), "expected true or false, got '" + text + "'");
    return Status::Ok();
  }

  // The `inner` mapping of the entry named `name` in the list `list_key`.
  Result<const YamlNode*> Named(const std::string& list_key, const std::string& inner, const std::string& name) {
    const YamlNode* list = root_.Find(list_key);
    if (!list || !list->is_list()) return Error("kubeconfig", list_key, list, "expected a list");
    for (const YamlNode& entry : list->items) {
      const YamlNode* entry_name = entry.Find("name");
      if (!entry_name || entry_name->scalar != name) continue;
      const YamlNode* body = entry.Find(inner);
      if (!body || !body->is_map()) return Error(inner + " '" + name + "'", inner, &entry, "expected a mapping");
      return body;
    }
    return Error("kubeconfig", list_key, list, "has no entry named '" + name + "'");
  }

  std::string Resolve(const std::string& file) const {
    return std::filesystem::path(file).is_absolute() ? file : dir_ + "/" + file;
  }

  // PEM from `<file_key>-data` (base64) or, failing that, from the file `<file_key>`, whose
  // resolved path then goes to *from_file (when given).
  Status Credential(const YamlNode& map, const std::string& where, const std::string& file_key,
                    std::string* out, std::string* from_file = nullptr) const {
    std::string data, file;
    std::string data_key = file_key + "-data";
    NODEHOOK_RETURN_IF_ERROR(Scalar(map, where, data_key, &data));
    NODEHOOK_RETURN_IF_ERROR(Scalar(map, where, file_key, &file));
    if (!data.empty()) {
      auto decoded = Base64Decode(data);
      if (!decoded.ok()) return Error(where, data_key, map.Find(data_key), decoded.status().message());
      *out = std::move(decoded).value();
    } else if (!file.empty()) {
      auto content = ReadWholeFile(Resolve(file));
      if (!content.ok()) return Error(where, file_key, map.Find(file_key), content.status().message());
      *out = std::move(content).value();
      if (from_file) *from_file = Resolve(file);
    }
    return Status::Ok();
  }

  Status ReadCluster(const YamlNode& cluster, const std::string& where, TransportConfig* config) const {
    NODEHOOK_RETURN_IF_ERROR(Scalar(cluster, where, "server", &config->server));
    if (config->server.empty()) {
      const YamlNode* server = cluster.Find("server");
      return Error(where, "server", server ? server : &cluster, "is not set");
    }
    NODEHOOK_RETURN_IF_ERROR(Bool(cluster, where, "insecure-skip-tls-verify", &config->insecure_skip_tls_verify));
    std::string ca_file;
    NODEHOOK_RETURN_IF_ERROR(Credential(cluster, where, "certificate-authority", &config->ca_pem, &ca_file));
    if (!ca_file.empty()) config->ca_pem_source = WatchedFileContent(ca_file, config->ca_pem);
    return Status::Ok();
  }

  Status ReadUser(const YamlNode& user, const std::string& where, TransportConfig* config) const {
    for (const char* unsupported : {"exec", "auth-provider"}) {
      if (user.Find(unsupported)) {
        return Error(where, unsupported, user.Find(unsupported),
                     "is not supported; use token, tokenFile or a client certificate");
      }
    }
    NODEHOOK_RETURN_IF_ERROR(Credential(user, where, "client-certificate", &config->client_cert_pem));
    NODEHOOK_RETURN_IF_ERROR(Credential(user, where, "client-key", &config->client_key_pem));
    std::string token, token_file;
    NODEHOOK_RETURN_IF_ERROR(Scalar(user, where, "token", &token));
    NODEHOOK_RETURN_IF_ERROR(Scalar(user, where, "tokenFile", &token_file));
    if (!token.empty()) {  // like kubectl, an inline token wins over tokenFile
      config->bearer_token = [token] { return token; };
    } else if (!token_file.empty()) {
      std::string path = Resolve(token_file);
      auto content = ReadWholeFile(path);
      if (!content.ok()) return Error(where, "tokenFile", user.Find("tokenFile"), content.status().message());
      SetRotatingToken(path, TrimWhitespace(*content), config);
    }
    return Status::Ok();
  }

  const YamlNode& root_;
  std::string dir_;
};

}  // namespace

Result<TransportConfig> LoadKubeconfig(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return Status(text.status().code(), "kubeconfig: " + text.status().message());
  auto root = ParseKubeconfigText(*text);
  if (!root.ok()) return InvalidError("kubeconfig " + path + ": " + root.status().message());
  auto config = KubeconfigReader(path, *root).Read();
  if (!config.ok()) return InvalidError("kubeconfig " + path + ": " + config.status().message());
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
