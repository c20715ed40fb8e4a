#include "agent/kube/credentials/exec_credential.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cctype>

#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/kube/credentials/base64.h"
#include "agent/kube/credentials/plugin_process.h"

namespace nodehook {
namespace {

using Writer = JsonWriter;

void WriteCluster(Writer& w, const ExecClusterInfo& c) {
  w.Key("cluster");
  w.StartObject();
  PutString(w, "server", c.server);
  if (!c.tls_server_name.empty()) PutString(w, "tls-server-name", c.tls_server_name);
  if (c.insecure_skip_tls_verify) {
    w.Key("insecure-skip-tls-verify");
    w.Bool(true);
  }
  if (!c.ca_pem.empty()) PutString(w, "certificate-authority-data", Base64Encode(c.ca_pem));
  if (!c.proxy_url.empty()) PutString(w, "proxy-url", c.proxy_url);
  if (!c.config_json.empty()) {
    w.Key("config");
    w.RawValue(c.config_json.c_str(), c.config_json.size(), rapidjson::kObjectType);
  }
  w.EndObject();
}

std::string Describe(const ExecPluginConfig& config) {
  return "exec plugin '" + config.argv.at(0) + "' of user '" + config.user + "'";
}

const rapidjson::Value* Member(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

}  // namespace

std::string ExecInfoJson(const ExecPluginConfig& config) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  PutString(w, "kind", "ExecCredential");
  PutString(w, "apiVersion", config.api_version);
  w.Key("spec");
  w.StartObject();
  if (config.cluster) WriteCluster(w, *config.cluster);
  w.Key("interactive");
  w.Bool(false);
  w.EndObject();
  w.EndObject();
  return buffer.GetString();
}

Result<ExecCredential> ParseExecCredential(const std::string& stdout_text, const std::string& api_version) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(stdout_text.c_str(), stdout_text.size());
  if (doc.HasParseError()) {
    return InvalidError("printed no ExecCredential JSON (offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                        rapidjson::GetParseError_En(doc.GetParseError()) + ")");
  }
  if (!doc.IsObject() || StringMember(doc, "kind") != "ExecCredential") {
    return InvalidError("printed JSON that is not an ExecCredential (kind must be ExecCredential)");
  }
  std::string returned = StringMember(doc, "apiVersion");
  if (returned != api_version) {
    return InvalidError("is configured to use API version " + api_version + ", plugin returned version '" +
                        returned + "'");
  }
  const rapidjson::Value* status = Member(doc, "status");
  if (!status || !status->IsObject()) return InvalidError("didn't return a status field");
  ExecCredential credential;
  credential.token = StringMember(*status, "token");
  bool has_cert = !StringMember(*status, "clientCertificateData").empty() ||
                  !StringMember(*status, "clientKeyData").empty();
  if (credential.token.empty() && has_cert) {
    return InvalidError("returned a client certificate; only tokens from exec plugins are supported");
  }
  if (credential.token.empty()) return InvalidError("didn't return a token or cert/key pair");
  std::string expires = StringMember(*status, "expirationTimestamp");
  if (!expires.empty()) {
    auto parsed = ParseRfc3339(expires);
    if (!parsed.ok()) return InvalidError("status.expirationTimestamp: " + parsed.status().message());
    credential.expires = *parsed;
  }
  return credential;
}

Result<std::string> ExecCredentialSource::Token() {
  MutexLock lock(&mu_);
  if (cached_ && (!cached_->expires || clock_.Now() < *cached_->expires)) return cached_->token;
  return RunLocked();
}

Result<std::string> ExecCredentialSource::Refresh(const std::string& rejected) {
  MutexLock lock(&mu_);
  if (cached_ && cached_->token != rejected) return cached_->token;
  return RunLocked();
}

Result<std::string> ExecCredentialSource::RunLocked() {
  cached_.reset();
  PluginCommand command;
  command.argv = config_.argv;
  command.env = config_.env;
  command.env.emplace_back("KUBERNETES_EXEC_INFO", ExecInfoJson(config_));
  command.timeout = config_.timeout;
  auto ran = RunPlugin(command);
  if (!ran.ok()) {
    bool not_started = ran.status().code() == StatusCode::kInvalid;
    std::string hint = not_started && !config_.install_hint.empty() ? "\n" + config_.install_hint : "";
    return Status(ran.status().code() == StatusCode::kTimeout ? StatusCode::kTimeout : StatusCode::kUnavailable,
                  Describe(config_) + ": " + ran.status().message() + hint);
  }
  if (ran->exit_code != 0) {
    return UnavailableError(Describe(config_) + " exited " + std::to_string(ran->exit_code) +
                            (ran->err.empty() ? " with no output on stderr" : "; stderr: " + ran->err));
  }
  auto credential = ParseExecCredential(ran->out, config_.api_version);
  if (!credential.ok()) {
    return UnavailableError(Describe(config_) + " " + credential.status().message() +
                            (ran->err.empty() ? "" : "; stderr: " + ran->err));
  }
  std::string expires = credential->expires ? std::to_string(ToMillis(*credential->expires)) : "never";
  Log(LogLevel::kInfo, "exec credential obtained",
      {{"plugin", config_.argv.at(0)}, {"user", config_.user}, {"expires_ms", expires},
       {"stderr", ran->err}, {"next", "reuse the token until it expires or is rejected"}});
  cached_ = std::move(credential).value();
  return cached_->token;
}

}  // namespace nodehook
