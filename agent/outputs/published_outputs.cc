#include "agent/outputs/published_outputs.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "agent/base/json_text.h"
#include "agent/base/kube_names.h"
#include "agent/base/printable.h"

namespace nodehook {
namespace {

std::string Quoted(const std::string& text) { return "\"" + Abbreviate(text, 80) + "\""; }

std::string Path(const std::string& kind, const std::string& key) { return kind + "[" + Quoted(key) + "]"; }

std::string Path(const std::string& kind, size_t index) { return kind + "[" + std::to_string(index) + "]"; }

// A condition's reason: CamelCase, as metav1.Condition's validation has it.
bool IsReason(const std::string& reason) {
  if (reason.empty() || reason.size() > 1024 || !std::isalpha(static_cast<unsigned char>(reason[0]))) return false;
  const char last = reason.back();
  return (std::isalnum(static_cast<unsigned char>(last)) || last == '_') &&
         std::all_of(reason.begin(), reason.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ',' || c == ':';
         });
}

Result<std::string> StringField(const rapidjson::Value& item, const char* key, const std::string& path, bool required) {
  const auto it = item.FindMember(key);
  if (it == item.MemberEnd()) {
    if (required) return InvalidError(path + ": expected \"" + key + "\"");
    return std::string();
  }
  if (!it->value.IsString()) return InvalidError(path + "." + key + ": expected a string");
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

Status ReadMap(const rapidjson::Value& v, const std::string& kind, std::map<std::string, std::string>* out) {
  if (!v.IsObject()) return InvalidError(kind + ": expected an object of keys and string values");
  if (v.MemberCount() > kMaxOutputsPerKind) {
    return InvalidError(kind + ": at most " + std::to_string(kMaxOutputsPerKind) + " entries, got " +
                        std::to_string(v.MemberCount()));
  }
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    const std::string key(it->name.GetString(), it->name.GetStringLength());
    if (!IsLabelKey(key)) {
      return InvalidError(Path(kind, key) + ": expected a key like \"example.com/name\" (a DNS subdomain, \"/\", "
                                            "and up to 63 letters, digits, '-', '_', '.')");
    }
    if (!it->value.IsString()) return InvalidError(Path(kind, key) + ": expected a string value");
    const std::string value(it->value.GetString(), it->value.GetStringLength());
    if (kind == "labels" && !value.empty() && !IsQualifiedNamePart(value)) {
      return InvalidError(Path(kind, key) + ": expected a label value (up to 63 letters, digits, '-', '_', '.', "
                                            "alphanumeric at both ends), got " + Quoted(value));
    }
    if (kind == "annotations" && value.size() > kMaxOutputAnnotationBytes) {
      return InvalidError(Path(kind, key) + ": at most " + std::to_string(kMaxOutputAnnotationBytes) + " bytes, got " +
                          std::to_string(value.size()));
    }
    (*out)[key] = value;
  }
  return Status::Ok();
}

Status ReadConditions(const rapidjson::Value& v, std::vector<OutputCondition>* out) {
  if (!v.IsArray()) return InvalidError("conditions: expected an array of {type, status, reason, message}");
  if (v.Size() > kMaxOutputsPerKind) {
    return InvalidError("conditions: at most " + std::to_string(kMaxOutputsPerKind) + " entries");
  }
  std::set<std::string> types;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const std::string path = Path("conditions", i);
    if (!v[i].IsObject()) return InvalidError(path + ": expected an object {type, status, reason, message}");
    for (auto it = v[i].MemberBegin(); it != v[i].MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (key != "type" && key != "status" && key != "reason" && key != "message") {
        return InvalidError(path + "." + Abbreviate(key, 64) + ": unknown key (expected type, status, reason, message)");
      }
    }
    OutputCondition c;
    for (auto [key, field, required] : {std::tuple{"type", &c.type, true}, std::tuple{"status", &c.status, true},
                                        std::tuple{"reason", &c.reason, false},
                                        std::tuple{"message", &c.message, false}}) {
      Result<std::string> text = StringField(v[i], key, path, required);
      if (!text.ok()) return text.status();
      *field = *text;
    }
    if (!IsLabelKey(c.type)) return InvalidError(path + ".type: expected a type like \"example.com/KernelUpdated\"");
    if (!types.insert(c.type).second) return InvalidError(path + ".type: " + Quoted(c.type) + " is given twice");
    if (c.status != "True" && c.status != "False" && c.status != "Unknown") {
      return InvalidError(path + ".status: expected True, False or Unknown, got " + Quoted(c.status));
    }
    if (!c.reason.empty() && !IsReason(c.reason)) {
      return InvalidError(path + ".reason: expected CamelCase (letters, digits, '_', ',', ':', starting with a "
                                 "letter), got " + Quoted(c.reason));
    }
    c.message = CutToLimit(c.message, 1024);
    out->push_back(std::move(c));
  }
  return Status::Ok();
}

Status ReadTaints(const rapidjson::Value& v, std::vector<OutputTaint>* out) {
  if (!v.IsArray()) return InvalidError("taints: expected an array of {key, value, effect}");
  if (v.Size() > kMaxOutputsPerKind) return InvalidError("taints: at most " + std::to_string(kMaxOutputsPerKind) + " entries");
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const std::string path = Path("taints", i);
    if (!v[i].IsObject()) return InvalidError(path + ": expected an object {key, value, effect}");
    for (auto it = v[i].MemberBegin(); it != v[i].MemberEnd(); ++it) {
      const std::string key(it->name.GetString(), it->name.GetStringLength());
      if (key != "key" && key != "value" && key != "effect") {
        return InvalidError(path + "." + Abbreviate(key, 64) + ": unknown key (expected key, value, effect)");
      }
    }
    OutputTaint t;
    for (auto [key, field, required] : {std::tuple{"key", &t.key, true}, std::tuple{"value", &t.value, false},
                                        std::tuple{"effect", &t.effect, true}}) {
      Result<std::string> text = StringField(v[i], key, path, required);
      if (!text.ok()) return text.status();
      *field = *text;
    }
    if (!IsLabelKey(t.key)) return InvalidError(path + ".key: expected a key like \"example.com/name\"");
    if (!t.value.empty() && !IsQualifiedNamePart(t.value)) {
      return InvalidError(path + ".value: expected a label value (up to 63 letters, digits, '-', '_', '.'), got " +
                          Quoted(t.value));
    }
    if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
      return InvalidError(path + ".effect: expected NoSchedule, PreferNoSchedule or NoExecute, got " + Quoted(t.effect));
    }
    for (const OutputTaint& earlier : *out) {
      if (earlier.SameSlot(t)) return InvalidError(path + ": key " + Quoted(t.key) + " with effect " + t.effect + " is given twice");
    }
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

bool Under(const std::string& key, const std::vector<std::string>& prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&key](const std::string& p) { return key.size() > p.size() && key.compare(0, p.size(), p) == 0; });
}

// Every key of `outputs` with where it is, in the order they are checked.
std::vector<std::pair<std::string, std::string>> Keys(const PublishedOutputs& outputs) {
  std::vector<std::pair<std::string, std::string>> keys;
  if (outputs.labels) for (const auto& [k, v] : *outputs.labels) keys.emplace_back(Path("labels", k), k);
  if (outputs.annotations) for (const auto& [k, v] : *outputs.annotations) keys.emplace_back(Path("annotations", k), k);
  if (outputs.conditions) {
    for (size_t i = 0; i < outputs.conditions->size(); ++i) {
      keys.emplace_back(Path("conditions", i) + ".type", (*outputs.conditions)[i].type);
    }
  }
  if (outputs.taints) {
    for (size_t i = 0; i < outputs.taints->size(); ++i) keys.emplace_back(Path("taints", i) + ".key", (*outputs.taints)[i].key);
  }
  return keys;
}

void PutRaw(JsonWriter& w, const char* key, const std::string& json, rapidjson::Type type) {
  w.Key(key);
  w.RawValue(json.c_str(), json.size(), type);
}

}  // namespace

bool PublishedOutputs::Empty() const {
  return (!labels || labels->empty()) && (!annotations || annotations->empty()) && (!conditions || conditions->empty()) &&
         (!taints || taints->empty());
}

Result<PublishedOutputs> ParsePublishedOutputs(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidError("expected an object with labels, annotations, conditions, taints");
  }
  PublishedOutputs out;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string kind(it->name.GetString(), it->name.GetStringLength());
    Status read = Status::Ok();
    if (kind == "labels" || kind == "annotations") {
      auto& target = kind == "labels" ? out.labels : out.annotations;
      target.emplace();
      read = ReadMap(it->value, kind, &*target);
    } else if (kind == "conditions") {
      out.conditions.emplace();
      read = ReadConditions(it->value, &*out.conditions);
    } else if (kind == "taints") {
      out.taints.emplace();
      read = ReadTaints(it->value, &*out.taints);
    } else {
      read = InvalidError(Abbreviate(kind, 64) + ": unknown key (expected labels, annotations, conditions, taints)");
    }
    if (!read.ok()) return read;
  }
  return out;
}

Status CheckPrefixes(const PublishedOutputs& outputs, const std::vector<std::string>& prefixes) {
  for (const auto& [path, key] : Keys(outputs)) {
    if (Under(key, prefixes)) continue;
    std::string allowed;
    for (const std::string& p : prefixes) allowed += (allowed.empty() ? "" : ", ") + Quoted(p);
    return InvalidError(path + ": " + Quoted(key) + " is not under this resource's node_outputs.prefixes" +
                        (prefixes.empty() ? " (it declares none)" : " (" + allowed + ")"));
  }
  return Status::Ok();
}

PublishedOutputs MergeOutputs(PublishedOutputs earlier, const PublishedOutputs& later) {
  if (later.labels) earlier.labels = later.labels;
  if (later.annotations) earlier.annotations = later.annotations;
  if (later.conditions) earlier.conditions = later.conditions;
  if (later.taints) earlier.taints = later.taints;
  return earlier;
}

std::string OutputsJson(const PublishedOutputs& outputs) {
  if (outputs.Empty()) return "";
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  if (outputs.labels && !outputs.labels->empty()) {
    PutRaw(w, "labels", StringMapJson(*outputs.labels), rapidjson::kObjectType);
  }
  if (outputs.annotations && !outputs.annotations->empty()) {
    PutRaw(w, "annotations", StringMapJson(*outputs.annotations), rapidjson::kObjectType);
  }
  if (outputs.conditions && !outputs.conditions->empty()) {
    w.Key("conditions");
    w.StartArray();
    for (const OutputCondition& c : *outputs.conditions) {
      w.StartObject();
      PutString(w, "type", c.type);
      PutString(w, "status", c.status);
      if (!c.reason.empty()) PutString(w, "reason", c.reason);
      if (!c.message.empty()) PutString(w, "message", c.message);
      w.EndObject();
    }
    w.EndArray();
  }
  if (outputs.taints && !outputs.taints->empty()) {
    w.Key("taints");
    w.StartArray();
    for (const OutputTaint& t : *outputs.taints) {
      const std::string json = TaintJson(t);
      w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
    }
    w.EndArray();
  }
  w.EndObject();
  return buffer.GetString();
}

std::string StringMapJson(const std::map<std::string, std::string>& entries) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  for (const auto& [k, v] : entries) PutString(w, k.c_str(), v);
  w.EndObject();
  return buffer.GetString();
}

std::string TaintJson(const OutputTaint& taint) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  PutString(w, "key", taint.key);
  if (!taint.value.empty()) PutString(w, "value", taint.value);
  PutString(w, "effect", taint.effect);
  w.EndObject();
  return buffer.GetString();
}

PublishedOutputs UnionOf(const std::vector<ObjectOutputs>& objects, const std::vector<std::string>& prefixes,
                         std::vector<std::string>* conflicts) {
  PublishedOutputs all{std::map<std::string, std::string>{}, std::map<std::string, std::string>{},
                       std::vector<OutputCondition>{}, std::vector<OutputTaint>{}};
  std::map<std::string, std::string> owner;  // "<kind> <key>" -> the object that set it
  // Takes `key` for `object` unless an earlier object holds it; says so when they differ.
  auto claim = [&](const std::string& slot, const std::string& object, bool same_value) {
    auto [it, fresh] = owner.emplace(slot, object);
    if (!fresh && !same_value && conflicts != nullptr) {
      conflicts->push_back(slot + ": " + object + " differs from " + it->second + ", which is kept");
    }
    return fresh;
  };
  for (const ObjectOutputs& o : objects) {
    for (auto [kind, from, to] : {std::tuple{"label", &o.outputs.labels, &*all.labels},
                                  std::tuple{"annotation", &o.outputs.annotations, &*all.annotations}}) {
      if (!*from) continue;
      for (const auto& [k, v] : **from) {
        if (!Under(k, prefixes)) continue;
        auto held = to->find(k);
        if (claim(std::string(kind) + " " + k, o.object, held != to->end() && held->second == v)) (*to)[k] = v;
      }
    }
    if (o.outputs.conditions) {
      for (const OutputCondition& c : *o.outputs.conditions) {
        if (!Under(c.type, prefixes)) continue;
        auto held = std::find_if(all.conditions->begin(), all.conditions->end(),
                                 [&c](const OutputCondition& h) { return h.type == c.type; });
        if (claim("condition " + c.type, o.object, held != all.conditions->end() && *held == c)) {
          all.conditions->push_back(c);
        }
      }
    }
    if (o.outputs.taints) {
      for (const OutputTaint& t : *o.outputs.taints) {
        if (!Under(t.key, prefixes)) continue;
        auto held = std::find_if(all.taints->begin(), all.taints->end(),
                                 [&t](const OutputTaint& h) { return h.SameSlot(t); });
        if (claim("taint " + t.key + ":" + t.effect, o.object, held != all.taints->end() && *held == t)) {
          all.taints->push_back(t);
        }
      }
    }
  }
  return all;
}

}  // namespace nodehook
