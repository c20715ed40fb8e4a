#include "agent/readiness/ready_records.h"

namespace nodehook {

std::string ReadyRecordName(const std::string& rid, const std::string& node) {
  return NodeLeaseNameIn("ready", rid, node);
}

std::string ReadyRecordJson(const std::string& namespace_name, const std::string& rid, const RolloutLease& record) {
  return RolloutLeaseJson(namespace_name, rid, record, kReadyLabel);
}

std::string ReadyRecordsSelector(const std::string& rid) { return std::string(kReadyLabel) + "=" + rid; }

}  // namespace nodehook
