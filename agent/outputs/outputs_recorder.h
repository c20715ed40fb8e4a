// OutputsRecorder: takes what a hook published for its node ("node" in its result file;
// published_outputs.h) for the hook's object. It checks the outputs' syntax, that every key is
// under the resource's prefixes, that no condition takes the type the resource derives and that
// the agent's own pod tolerates every NoExecute taint (own_tolerations.h); merges
// them into what the object published before (each kind given replaces that kind) and stores
// them in the state file, where they stay until the object is forgotten (after its delete hook).
// The outputs writer (node_outputs_writer.h) keeps the union of each resource's stored outputs on
// the Node.
// A refused "node" changes nothing stored: it is logged ("node outputs refused", warn) and posted
// as a Warning Event (NodeOutputsRefused) on the object. The hook's own outcome stands.
// Thread-safety: as the store and the recorder it borrows (both thread-safe).
#pragma once

#include <memory>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "agent/config/config.h"
#include "agent/events/event_recorder.h"
#include "agent/kube/client/kube_types.h"
#include "agent/outputs/own_tolerations.h"
#include "storage/state_store.h"

namespace nodehook {

class OutputsRecorder {
 public:
  // `own` null: the agent runs in no pod (nothing to evict), so NoExecute taints are not judged.
  OutputsRecorder(StateStore& store, EventRecorder& events, Clock& clock,
                  std::shared_ptr<const OwnTolerations> own = nullptr)
      : store_(store), events_(events), clock_(clock), own_(std::move(own)) {}

  // Records `node_json` (the result file's "node" value; "" = none: nothing to do) for `object`,
  // published by its `handler` hook. Returns why it was refused or not stored, else Ok.
  Status Record(const WatchedResource& resource, const ObjectMeta& object, const std::string& handler,
                const std::string& node_json);

 private:
  Status Failed(const ObjectMeta& object, const std::string& handler, const Status& status);

  StateStore& store_;
  EventRecorder& events_;
  Clock& clock_;
  const std::shared_ptr<const OwnTolerations> own_;
};

}  // namespace nodehook
