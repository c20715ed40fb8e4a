#include "agent/kubectl/cordon_release.h"

#include <rapidjson/document.h>

#include <vector>

#include "agent/base/json_text.h"
#include "agent/base/printable.h"
#include "agent/config/config.h"
#include "agent/nodework/kube_node_api.h"
#include "agent/nodework/node_cordon.h"

namespace nodehook {
namespace {

// What a mark's value says (NodeSteps::MarkValue); a value that is not ours to read is shown as
// is. Escaped: a failure's why may carry a hook's words, printed to a terminal.
struct MarkInfo {
  std::string what;    // "shop/w1, state 3f2a..." or the raw value
  std::string failed;  // why the node failed the state; "" while the work was going on
};

MarkInfo ReadMark(const std::string& value) {
  rapidjson::Document doc;
  doc.Parse(value.c_str(), value.size());
  if (doc.HasParseError() || !doc.IsObject()) return MarkInfo{EscapeForTerminal(value), ""};
  return MarkInfo{EscapeForTerminal(StringMember(doc, "object") + ", state " + StringMember(doc, "state")),
                  EscapeForTerminal(StringMember(doc, "failed"))};
}

// The rollout id in a mark's key: kCordonMarkPrefix, the id, "." and the object's hash.
std::string RolloutOfMark(const std::string& key) {
  const std::string rest = key.substr(std::string(kCordonMarkPrefix).size());
  return rest.substr(0, rest.find('.'));
}

}  // namespace

CordonReleaseTotals ReleaseCordons(KubeClient& client, const std::set<std::string>& rollouts, bool failed_too,
                                   std::ostream& out, std::ostream& err) {
  CordonReleaseTotals totals;
  Result<ObjectList> nodes = ListAll(client, ResourceRef{"", "v1", "nodes", "", ""});
  if (!nodes.ok()) {
    err << "cannot list nodes (to give back the cordons of node steps): " << nodes.status().message() << "\n";
    ++totals.failures;
    return totals;
  }
  for (const KubeObject& item : nodes->items) {
    Result<NodeState> node = ParseNodeState(item.json);
    if (!node.ok()) continue;
    const std::string& name = item.meta.name;
    for (const auto& [key, value] : node->marks) {
      if (rollouts.count(RolloutOfMark(key)) == 0) continue;
      ++totals.marks;
      const MarkInfo mark = ReadMark(value);
      if (!mark.failed.empty() && !failed_too) {
        ++totals.kept_failed;
        out << name << ": kept cordoned for a person to look at (" << mark.what << "; failed: " << mark.failed
            << "); --uncordon-failed gives it back\n";
        continue;
      }
      KubeNodeApi api(client, name);
      Result<CordonGiven> given = GiveCordonBack(api, key);
      if (!given.ok()) {
        err << name << ": cannot give back the cordon " << key << ": " << given.status().message() << "\n";
        ++totals.failures;
        continue;
      }
      if (*given == CordonGiven::kNotOurs) continue;  // taken off meanwhile: someone else's now
      ++totals.unmarked;
      if (*given == CordonGiven::kUncordoned) ++totals.uncordoned;
      out << name << ": "
          << (*given == CordonGiven::kUncordoned   ? "uncordoned"
              : *given == CordonGiven::kOthersHold ? "mark removed; another nodehook mark keeps it cordoned"
                                                   : "mark removed; someone had uncordoned it")
          << " (" << mark.what << ")\n";
    }
  }
  return totals;
}

}  // namespace nodehook
