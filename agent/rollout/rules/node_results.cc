#include "agent/rollout/rules/node_results.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "agent/base/json_text.h"

namespace nodehook {
namespace {

// A failed result's message when the budget is short: enough to name the error.
constexpr size_t kShortMessageBytes = 40;

// How much of the messages goes in: done results' (their outcome, for people) go first when the
// budget is short, then failed results' are cut short.
struct Messages {
  size_t done = std::string::npos;
  size_t failed = std::string::npos;
};

std::string EntryText(const NodeResult& r, Messages m) {
  std::string text = std::string(!r.failed ? "done " : r.canary ? "failed-canary " : "failed ") + r.state + " " +
                     std::to_string(r.at_ms);
  const size_t keep = r.failed ? m.failed : m.done;
  if (!r.message.empty() && keep > 0) text += " " + r.message.substr(0, keep);
  return text;
}

std::string Json(const std::map<std::string, NodeResult>& results, Messages m) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  for (const auto& [uid, r] : results) PutString(w, uid.c_str(), EntryText(r, m));
  w.EndObject();
  return buf.GetString();
}

bool ParseEntryText(const std::string& text, NodeResult* r) {
  const size_t kind_end = text.find(' ');
  if (kind_end == std::string::npos) return false;
  const std::string kind = text.substr(0, kind_end);
  if (kind != "done" && kind != "failed" && kind != "failed-canary") return false;
  const size_t state_end = text.find(' ', kind_end + 1);
  if (state_end == std::string::npos) return false;
  r->failed = kind != "done";
  r->canary = kind == "failed-canary";
  r->state = text.substr(kind_end + 1, state_end - kind_end - 1);
  const size_t at_end = text.find(' ', state_end + 1);
  const std::string at = text.substr(state_end + 1, at_end == std::string::npos ? std::string::npos : at_end - state_end - 1);
  char* end = nullptr;
  r->at_ms = std::strtoll(at.c_str(), &end, 10);
  if (at.empty() || *end != '\0' || r->state.empty()) return false;
  r->message = at_end == std::string::npos ? "" : text.substr(at_end + 1);
  return true;
}

int64_t Int64Member(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

}  // namespace

EncodedResults EncodeNodeResults(const std::map<std::string, NodeResult>& results, size_t budget) {
  EncodedResults out;
  out.json = Json(results, Messages{});
  if (out.json.size() <= budget) return out;
  for (const auto& [uid, r] : results) {
    if (!r.failed && !r.message.empty()) ++out.messages_cut;
  }
  out.json = Json(results, Messages{0, std::string::npos});
  if (out.json.size() <= budget) return out;
  const Messages shortest{0, kShortMessageBytes};
  for (const auto& [uid, r] : results) {
    if (r.failed && r.message.size() > kShortMessageBytes) ++out.messages_cut;
  }
  out.json = Json(results, shortest);
  if (out.json.size() <= budget) return out;
  // The oldest done results leave first: the newest are the ones rollouts still wait on.
  std::vector<std::pair<int64_t, std::string>> done;
  size_t size = out.json.size();
  for (const auto& [uid, r] : results) {
    if (!r.failed) done.emplace_back(r.at_ms, uid);
  }
  std::sort(done.begin(), done.end());
  std::map<std::string, NodeResult> kept = results;
  for (const auto& [at, uid] : done) {
    if (size <= budget) break;
    size -= std::min(size, uid.size() + EntryText(kept.at(uid), shortest).size() + 6);  // "":"",
    kept.erase(uid);
    ++out.left_out;
  }
  out.json = Json(kept, shortest);
  return out;
}

Status DecodeNodeResults(const std::string& json, std::map<std::string, NodeResult>* out) {
  if (json.empty()) return Status::Ok();
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return InvalidError(std::string(kNodeResultsAnnotation) + ": not a JSON object");
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    NodeResult r;
    if (it->value.IsString()) {
      if (!ParseEntryText(it->value.GetString(), &r)) {
        return InvalidError(std::string(kNodeResultsAnnotation) + ": the entry of " + it->name.GetString() +
                            " is not \"done|failed|failed-canary <state> <at_ms> [message]\"");
      }
    } else if (it->value.IsObject()) {  // the older form
      r.state = StringMember(it->value, "state");
      r.failed = StringMember(it->value, "result") == "failed";
      r.at_ms = Int64Member(it->value, "at_ms");
      r.message = StringMember(it->value, "message");
    } else {
      return InvalidError(std::string(kNodeResultsAnnotation) + ": the entry of " + it->name.GetString() + " is neither a string nor an object");
    }
    (*out)[it->name.GetString()] = std::move(r);
  }
  return Status::Ok();
}

}  // namespace nodehook
