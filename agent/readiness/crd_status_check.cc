#include "agent/readiness/crd_status_check.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"

#include "agent/base/log.h"

namespace nodehook {
namespace {

bool PreservesUnknown(const rapidjson::Value* schema) {
  const rapidjson::Value* keep = schema ? MemberOf(*schema, "x-kubernetes-preserve-unknown-fields") : nullptr;
  return keep != nullptr && keep->IsBool() && keep->GetBool();
}

}  // namespace

std::string CrdName(const ResourceRef& ref) { return ref.plural + "." + ref.group; }

Status CheckCrdKeepsConditions(const std::string& crd_json, const WatchedResource& resource) {
  const std::string crd = "CustomResourceDefinition " + CrdName(resource.ref);
  const std::string key = "ready_condition \"" + resource.ready_condition + "\"";
  rapidjson::Document doc;
  doc.Parse(crd_json.data(), crd_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError(crd + ": not a JSON object");
  const rapidjson::Value* spec = MemberOf(doc, "spec");
  const rapidjson::Value* versions = spec ? MemberOf(*spec, "versions") : nullptr;
  const rapidjson::Value* served = nullptr;
  if (versions != nullptr && versions->IsArray()) {
    for (const auto& v : versions->GetArray()) {
      const rapidjson::Value* name = MemberOf(v, "name");
      if (name && name->IsString() && resource.ref.version == name->GetString()) served = &v;
    }
  }
  if (served == nullptr) return InvalidError(crd + " has no version " + resource.ref.version + " (" + key + ")");
  const rapidjson::Value* subresources = MemberOf(*served, "subresources");
  if (subresources == nullptr || MemberOf(*subresources, "status") == nullptr) {
    return InvalidError(crd + " version " + resource.ref.version + " has no status subresource, so " + key +
                        " cannot be kept on its objects: add \"subresources: {status: {}}\" to the version, or "
                        "drop ready_condition");
  }
  const rapidjson::Value* schema = MemberOf(*served, "schema");
  const rapidjson::Value* root = schema ? MemberOf(*schema, "openAPIV3Schema") : nullptr;
  if (root == nullptr || PreservesUnknown(root)) return Status::Ok();
  const rapidjson::Value* props = MemberOf(*root, "properties");
  const rapidjson::Value* status = props ? MemberOf(*props, "status") : nullptr;
  if (PreservesUnknown(status)) return Status::Ok();
  const rapidjson::Value* status_props = status ? MemberOf(*status, "properties") : nullptr;
  const rapidjson::Value* conditions = status_props ? MemberOf(*status_props, "conditions") : nullptr;
  const rapidjson::Value* type = conditions ? MemberOf(*conditions, "type") : nullptr;
  if (type == nullptr || !type->IsString() || std::string(type->GetString()) != "array") {
    return InvalidError(crd + " version " + resource.ref.version + ": its schema has no status.conditions list, so "
                        "the API server would drop " + key + ": declare status.conditions (type: array), or "
                        "x-kubernetes-preserve-unknown-fields on status");
  }
  return Status::Ok();
}

Status CheckReadyConditionCrd(KubeClient& client, const WatchedResource& resource) {
  ResourceRef crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", ""};
  auto got = client.Get(ObjectRef{crds, "", CrdName(resource.ref)});
  if (!got.ok()) {
    if (got.status().code() == StatusCode::kNotFound) {
      return InvalidError("no CustomResourceDefinition " + CrdName(resource.ref) + ": ready_condition needs a "
                          "custom resource with a status subresource");
    }
    return Status(got.status().code(), "CustomResourceDefinition " + CrdName(resource.ref) +
                                           " cannot be read to check ready_condition: " + got.status().message());
  }
  return CheckCrdKeepsConditions(got->json, resource);
}

Status CheckReadyConditionCrds(KubeClient& client, const Config& config, const CancelToken& stop, Clock& clock,
                               Duration retry) {
  for (const WatchedResource& r : config.resources) {
    if (r.ready_condition.empty()) continue;
    bool logged = false;
    for (;;) {
      Status checked = CheckReadyConditionCrd(client, r);
      const StatusCode code = checked.code();
      if (checked.ok() || code == StatusCode::kInvalid || code == StatusCode::kForbidden ||
          code == StatusCode::kUnauthorized) {
        if (!checked.ok()) return checked;
        break;
      }
      if (!logged) {
        Log(LogLevel::kWarn, "ready condition not checked yet",
            {{"resource", r.ref.Id()}, {"crd", CrdName(r.ref)}, {"error", checked.ToString()},
             {"next", "read it again every " + std::to_string(retry.count()) + " ms"}});
        logged = true;
      }
      if (!SleepUnlessCancelled(clock, retry, stop)) return Status(StatusCode::kCancelled, "stopped");
    }
  }
  return Status::Ok();
}

}  // namespace nodehook
