#include "agent/finalizers/finalizers.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "agent/base/kube_names.h"
#include "agent/object/essence.h"
#include "agent/object/object_facts.h"

namespace nodehook {
namespace {

std::string JsonList(const std::vector<std::string>& items) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const auto& i : items) w.String(i.c_str(), static_cast<rapidjson::SizeType>(i.size()));
  w.EndArray();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string JsonString(const std::string& s) { return JsonList({s}).substr(1, JsonList({s}).size() - 2); }

}  // namespace

std::string FinalizerName(const std::string& node_name) {
  // A node named "singleton" would own the singleton resources' finalizer: it gets the hashed form.
  if (IsQualifiedNamePart(node_name) && node_name != "singleton") return kFinalizerPrefix + node_name;
  return std::string(kFinalizerPrefix) + "node-" + EssenceDigest(node_name);
}

bool IsNodehookFinalizer(const std::string& finalizer) { return finalizer.rfind(kFinalizerPrefix, 0) == 0; }

std::string PlainNodeName(const std::string& finalizer) {
  if (!IsNodehookFinalizer(finalizer)) return "";
  std::string plain = finalizer.substr(std::string(kFinalizerPrefix).size());
  return FinalizerName(plain) == finalizer ? plain : "";
}

Result<std::vector<std::string>> ReadFinalizers(const std::string& object_json) {
  FactsPtr facts = ReadFacts(object_json, FactsSpec{});
  if (!facts->finalizers_readable.ok()) return facts->finalizers_readable;
  return facts->finalizers;
}

std::string AddFinalizerPatch(const std::vector<std::string>& current, const std::string& resource_version,
                              const std::string& finalizer) {
  if (current.empty()) {
    return R"([{"op":"test","path":"/metadata/resourceVersion","value":)" + JsonString(resource_version) + "}," +
           R"({"op":"add","path":"/metadata/finalizers","value":)" + JsonList({finalizer}) + "}]";
  }
  return R"([{"op":"test","path":"/metadata/finalizers","value":)" + JsonList(current) + "}," +
         R"({"op":"add","path":"/metadata/finalizers/-","value":)" + JsonString(finalizer) + "}]";
}

std::string RemoveFinalizerPatch(const std::vector<std::string>& current, const std::string& finalizer) {
  auto it = std::find(current.begin(), current.end(), finalizer);
  if (it == current.end()) return "";
  std::vector<std::string> remaining(current.begin(), current.end());
  remaining.erase(remaining.begin() + (it - current.begin()));
  return R"([{"op":"test","path":"/metadata/finalizers","value":)" + JsonList(current) + "}," +
         R"({"op":"replace","path":"/metadata/finalizers","value":)" + JsonList(remaining) + "}]";
}

std::vector<std::string> UidsDeletingWith(const ObjectCache& cache, const std::string& finalizer) {
  std::vector<std::string> uids;
  for (const auto& uid : cache.Uids()) {
    auto entry = cache.Get(uid);
    if (!entry || entry->gone || !entry->object || !entry->object->meta.deleting) continue;
    if (entry->facts && entry->facts->HasFinalizer(finalizer)) uids.push_back(uid);
  }
  return uids;
}

}  // namespace nodehook
