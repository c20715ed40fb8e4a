// LeaseRecord: the fields of a coordination.k8s.io/v1 Lease that leader election reads and
// writes, and their JSON form. The wall-clock times are written for people reading the Lease
// (kubectl get lease -o yaml); the election itself never compares them with a local clock.
// Value type and pure functions; thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "agent/base/status.h"

namespace nodehook {

struct LeaseRecord {
  std::string holder;               // spec.holderIdentity; "" = released
  int lease_duration_seconds = 0;   // spec.leaseDurationSeconds
  std::string acquire_time;         // spec.acquireTime, RFC 3339 with microseconds
  std::string renew_time;           // spec.renewTime
  int transitions = 0;              // spec.leaseTransitions
  std::string resource_version;     // metadata.resourceVersion: the precondition of an update
  // Notes of the holder for the other candidates, in annotations. The node names it asks to
  // watch its term closely (kStandbysAnnotation, comma-separated): they try to acquire every
  // retry period, the other candidates less often. How many nodes it counts (kFleetSizeAnnotation;
  // 0: not said).
  std::string standbys{};
  int fleet_size{0};
  // What the holder's successor takes up (kHandoverAnnotation): the rollout coordinator's object
  // states whose outcome Events are still owed. Kept through an acquire, since the new holder
  // writes the Lease it read.
  std::string handover{};

  // Whether two reads show the same record (what client-go compares to notice a change).
  bool SameAs(const LeaseRecord& other) const {
    return holder == other.holder && lease_duration_seconds == other.lease_duration_seconds &&
           acquire_time == other.acquire_time && renew_time == other.renew_time &&
           transitions == other.transitions && resource_version == other.resource_version;
  }
};

inline constexpr const char* kStandbysAnnotation = "nodehook.io/standbys";
inline constexpr const char* kFleetSizeAnnotation = "nodehook.io/fleet-size";
inline constexpr const char* kHandoverAnnotation = "nodehook.io/handover";

// The annotations that carry a record's notes (standbys, fleet size); none when it has none.
std::map<std::string, std::string> LeaseNotes(const LeaseRecord& record);

// Whether `identity` (a node name, or "<node>_<pod uid>") is one of the comma-separated node names.
bool NamedStandby(const std::string& standbys, const std::string& identity);

// Reads a Lease object's JSON. kInvalid names what is missing or of the wrong type.
Result<LeaseRecord> ParseLease(std::string_view json);

// The whole Lease object as JSON, with metadata.resourceVersion when the record has one, and
// the labels and annotations when there are any (rollout Leases carry their state there).
// `owner`, when its uid is set: metadata.ownerReferences names that Node, so the
// garbage collector deletes the Lease once the Node is deleted (kubelet's node Leases do the same).
using LeaseMetadataMap = std::map<std::string, std::string>;
struct LeaseOwnerNode {
  std::string name;
  std::string uid;
};
std::string LeaseJson(const std::string& namespace_name, const std::string& name, const LeaseRecord& record,
                      const LeaseMetadataMap& labels = {}, const LeaseMetadataMap& annotations = {},
                      const LeaseOwnerNode& owner = {});

}  // namespace nodehook
