#include "agent/outputs/node_condition_writer.h"

#include <rapidjson/document.h>

#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/base/duration_math.h"
#include "agent/object/essence.h"

namespace nodehook {
namespace {

const ResourceRef& Nodes() {
  static const ResourceRef nodes{"", "v1", "nodes", "", ""};
  return nodes;
}

// metav1.Time: RFC 3339 in whole seconds, as the API server stores it.
std::string Seconds(TimePoint t) {
  std::string text = Rfc3339Millis(t);  // 2026-12-04T10:00:00.123Z
  const auto dot = text.rfind('.');
  return dot == std::string::npos ? text : text.substr(0, dot) + "Z";
}

// Opens an apply configuration of the Node: {"apiVersion", "kind", "metadata": {"name"}, ... left open.
void StartNode(JsonWriter& w, const std::string& node) {
  w.StartObject();
  PutString(w, "apiVersion", "v1");
  PutString(w, "kind", "Node");
  w.Key("metadata");
  w.StartObject();
  PutString(w, "name", node);
  w.EndObject();
}

}  // namespace

std::string NodeConditionManager(const ResourceRef& resource) {
  std::string name = kNodeOutputsManagerPrefix + resource.plural + (resource.group.empty() ? "" : "." + resource.group);
  if (name.size() <= 128) return name;
  const std::string digest = EssenceDigest(name).substr(0, 12);
  return name.substr(0, 128 - 1 - digest.size()) + "-" + digest;
}

NodeConditionWriter::NodeConditionWriter(KubeClient& client, std::string node, std::vector<NodeConditionSource> sources,
                                         Clock& wall, Clock& monotonic, NodeConditionWriterOptions options)
    : client_(client),
      node_(std::move(node)),
      sources_(std::move(sources)),
      wall_(wall),
      monotonic_(monotonic),
      options_(std::move(options)),
      retiring_(options_.retire.begin(), options_.retire.end()) {}

void NodeConditionWriter::Run(const CancelToken& stop) {
  do {
    Tick();
  } while (SleepUnlessCancelled(monotonic_, options_.round, stop));
}

bool NodeConditionWriter::Tick() {
  if (!node_read_ && !sources_.empty() && !ReadNode()) return false;
  bool ok = true;
  for (const std::string& manager : std::set<std::string>(retiring_)) {
    if (Retire(manager)) {
      retiring_.erase(manager);
      if (options_.retired) options_.retired(manager);
    } else {
      ok = false;
    }
  }
  for (const NodeConditionSource& source : sources_) {
    NodeConditionValue value = source.derive();
    if (Due(source, value)) ok = Apply(source, value) && ok;
  }
  if (ok) warned_ = false;
  return ok;
}

bool NodeConditionWriter::Due(const NodeConditionSource& source, const NodeConditionValue& value) {
  const TimePoint now = monotonic_.Now();
  auto known = applied_.find(source.type);
  const bool inherited = inherited_.count(source.type) > 0;
  if (known != applied_.end() && known->second.value == value) {
    unknown_since_.erase(source.type);
    if (inherited) {
      inherited_.erase(source.type);
      Log(LogLevel::kInfo, "node condition kept",
          {{"node", node_}, {"condition", source.type}, {"status", value.status}, {"reason", value.reason},
           {"resource", source.resource.Id()}, {"next", "write it only when its status, reason or message changes"}});
    }
    return false;
  }
  if (value.status == "Unknown" && known != applied_.end() && known->second.value.status != "Unknown") {
    const TimePoint since = unknown_since_.emplace(source.type, now).first->second;
    // Catching up after a restart: keep the verdict found on the Node a while rather than write
    // Unknown, which the next rounds would most likely turn back.
    if (inherited && now - started_ < options_.hold_unknown) return false;
    // A verdict turns Unknown only once the work lasted: a change handled at once writes nothing.
    if (now - since < options_.unknown_after) return false;
  }
  unknown_since_.erase(source.type);
  const bool message_only = known != applied_.end() && known->second.value.status == value.status &&
                            known->second.value.reason == value.reason;
  if (message_only && known->second.written_at && now - *known->second.written_at < options_.message_every) {
    return false;  // derived again next round: written once the interval is over, if still so
  }
  inherited_.erase(source.type);
  return true;
}

bool NodeConditionWriter::ReadNode() {
  Result<KubeObject> node = client_.Get(ObjectRef{Nodes(), "", node_});
  if (!node.ok()) {
    Failed("read this Node", node.status());
    return false;
  }
  rapidjson::Document doc;
  doc.Parse(node->json.c_str(), node->json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    Failed("read this Node", InvalidError("the Node is not a JSON object"));
    return false;
  }
  std::set<std::string> types, managers;
  for (const NodeConditionSource& s : sources_) types.insert(s.type), managers.insert(NodeConditionManager(s.resource));
  const auto status = doc.FindMember("status");
  if (status != doc.MemberEnd() && status->value.IsObject()) {
    const auto conditions = status->value.FindMember("conditions");
    if (conditions != status->value.MemberEnd() && conditions->value.IsArray()) {
      for (const auto& c : conditions->value.GetArray()) {
        const std::string type = StringMember(c, "type");
        if (types.count(type) == 0) continue;
        applied_[type] = Applied{{StringMember(c, "status"), StringMember(c, "reason"), StringMember(c, "message")},
                                 StringMember(c, "lastTransitionTime"), std::nullopt};
        inherited_.insert(type);
      }
    }
  }
  const auto metadata = doc.FindMember("metadata");
  if (metadata != doc.MemberEnd() && metadata->value.IsObject()) {
    const auto fields = metadata->value.FindMember("managedFields");
    if (fields != metadata->value.MemberEnd() && fields->value.IsArray()) {
      for (const auto& f : fields->value.GetArray()) {
        const std::string manager = StringMember(f, "manager");
        if (manager.rfind(kNodeOutputsManagerPrefix, 0) == 0 && StringMember(f, "operation") == "Apply" &&
            StringMember(f, "subresource") == "status" && managers.count(manager) == 0) {
          retiring_.insert(manager);
        }
      }
    }
  }
  node_read_ = true;
  started_ = monotonic_.Now();
  return true;
}

bool NodeConditionWriter::Apply(const NodeConditionSource& source, const NodeConditionValue& value) {
  auto known = applied_.find(source.type);
  const std::string since = known != applied_.end() && known->second.value.status == value.status
                                ? known->second.last_transition_time
                                : Seconds(wall_.Now());
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  StartNode(w, node_);
  w.Key("status");
  w.StartObject();
  w.Key("conditions");
  w.StartArray();
  w.StartObject();
  PutString(w, "type", source.type);
  PutString(w, "status", value.status);
  PutString(w, "reason", value.reason);
  PutString(w, "message", value.message);
  PutString(w, "lastTransitionTime", since);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  const std::string manager = NodeConditionManager(source.resource);
  Status applied = client_.Apply(ObjectRef{Nodes(), "", node_}, "status", manager, buffer.GetString());
  if (!applied.ok()) {
    Failed("set condition " + source.type, applied);
    return false;
  }
  const bool transition = known == applied_.end() || known->second.value.status != value.status;
  applied_[source.type] = Applied{value, since, monotonic_.Now()};
  Log(LogLevel::kInfo, "node condition set",
      {{"node", node_}, {"condition", source.type}, {"status", value.status}, {"reason", value.reason},
       {"resource", source.resource.Id()}, {"transition", transition ? "true" : "false"},
       {"next", "write it again only when its status, reason or message changes"}});
  return true;
}

bool NodeConditionWriter::Retire(const std::string& manager) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  StartNode(w, node_);
  w.EndObject();
  // Applying nothing as that manager removes what it alone owned: the condition of a resource
  // that left the config (or no longer keeps one).
  Status applied = client_.Apply(ObjectRef{Nodes(), "", node_}, "status", manager, buffer.GetString());
  if (!applied.ok()) {
    Failed("remove the conditions of " + manager, applied);
    return false;
  }
  Log(LogLevel::kInfo, "node condition removed",
      {{"node", node_}, {"manager", manager}, {"next", "its resource keeps no condition any more"}});
  return true;
}

void NodeConditionWriter::Failed(const std::string& what, const Status& status) {
  if (warned_) return;
  warned_ = true;
  Log(LogLevel::kWarn, "node condition not written",
      {{"node", node_}, {"action", what}, {"error", status.ToString()},
       {"next", "try again in " + SecondsText(options_.round)}});
}

}  // namespace nodehook
