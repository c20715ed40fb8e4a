#include "agent/outputs/node_taints.h"

#include <algorithm>

#include "agent/base/json_text.h"
#include "agent/outputs/node_view.h"

namespace nodehook {
namespace {

bool InSlots(const OutputTaint& t, const std::vector<OutputTaint>& slots) {
  return std::any_of(slots.begin(), slots.end(), [&t](const OutputTaint& s) { return s.SameSlot(t); });
}

}  // namespace

std::string TaintsWanted(const std::vector<std::string>& taints_json, const std::vector<OutputTaint>& taints,
                         const std::vector<OutputTaint>& before, const std::vector<OutputTaint>& ours) {
  std::string list = "[";
  auto add = [&list](const std::string& item) { list += (list.size() > 1 ? "," : "") + item; };
  for (size_t i = 0; i < taints.size() && i < taints_json.size(); ++i) {
    if (InSlots(taints[i], before) || InSlots(taints[i], ours)) continue;
    add(taints_json[i]);
  }
  for (const OutputTaint& t : ours) {
    // One already there as wanted keeps its JSON (timeAdded), so an unchanged list compares equal.
    auto held = std::find(taints.begin(), taints.end(), t);
    add(held != taints.end() && static_cast<size_t>(held - taints.begin()) < taints_json.size()
            ? taints_json[held - taints.begin()]
            : TaintJson(t));
  }
  return list + "]";
}

Result<bool> WriteTaints(KubeClient& client, const std::string& node, const std::vector<OutputTaint>& before,
                         const std::vector<OutputTaint>& ours) {
  static const ResourceRef nodes{"", "v1", "nodes", "", ""};
  Result<KubeObject> read = client.Get(ObjectRef{nodes, "", node});
  if (!read.ok()) return read.status();
  Result<NodeView> view = ReadNodeView(read->json);
  if (!view.ok()) return view.status();
  const std::string wanted = TaintsWanted(view->taints_json, view->taints, before, ours);
  std::string current = "[";
  for (const std::string& t : view->taints_json) current += (current.size() > 1 ? "," : "") + t;
  current += "]";
  if (wanted == current) return false;
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  PutString(w, "resourceVersion", view->resource_version);
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("taints");
  w.RawValue(wanted.c_str(), wanted.size(), rapidjson::kArrayType);
  w.EndObject();
  w.EndObject();
  Status patched = client.Patch(ObjectRef{nodes, "", node}, PatchType::kMerge, buffer.GetString());
  if (!patched.ok()) return patched;
  return true;
}

}  // namespace nodehook
