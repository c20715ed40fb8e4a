#include "agent/outputs/node_outputs_writer.h"

#include <rapidjson/document.h>

#include <algorithm>

#include "agent/base/duration_math.h"
#include "agent/base/json_text.h"
#include "agent/base/log.h"
#include "agent/base/utc_time.h"
#include "agent/object/essence.h"
#include "agent/outputs/node_taints.h"

namespace nodehook {
namespace {

// Erases the entries `pred` picks; returns how many.
template <typename Map, typename Pred>
size_t EraseIf(Map& map, Pred pred) {
  size_t erased = 0;
  for (auto it = map.begin(); it != map.end();) {
    if (pred(*it)) {
      it = map.erase(it);
      ++erased;
    } else {
      ++it;
    }
  }
  return erased;
}

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

// Opens an apply configuration of the Node: {"apiVersion", "kind", "metadata": {"name", ... left open.
void StartNode(JsonWriter& w, const std::string& node) {
  w.StartObject();
  PutString(w, "apiVersion", "v1");
  PutString(w, "kind", "Node");
  w.Key("metadata");
  w.StartObject();
  PutString(w, "name", node);
}

void PutMap(JsonWriter& w, const char* key, const std::map<std::string, std::string>& entries) {
  const std::string json = StringMapJson(entries);
  w.Key(key);
  w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
}

NodeConditionValue ValueOf(const OutputCondition& c) { return {c.status, c.reason, c.message}; }

// The published conditions `held` has besides `derived`'s type, by type.
std::map<std::string, OutputCondition> Published(const std::map<std::string, NodeConditionOnNode>& held,
                                                 const std::string& derived) {
  std::map<std::string, OutputCondition> out;
  for (const auto& [type, c] : held) {
    if (type != derived) out.emplace(type, c.condition);
  }
  return out;
}

}  // namespace

std::string NodeOutputsManager(const ResourceRef& resource) {
  std::string name = kNodeOutputsManagerPrefix + resource.plural + (resource.group.empty() ? "" : "." + resource.group);
  if (name.size() <= 128) return name;
  const std::string digest = EssenceDigest(name).substr(0, 12);
  return name.substr(0, 128 - 1 - digest.size()) + "-" + digest;
}

NodeOutputsWriter::NodeOutputsWriter(KubeClient& client, std::string node, std::vector<NodeOutputsSource> sources,
                                     Clock& wall, Clock& monotonic, NodeOutputsWriterOptions options)
    : client_(client),
      node_(std::move(node)),
      sources_(std::move(sources)),
      wall_(wall),
      monotonic_(monotonic),
      options_(std::move(options)),
      pacing_(options_.pacing),
      noted_taints_(options_.noted_taints),
      applied_metadata_(options_.metadata_managers),
      retiring_(options_.retire.begin(), options_.retire.end()) {}

void NodeOutputsWriter::Run(const CancelToken& stop) {
  do {
    Tick();
  } while (SleepUnlessCancelled(monotonic_, options_.round, stop));
}

bool NodeOutputsWriter::Tick() {
  if (!node_read_ && !sources_.empty() && !ReadNode()) return false;
  bool ok = true;
  // A failed read again is tried again later; this round's writes go on.
  if (node_read_ && options_.recheck > Duration::zero() && monotonic_.Now() >= recheck_at_) ok = Recheck();
  for (const std::string& manager : std::set<std::string>(retiring_)) {
    if (Retire(manager)) {
      retiring_.erase(manager);
      if (options_.retired) options_.retired(manager);
    } else {
      ok = false;
    }
  }
  for (const NodeOutputsSource& source : sources_) {
    const bool written = WriteSource(source);
    ok = written && ok;
    const std::string manager = NodeOutputsManager(source.resource);
    Held& held = held_[manager];
    const bool holds = !held.Empty() || !noted_taints_[manager].empty();
    if (written && options_.noted && held.told_holds != holds) {
      options_.noted(manager, holds, applied_metadata_.count(manager) > 0);
      held.told_holds = holds;
    }
  }
  if (ok) warned_ = false;
  return ok;
}

Result<NodeView> NodeOutputsWriter::GetNode() {
  Result<KubeObject> node = client_.Get(ObjectRef{Nodes(), "", node_});
  return node.ok() ? ReadNodeView(node->json) : Result<NodeView>(node.status());
}

bool NodeOutputsWriter::ReadNode() {
  Result<NodeView> view = GetNode();
  if (!view.ok()) {
    Failed("read this Node", view.status());
    return false;
  }
  const TimePoint now = monotonic_.Now();
  pacing_.Started(now);
  std::set<std::string> managers;
  for (const NodeOutputsSource& s : sources_) {
    const std::string manager = NodeOutputsManager(s.resource);
    managers.insert(manager);
    Held& held = held_[manager];
    const auto found = view->applied.find(manager);
    const AppliedFields applied = found != view->applied.end() ? found->second : AppliedFields{};
    for (const auto& [type, on_node] : view->conditions) {
      // The derived condition counts whoever applied it (an older agent, by hand): it is compared.
      if (type == s.condition || applied.conditions.count(type) > 0) held.conditions[type] = on_node;
      if (type == s.condition) pacing_.Found(type, now);
    }
    for (const std::string& key : applied.labels) {
      if (view->labels.count(key) > 0) held.labels[key] = view->labels.at(key);
    }
    for (const std::string& key : applied.annotations) {
      if (view->annotations.count(key) > 0) held.annotations[key] = view->annotations.at(key);
    }
    for (const OutputTaint& t : noted_taints_[manager]) {
      if (std::find(view->taints.begin(), view->taints.end(), t) != view->taints.end()) held.taints.push_back(t);
    }
  }
  for (const auto& [manager, applied] : view->applied) {
    if (manager.rfind(kNodeOutputsManagerPrefix, 0) != 0) continue;
    if (applied.metadata) applied_metadata_.insert(manager);
    if (managers.count(manager) == 0) retiring_.insert(manager);
  }
  for (const auto& [manager, taints] : noted_taints_) {
    if (managers.count(manager) == 0 && !taints.empty()) retiring_.insert(manager);
  }
  node_read_ = true;
  recheck_at_ = now + options_.recheck;
  return true;
}

bool NodeOutputsWriter::Recheck() {
  Result<NodeView> view = GetNode();
  if (!view.ok()) {
    recheck_at_ = monotonic_.Now() + std::min<Duration>(options_.recheck, std::chrono::seconds(30));
    Failed("read this Node again", view.status());
    return false;
  }
  recheck_at_ = monotonic_.Now() + options_.recheck;
  auto gone = [](const std::map<std::string, std::string>& on_node) {
    return [&on_node](const auto& entry) {
      auto it = on_node.find(entry.first);
      return it == on_node.end() || it->second != entry.second;
    };
  };
  for (const NodeOutputsSource& s : sources_) {
    Held& held = held_[NodeOutputsManager(s.resource)];
    size_t forgotten = 0;
    forgotten += EraseIf(held.labels, gone(view->labels));
    forgotten += EraseIf(held.annotations, gone(view->annotations));
    forgotten += EraseIf(held.conditions, [&](const auto& entry) {
      auto it = view->conditions.find(entry.first);
      return it == view->conditions.end() || !(it->second.condition == entry.second.condition);
    });
    const size_t taints = held.taints.size();
    held.taints.erase(std::remove_if(held.taints.begin(), held.taints.end(),
                                     [&](const OutputTaint& t) {
                                       return std::find(view->taints.begin(), view->taints.end(), t) ==
                                              view->taints.end();
                                     }),
                      held.taints.end());
    forgotten += taints - held.taints.size();
    if (forgotten > 0) {
      Log(LogLevel::kWarn, "node outputs taken off",
          {{"node", node_}, {"resource", s.resource.Id()}, {"count", forgotten},
           {"next", "apply them again this round"}});
    }
  }
  return true;
}

bool NodeOutputsWriter::WriteSource(const NodeOutputsSource& source) {
  const std::string manager = NodeOutputsManager(source.resource);
  Held& held = held_[manager];
  bool derived_due = false;
  std::optional<OutputCondition> derived;  // the derived condition the status is to hold
  if (!source.condition.empty()) {
    const NodeConditionValue value = source.derive();
    const auto on_node = held.conditions.find(source.condition);
    std::optional<NodeConditionValue> known;
    if (on_node != held.conditions.end()) known = ValueOf(on_node->second.condition);
    const ConditionPacing::Verdict verdict =
        pacing_.Due(source.condition, known, held.derived_written_at, value, monotonic_.Now());
    derived_due = verdict == ConditionPacing::Verdict::kWrite;
    if (verdict == ConditionPacing::Verdict::kKept) {
      Log(LogLevel::kInfo, "node condition kept",
          {{"node", node_}, {"condition", source.condition}, {"status", value.status}, {"reason", value.reason},
           {"resource", source.resource.Id()}, {"next", "write it only when its status, reason or message changes"}});
    }
    if (derived_due) {
      derived = OutputCondition{source.condition, value.status, value.reason, value.message};
    } else if (on_node != held.conditions.end()) {
      derived = on_node->second.condition;
    }
  }
  // A resource whose hooks may publish nothing (any more) wants none: what its manager still holds
  // on the Node (its config dropped the prefixes) comes off.
  PublishedOutputs wanted = UnionOf({}, {}, nullptr);
  if (source.published) {
    Result<PublishedOutputs> published = source.published();
    if (!published.ok()) {
      Failed("read the node outputs of " + source.resource.Id(), published.status());
      return false;
    }
    wanted = *published;
  }
  std::map<std::string, OutputCondition> conditions;
  for (const OutputCondition& c : wanted.conditions.value_or(std::vector<OutputCondition>{})) {
    if (c.type != source.condition) conditions.emplace(c.type, c);
  }
  bool ok = true;
  const bool published_changed = conditions != Published(held.conditions, source.condition);
  if (derived_due || published_changed) {
    std::vector<OutputCondition> all;
    if (derived) all.push_back(*derived);
    for (const auto& [type, c] : conditions) all.push_back(c);
    ok = ApplyStatus(source, held, all, derived_due, published_changed) && ok;
  }
  const bool metadata_changed = *wanted.labels != held.labels || *wanted.annotations != held.annotations;
  const bool taints_changed = *wanted.taints != held.taints;
  if (metadata_changed) ok = ApplyMetadata(source, held, wanted) && ok;
  if (taints_changed) ok = PutTaints(source, held, *wanted.taints) && ok;
  if (source.published && !held.looked && !published_changed && !metadata_changed && !taints_changed) {
    Log(LogLevel::kInfo, "node outputs kept",
        {{"node", node_}, {"resource", source.resource.Id()}, {"labels", held.labels.size()},
         {"annotations", held.annotations.size()}, {"conditions", conditions.size()}, {"taints", held.taints.size()},
         {"next", "write them only when a hook publishes other ones"}});
  }
  held.looked = true;
  return ok;
}

bool NodeOutputsWriter::ApplyStatus(const NodeOutputsSource& source, Held& held,
                                    const std::vector<OutputCondition>& conditions, bool derived_due,
                                    bool published_changed) {
  const std::string now = Seconds(wall_.Now());
  std::map<std::string, NodeConditionOnNode> written;
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  StartNode(w, node_);
  w.EndObject();
  w.Key("status");
  w.StartObject();
  w.Key("conditions");
  w.StartArray();
  for (const OutputCondition& c : conditions) {
    const auto known = held.conditions.find(c.type);
    // lastTransitionTime moves only when the status does.
    const std::string since = known != held.conditions.end() && known->second.condition.status == c.status
                                  ? known->second.last_transition_time
                                  : now;
    w.StartObject();
    PutString(w, "type", c.type);
    PutString(w, "status", c.status);
    PutString(w, "reason", c.reason);
    PutString(w, "message", c.message);
    PutString(w, "lastTransitionTime", since);
    w.EndObject();
    written[c.type] = NodeConditionOnNode{c, since};
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  Status applied =
      client_.Apply(ObjectRef{Nodes(), "", node_}, "status", NodeOutputsManager(source.resource), buffer.GetString());
  if (!applied.ok()) {
    Failed("set the conditions of " + source.resource.Id(), applied);
    return false;
  }
  if (derived_due) {
    const OutputCondition& c = written.at(source.condition).condition;
    const auto before = held.conditions.find(source.condition);
    const bool transition = before == held.conditions.end() || before->second.condition.status != c.status;
    held.derived_written_at = monotonic_.Now();
    Log(LogLevel::kInfo, "node condition set",
        {{"node", node_}, {"condition", c.type}, {"status", c.status}, {"reason", c.reason},
         {"resource", source.resource.Id()}, {"transition", transition ? "true" : "false"},
         {"next", "write it again only when its status, reason or message changes"}});
  }
  if (published_changed) {
    const size_t published = written.size() - (written.count(source.condition) > 0 ? 1 : 0);
    Log(LogLevel::kInfo, "node outputs set",
        {{"node", node_}, {"resource", source.resource.Id()}, {"kind", "conditions"}, {"count", published},
         {"next", "write them again only when a hook publishes other ones"}});
  }
  held.conditions = std::move(written);
  return true;
}

bool NodeOutputsWriter::ApplyMetadata(const NodeOutputsSource& source, Held& held, const PublishedOutputs& wanted) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  StartNode(w, node_);
  PutMap(w, "labels", *wanted.labels);
  PutMap(w, "annotations", *wanted.annotations);
  w.EndObject();
  w.EndObject();
  const std::string manager = NodeOutputsManager(source.resource);
  Status applied = client_.Apply(ObjectRef{Nodes(), "", node_}, "", manager, buffer.GetString());
  if (!applied.ok()) {
    Failed("set the labels and annotations of " + source.resource.Id(), applied);
    return false;
  }
  if (applied_metadata_.insert(manager).second && options_.noted) options_.noted(manager, true, true);
  held.labels = *wanted.labels;
  held.annotations = *wanted.annotations;
  Log(LogLevel::kInfo, "node outputs set",
      {{"node", node_}, {"resource", source.resource.Id()}, {"kind", "labels,annotations"},
       {"count", held.labels.size() + held.annotations.size()},
       {"next", "write them again only when a hook publishes other ones"}});
  return true;
}

bool NodeOutputsWriter::PutTaints(const NodeOutputsSource& source, Held& held, const std::vector<OutputTaint>& wanted) {
  const std::string manager = NodeOutputsManager(source.resource);
  std::vector<OutputTaint> before = noted_taints_[manager];
  for (const OutputTaint& t : held.taints) {
    if (std::find(before.begin(), before.end(), t) == before.end()) before.push_back(t);
  }
  // Noted before the write, with what it may still hold: a crash after it still knows them all.
  std::vector<OutputTaint> may_hold = before;
  for (const OutputTaint& t : wanted) {
    if (std::find(may_hold.begin(), may_hold.end(), t) == may_hold.end()) may_hold.push_back(t);
  }
  if (may_hold != noted_taints_[manager]) NoteTaints(manager, may_hold);
  Result<bool> written = WriteTaints(client_, node_, before, wanted);
  if (!written.ok()) {
    Failed("set the taints of " + source.resource.Id(), written.status());
    return false;
  }
  NoteTaints(manager, wanted);
  held.taints = wanted;
  Log(LogLevel::kInfo, "node outputs set",
      {{"node", node_}, {"resource", source.resource.Id()}, {"kind", "taints"}, {"count", wanted.size()},
       {"next", *written ? "write them again only when a hook publishes other ones"
                         : "the Node held them already; write them again only when a hook publishes other ones"}});
  return true;
}

bool NodeOutputsWriter::Retire(const std::string& manager) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  StartNode(w, node_);
  w.EndObject();
  w.EndObject();
  // Applying nothing as that manager removes what it alone owned: the conditions (and labels and
  // annotations) of a resource that left the config, or keeps no outputs any more.
  Status applied = client_.Apply(ObjectRef{Nodes(), "", node_}, "status", manager, buffer.GetString());
  if (applied.ok() && applied_metadata_.count(manager) > 0) {
    applied = client_.Apply(ObjectRef{Nodes(), "", node_}, "", manager, buffer.GetString());
  }
  if (applied.ok() && !noted_taints_[manager].empty()) {
    Result<bool> taken = WriteTaints(client_, node_, noted_taints_[manager], {});
    applied = taken.ok() ? Status::Ok() : taken.status();
    if (applied.ok()) NoteTaints(manager, {});
  }
  if (!applied.ok()) {
    Failed("remove the outputs of " + manager, applied);
    return false;
  }
  applied_metadata_.erase(manager);
  Log(LogLevel::kInfo, "node condition removed",
      {{"node", node_}, {"manager", manager}, {"next", "its resource keeps no outputs any more"}});
  return true;
}

void NodeOutputsWriter::NoteTaints(const std::string& manager, const std::vector<OutputTaint>& taints) {
  noted_taints_[manager] = taints;
  if (options_.note_taints) options_.note_taints(manager, taints);
}

void NodeOutputsWriter::Failed(const std::string& what, const Status& status) {
  if (warned_) return;
  warned_ = true;
  Log(LogLevel::kWarn, "node condition not written",
      {{"node", node_}, {"action", what}, {"error", status.ToString()},
       {"next", "try again in " + SecondsText(options_.round)}});
}

}  // namespace nodehook
