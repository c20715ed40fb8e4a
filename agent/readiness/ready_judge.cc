#include "agent/readiness/ready_judge.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <vector>

#include "agent/base/json_text.h"
#include "agent/base/printable.h"

namespace nodehook {
namespace {

std::string Count(size_t done, size_t all) {
  return std::to_string(done) + "/" + std::to_string(all) + (all == 1 ? " node" : " nodes");
}

const rapidjson::Value* Conditions(const rapidjson::Document& doc) {
  if (!doc.IsObject()) return nullptr;
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) return nullptr;
  auto conditions = status->value.FindMember("conditions");
  return conditions == status->value.MemberEnd() ? nullptr : &conditions->value;
}

}  // namespace

ReadyValue JudgeReady(const BoardView& board, const RolloutObject& object, const std::string& unreadable_selector) {
  if (!unreadable_selector.empty()) {
    return {"False", "NodeSelectorUnreadable",
            CutToLimit("no node acts on it: its node selector is unreadable (" + unreadable_selector + ")",
                       kReadyMessageLimit)};
  }
  // By name (the board's order): messages that read the same on every round. No rollout order:
  // it costs a hash per node and object, every round.
  std::vector<std::string> waiting;
  std::string failed_node;
  const NodeResult* failed = nullptr;
  size_t done = 0, handling = 0;
  for (const auto& [node, results] : board.nodes) {
    if (!Targets(board, node, object)) continue;
    ++handling;
    auto r = results.find(object.uid);
    const bool current = r != results.end() && r->second.state == object.state;
    if (current && !r->second.failed) {
      ++done;
    } else if (current && failed == nullptr) {
      failed = &r->second, failed_node = node;
    } else if (!current) {
      waiting.push_back(node);
    }
  }
  if (handling == 0) return {"False", "NoNodes", "no node handles it yet"};
  const std::string count = Count(done, handling);
  if (failed != nullptr) {
    std::string message = count + "; failing on " + failed_node;
    if (!failed->message.empty()) message += ": " + failed->message;
    return {"False", "Failing", CutToLimit(message, kReadyMessageLimit)};
  }
  if (!waiting.empty()) return {"False", "InProgress", count + "; waiting for " + FirstNames(waiting, 3)};
  return {"True", "AllNodesHandled", count};
}

bool ReadyNeedsWrite(const std::optional<KeptCondition>& kept, const ReadyValue& wanted, int64_t generation) {
  return !kept || kept->status != wanted.status || kept->reason != wanted.reason ||
         kept->observed_generation != generation;
}

ObjectReadiness ReadReadiness(std::string_view object_json, const std::string& type) {
  ObjectReadiness out;
  rapidjson::Document doc;
  doc.Parse(object_json.data(), object_json.size());
  if (doc.HasParseError()) return out;
  const rapidjson::Value* meta = MemberOf(doc, "metadata");
  const rapidjson::Value* generation = meta ? MemberOf(*meta, "generation") : nullptr;
  if (generation && generation->IsInt64()) out.generation = generation->GetInt64();
  const rapidjson::Value* conditions = Conditions(doc);
  if (conditions == nullptr || !conditions->IsArray()) return out;
  for (const auto& c : conditions->GetArray()) {
    if (!c.IsObject() || StringMember(c, "type") != type) continue;
    KeptCondition kept{StringMember(c, "status"), StringMember(c, "reason"), StringMember(c, "message"), -1};
    const rapidjson::Value* observed = MemberOf(c, "observedGeneration");
    if (observed && observed->IsInt64()) kept.observed_generation = observed->GetInt64();
    out.kept = kept;
    break;
  }
  return out;
}

Result<std::string> ReadyConditionPatch(std::string_view object_json, const std::string& type,
                                        const ReadyValue& wanted, int64_t generation, const std::string& now,
                                        const std::string& resource_version) {
  rapidjson::Document doc;
  doc.Parse(object_json.data(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError("the object is not a JSON object");
  const rapidjson::Value* conditions = Conditions(doc);
  if (conditions != nullptr && !conditions->IsArray() && !conditions->IsNull()) {
    return InvalidError("status.conditions is not a list");
  }
  rapidjson::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  auto str = [&](const std::string& s) { return rapidjson::Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a); };
  auto ours = [&](const std::string& transition) {
    rapidjson::Value c(rapidjson::kObjectType);
    c.AddMember("type", str(type), a);
    c.AddMember("status", str(wanted.status), a);
    c.AddMember("observedGeneration", rapidjson::Value(static_cast<int64_t>(generation)), a);
    c.AddMember("lastTransitionTime", str(transition), a);
    c.AddMember("reason", str(wanted.reason), a);
    c.AddMember("message", str(wanted.message), a);
    return c;
  };
  rapidjson::Value list(rapidjson::kArrayType);
  bool placed = false;
  if (conditions != nullptr && conditions->IsArray()) {
    for (const auto& c : conditions->GetArray()) {
      if (!c.IsObject()) return InvalidError("status.conditions holds an entry that is not an object");
      if (StringMember(c, "type") != type || placed) {
        list.PushBack(rapidjson::Value(c, a), a);
        continue;
      }
      const std::string kept = StringMember(c, "lastTransitionTime");
      list.PushBack(ours(StringMember(c, "status") == wanted.status && !kept.empty() ? kept : now), a);
      placed = true;
    }
  }
  if (!placed) list.PushBack(ours(now), a);
  rapidjson::Value metadata(rapidjson::kObjectType);
  metadata.AddMember("resourceVersion", str(resource_version), a);
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("conditions", list, a);
  patch.AddMember("metadata", metadata, a);
  patch.AddMember("status", status, a);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  patch.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace nodehook
