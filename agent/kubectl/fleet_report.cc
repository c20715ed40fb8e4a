#include "agent/kubectl/fleet_report.h"

#include <map>
#include <tuple>

#include "agent/base/printable.h"
#include "agent/base/text_table.h"

namespace nodehook {
namespace {

constexpr size_t kMessageWidth = 80;

using ObjectKey = std::tuple<std::string, std::string, std::string, std::string>;  // resource, ns, name, uid

ObjectKey KeyOf(const ObjectView& o) { return {o.resource, o.namespace_name, o.name, o.uid}; }

}  // namespace

std::string CellText(const ObjectView& o) {
  if (o.handlers.empty()) return o.handled_at_ms ? "ok" : "-";
  std::string cell;
  for (const HandlerRecord& h : o.handlers) {
    if (!cell.empty()) cell += ",";
    cell += h.handler + ":" + h.last_outcome;
    if (h.retries > 0) cell += "(" + std::to_string(h.retries) + ")";
  }
  return cell;
}

std::string FormatFleetTable(const std::vector<NodeAnswer>& answers) {
  std::vector<std::string> header = {"OBJECT", "RESOURCE"};
  std::map<ObjectKey, std::vector<std::string>> rows;  // cells by node column
  for (const NodeAnswer& a : answers) header.push_back(a.NodeName());
  for (size_t n = 0; n < answers.size(); ++n) {
    if (!answers[n].error.ok()) continue;
    for (const ObjectView& o : answers[n].objects.objects) {
      auto& cells = rows[KeyOf(o)];
      if (cells.empty()) cells.assign(answers.size(), "-");
      cells[n] = CellText(o);
    }
  }
  std::vector<std::vector<std::string>> table = {header};
  for (auto& [key, cells] : rows) {
    const auto& [resource, ns, name, uid] = key;
    std::vector<std::string> row = {ns.empty() ? name : ns + "/" + name, resource};
    for (size_t n = 0; n < answers.size(); ++n) row.push_back(answers[n].error.ok() ? cells[n] : "?");
    table.push_back(std::move(row));
  }
  std::string out = EscapeForTerminal(FormatTextTable(table));
  if (rows.empty()) out += "(no objects)\n";
  return out + FormatSurveyNotes(answers);
}

std::string FormatFailingTable(const std::vector<NodeAnswer>& answers, int64_t now_ms) {
  std::vector<std::vector<std::string>> table = {
      {"NODE", "OBJECT", "RESOURCE", "HANDLER", "OUTCOME", "RETRIES", "NEXT ATTEMPT", "MESSAGE"}};
  for (const NodeAnswer& a : answers) {
    if (!a.error.ok()) continue;
    for (const ObjectView& o : a.objects.objects) {
      for (const HandlerRecord& h : o.handlers) {
        // A permanent failure waits for a change of the object, not for a time.
        std::string next = ParseStoredOutcome(h.last_outcome) == StoredOutcome::kPermanentFailure ? "-" : RelativeTime(h.next_attempt_ms, now_ms);
        std::string message = a.objects.messages_hidden ? "(hidden by the agent)" : OneLine(h.last_message, kMessageWidth);
        table.push_back({a.NodeName(), o.Key(), o.resource, h.handler, h.last_outcome, std::to_string(h.retries), next,
                         message});
      }
    }
  }
  std::string out = EscapeForTerminal(FormatTextTable(table));
  if (table.size() == 1) out += "(no failing handlers)\n";
  return out + FormatSurveyNotes(answers);
}

std::string FormatSurveyNotes(const std::vector<NodeAnswer>& answers) {
  std::string out;
  // Each agent says whether admission rules confine it to its node (docs/security.md).
  std::string bound;
  for (const NodeAnswer& a : answers) {
    if (!a.error.ok() || a.objects.node_bound.empty()) continue;
    bound += (bound.empty() ? "" : ", ") + a.NodeName() + " " + a.objects.node_bound;
  }
  if (!bound.empty()) out += "confined to its node (node-bound rules): " + bound + "\n";
  for (const NodeAnswer& a : answers) {
    if (!a.error.ok()) {
      out += "unreachable: " + a.NodeName() + " (pod " + a.pod.name + "): " + OneLine(a.error.message(), 300) + "\n";
    } else if (a.objects.truncated) {
      out += a.NodeName() + ": showing " + std::to_string(a.objects.objects.size()) + " of " +
             std::to_string(a.objects.total) + " objects; raise --limit to see more\n";
    }
  }
  return EscapeForTerminal(out);
}

}  // namespace nodehook
