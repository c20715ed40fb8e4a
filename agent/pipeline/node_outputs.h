// The node outputs of the resources that declare them ("node_outputs"): for each, a
// NodeOutputsSource that derives its NodeCondition (outputs/node_condition.h) from the store's
// latest snapshot (ObjectViewsPublisher) and the agent's memory of the resource's objects: its
// watch's first list, and which of its objects' latest states this node has handled (the
// settled states in its cache); and that reads what its objects' hooks published from the
// state file (the union over its objects). The writer that keeps them on the Node is built here
// too, with the state file's notes of every field manager this node ever applied
// (kNodeOutputManagersNote) and of the taints each put on the Node (kNodeOutputTaintsNote): one
// whose resource left the config, or no longer keeps outputs, is retired even when no resource
// keeps any any more (and the Node's managedFields can no longer be read).
// Thread-safety: the sources read thread-safe parts only; the writer runs on its own thread.
#pragma once

#include <memory>
#include <vector>

#include "agent/config/config.h"
#include "agent/kube/client/kube_client.h"
#include "agent/outputs/node_outputs_writer.h"
#include "agent/pipeline/object_views_publisher.h"
#include "agent/pipeline/resource_pipeline.h"

namespace nodehook {

// What the agent's memory says of `pipeline`'s objects: the objects this node acts on (its
// targeting) count, and those whose latest state is not settled are in progress.
ResourceProgress ProgressOf(const ResourcePipeline& pipeline);

inline constexpr const char* kNodeOutputManagersNote = "node_output_managers";
inline constexpr const char* kNodeOutputTaintsNote = "node_output_taints:";  // + the manager
inline constexpr const char* kNodeOutputIdleNote = "node_output_managers_idle";          // held nothing
inline constexpr const char* kNodeOutputMetadataNote = "node_output_managers_metadata";  // applied the Node

// Null when no resource keeps outputs and none is left to retire. Records the managers about
// to be used in the note before any is applied. Everything passed must outlive the writer;
// `clock` paces its rounds and stamps the transitions.
std::unique_ptr<NodeOutputsWriter> MakeNodeOutputsWriter(
    const Config& config, KubeClient& client, const std::vector<std::unique_ptr<ResourcePipeline>>& pipelines,
    const ObjectViewsPublisher& views, StateStore& store, Clock& clock);

}  // namespace nodehook
