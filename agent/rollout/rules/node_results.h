// A node's results on its node Lease (annotation nodehook.io/rollout-results): what it last
// finished or failed per object of the resource, in a compact form and within a byte budget, so
// the Lease stays far below the API server's 256 KiB limit on annotations however many objects
// the node handles.
//   {"<object uid>": "done <state> <at_ms>", "<uid>": "failed <state> <at_ms> <message>", ...}
// ("failed-canary" for a failure of a node that was a canary of the state).
// About 75 bytes per object without its message: the budget holds about 2,700. Over it, done
// results' messages (their outcome, for people) are left out first, then failed results'
// messages are cut short, then the oldest done results are left out (the caller logs it); failed
// results always stay, since halts are judged by them.
// The older form ({"<uid>": {"state", "result", "at_ms", "message"}}) is still read.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "agent/base/status.h"
#include "agent/rollout/rules/rollout_leases.h"  // NodeResult

namespace nodehook {

inline constexpr const char* kNodeResultsAnnotation = "nodehook.io/rollout-results";
inline constexpr size_t kNodeResultsBudgetBytes = 200 * 1024;

struct EncodedResults {
  std::string json;
  size_t left_out = 0;       // done results not written, oldest first
  size_t messages_cut = 0;   // results whose message was left out or cut to fit
};

EncodedResults EncodeNodeResults(const std::map<std::string, NodeResult>& results,
                                 size_t budget = kNodeResultsBudgetBytes);

// Into `out`, by uid. kInvalid: not a JSON object, or an entry neither form can read.
Status DecodeNodeResults(const std::string& json, std::map<std::string, NodeResult>* out);

}  // namespace nodehook
