// What `kubectl nodehook` prints from a Survey: the fleet table (object x node -> state) and
// the failing handlers across the fleet, each followed by the pods that did not answer and the
// nodes whose answer was cut short. Hook messages are escaped for the terminal
// (EscapeForTerminal), as `nodehook state` does. Pure functions; `now_ms` is passed in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/kubectl/fleet_survey.h"

namespace nodehook {

// One row per object any node knows (resource, namespace, name, uid), one column per node.
// A cell: "ok" (handled, nothing pending), handlers as "update:failed(3)" ("(3)": retries),
// "-" when the node knows nothing of the object, "?" when the node did not answer.
std::string FormatFleetTable(const std::vector<NodeAnswer>& answers);

// One row per failing handler (objects_endpoint.h: IsFailing), from answers to ?failing=true:
// NODE OBJECT RESOURCE HANDLER OUTCOME RETRIES NEXT ATTEMPT MESSAGE.
std::string FormatFailingTable(const std::vector<NodeAnswer>& answers, int64_t now_ms);

// "unreachable: node-c (pod nodehook-x): <why>" and "node-a: showing 500 of 1234 objects" lines.
std::string FormatSurveyNotes(const std::vector<NodeAnswer>& answers);

// A fleet table cell for one node's view of one object.
std::string CellText(const ObjectView& object);

}  // namespace nodehook
