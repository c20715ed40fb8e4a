// HookCall: turns "run the <reason> hook for this object" into an ActionRequest, following the
// hook protocol documented in the README: the object's JSON on stdin, NODEHOOK_* variables, and
// files holding the old object, the new object and the diff. Stateless; thread-safe.
#pragma once

#include <string>

#include "agent/process/action_runner.h"
#include "agent/process/scratch_pool.h"
#include "agent/config/config.h"
#include "agent/hooks/hook_outcome.h"
#include "agent/kube/client/kube_types.h"

namespace nodehook {

struct HookInput {
  std::string reason;       // create, update, delete, resume
  std::string node;
  std::string resource_id;  // ResourceRef::Id()
  ObjectMeta meta;
  std::string old_object;   // JSON, "" when there is none (create)
  std::string new_object;   // JSON, "" when there is none (delete)
  std::string diff;         // JSON array from DiffEssences
  int retry = 0;            // attempts that failed before this one
  std::string event_type;   // for the "event" reason: ADDED, MODIFIED or DELETED
};

// Runs `spec` for `input` and classifies how it ended. Files go to an empty private directory
// from `scratch` that no other run holds (ScratchDir: the result file is read safely, whatever
// the hook made of it); afterwards it is emptied for the next run, or removed with whatever the
// hook left there.
HookOutcome RunHook(ActionRunner& runner, const HookSpec& spec, const HookInput& input, ScratchPool& scratch,
                     const CancelToken& cancel);

}  // namespace nodehook
