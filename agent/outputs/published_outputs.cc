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

// Reads the value of `kind`'s key into its field: one overload per field type.
Status ReadKind(const rapidjson::Value& v, OutputKind of, std::map<std::string, std::string>* out) {
  const std::string kind = OutputKindName(of);
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
    if (of == OutputKind::kLabels && !value.empty() && !IsQualifiedNamePart(value)) {
      return InvalidError(Path(kind, key) + ": expected a label value (up to 63 letters, digits, '-', '_', '.', "
                                            "alphanumeric at both ends), got " + Quoted(value));
    }
    if (of == OutputKind::kAnnotations && value.size() > kMaxOutputAnnotationBytes) {
      return InvalidError(Path(kind, key) + ": at most " + std::to_string(kMaxOutputAnnotationBytes) + " bytes, got " +
                          std::to_string(value.size()));
    }
    (*out)[key] = value;
  }
  return Status::Ok();
}

Status ReadKind(const rapidjson::Value& v, OutputKind of, std::vector<OutputCondition>* out) {
  const std::string kind = OutputKindName(of);
  if (!v.IsArray()) return InvalidError(kind + ": expected an array of {type, status, reason, message}");
  if (v.Size() > kMaxOutputsPerKind) {
    return InvalidError(kind + ": at most " + std::to_string(kMaxOutputsPerKind) + " entries");
  }
  std::set<std::string> types;
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const std::string path = Path(kind, i);
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

Status ReadKind(const rapidjson::Value& v, OutputKind of, std::vector<OutputTaint>* out) {
  const std::string kind = OutputKindName(of);
  if (!v.IsArray()) return InvalidError(kind + ": expected an array of {key, value, effect}");
  if (v.Size() > kMaxOutputsPerKind) return InvalidError(kind + ": at most " + std::to_string(kMaxOutputsPerKind) + " entries");
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const std::string path = Path(kind, i);
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

// One entry of a kind: its key (checked against the prefixes) and the field that holds it; its
// slot (a Node holds one entry per slot), how to find an entry in that slot, and its JSON.
using MapEntry = std::pair<const std::string, std::string>;
const std::string& KeyOf(const MapEntry& e) { return e.first; }
const std::string& KeyOf(const OutputCondition& c) { return c.type; }
const std::string& KeyOf(const OutputTaint& t) { return t.key; }
const char* KeyField(const OutputCondition&) { return "type"; }
const char* KeyField(const OutputTaint&) { return "key"; }

std::string SlotOf(const MapEntry& e) { return e.first; }
std::string SlotOf(const OutputCondition& c) { return c.type; }
std::string SlotOf(const OutputTaint& t) { return t.key + ":" + t.effect; }

auto FindSlot(const std::map<std::string, std::string>& held, const MapEntry& e) { return held.find(e.first); }
auto FindSlot(const std::vector<OutputCondition>& held, const OutputCondition& c) {
  return std::find_if(held.begin(), held.end(), [&c](const OutputCondition& h) { return h.type == c.type; });
}
auto FindSlot(const std::vector<OutputTaint>& held, const OutputTaint& t) {
  return std::find_if(held.begin(), held.end(), [&t](const OutputTaint& h) { return h.SameSlot(t); });
}

void PutEntries(JsonWriter& w, const std::map<std::string, std::string>& entries) {
  const std::string json = StringMapJson(entries);
  w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
}
void PutEntries(JsonWriter& w, const std::vector<OutputCondition>& conditions) {
  w.StartArray();
  for (const OutputCondition& c : conditions) {
    w.StartObject();
    PutString(w, "type", c.type);
    PutString(w, "status", c.status);
    if (!c.reason.empty()) PutString(w, "reason", c.reason);
    if (!c.message.empty()) PutString(w, "message", c.message);
    w.EndObject();
  }
  w.EndArray();
}
void PutEntries(JsonWriter& w, const std::vector<OutputTaint>& taints) {
  w.StartArray();
  for (const OutputTaint& t : taints) {
    const std::string json = TaintJson(t);
    w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
  }
  w.EndArray();
}

using Keys = std::vector<std::pair<std::string, std::string>>;  // (where it is, the key)

void AddKeys(const std::string& kind, const std::map<std::string, std::string>& entries, Keys* keys) {
  for (const auto& [k, v] : entries) keys->emplace_back(Path(kind, k), k);
}
template <typename Entry>
void AddKeys(const std::string& kind, const std::vector<Entry>& list, Keys* keys) {
  for (size_t i = 0; i < list.size(); ++i) keys->emplace_back(Path(kind, i) + "." + KeyField(list[i]), KeyOf(list[i]));
}

// Every key of `outputs` with where it is, in the order they are checked.
Keys KeysOf(const PublishedOutputs& outputs) {
  Keys keys;
  ForEachKind(outputs, [&keys](OutputKind kind, const auto& given) {
    if (given) AddKeys(OutputKindName(kind), *given, &keys);
  });
  return keys;
}

}  // namespace

bool PublishedOutputs::Empty() const {
  bool empty = true;
  ForEachKind(*this, [&empty](OutputKind, const auto& given) { empty = empty && (!given || given->empty()); });
  return empty;
}

Result<PublishedOutputs> ParsePublishedOutputs(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidError("expected an object with " + OutputKindNames());
  }
  PublishedOutputs out;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string name(it->name.GetString(), it->name.GetStringLength());
    const std::optional<OutputKind> kind = OutputKindNamed(name);
    if (!kind) return InvalidError(Abbreviate(name, 64) + ": unknown key (expected " + OutputKindNames() + ")");
    Status read = Status::Ok();
    ForEachKind(out, [&](OutputKind each, auto& target) {
      if (each != *kind) return;
      target.emplace();  // a key given twice: the last one counts
      read = ReadKind(it->value, each, &*target);
    });
    if (!read.ok()) return read;
  }
  return out;
}

Status CheckPrefixes(const PublishedOutputs& outputs, const std::vector<std::string>& prefixes) {
  for (const auto& [path, key] : KeysOf(outputs)) {
    if (Under(key, prefixes)) continue;
    std::string allowed;
    for (const std::string& p : prefixes) allowed += (allowed.empty() ? "" : ", ") + Quoted(p);
    return InvalidError(path + ": " + Quoted(key) + " is not under this resource's node_outputs.prefixes" +
                        (prefixes.empty() ? " (it declares none)" : " (" + allowed + ")"));
  }
  return Status::Ok();
}

PublishedOutputs MergeOutputs(PublishedOutputs earlier, const PublishedOutputs& later) {
  ForEachKind(earlier, later, [](OutputKind, auto& to, const auto& from) {
    if (from) to = from;
  });
  return earlier;
}

std::string OutputsJson(const PublishedOutputs& outputs) {
  if (outputs.Empty()) return "";
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  ForEachKind(outputs, [&w](OutputKind kind, const auto& given) {
    if (!given || given->empty()) return;
    w.Key(OutputKindName(kind));
    PutEntries(w, *given);
  });
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
  PublishedOutputs all;
  ForEachKind(all, [](OutputKind, auto& field) { field.emplace(); });
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
    ForEachKind(all, o.outputs, [&](OutputKind kind, auto& to, const auto& from) {
      if (!from) return;
      for (const auto& entry : *from) {
        if (!Under(KeyOf(entry), prefixes)) continue;
        const auto held = FindSlot(*to, entry);
        const std::string slot = std::string(OutputEntryName(kind)) + " " + SlotOf(entry);
        if (claim(slot, o.object, held != to->end() && *held == entry)) to->insert(to->end(), entry);
      }
    });
  }
  return all;
}

}  // namespace nodehook
