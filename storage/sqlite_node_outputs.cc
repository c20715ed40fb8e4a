// SqliteStateStore: node outputs (schema version 6). Same locking as the rest of the store: every
// call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kColumns = "uid, resource, namespace, name, outputs, updated_at_ms";

// The query for every column ReadRecord reads, with `rest` (WHERE, ORDER BY) added.
std::string Select(const char* rest) { return std::string("SELECT ") + kColumns + " FROM node_outputs " + rest; }

NodeOutputsRecord ReadRecord(const Statement& row) {
  return NodeOutputsRecord{row.Text(0), row.Text(1), row.Text(2), row.Text(3), row.Text(4), row.Int64(5)};
}

}  // namespace

Result<std::optional<NodeOutputsRecord>> SqliteStateStore::GetNodeOutputs(const std::string& uid) {
  MutexLock lock(&mu_);
  return ReadOne(db_->Prepare("GetNodeOutputs", Select("WHERE uid = ?1 AND node = ?2"), uid, node_name_), &ReadRecord);
}

Result<std::vector<NodeOutputsRecord>> SqliteStateStore::ListNodeOutputs(const std::string& resource) {
  MutexLock lock(&mu_);
  const char* rest = "WHERE node = ?1 AND resource = ?2 ORDER BY namespace, name, uid";
  return ReadAll(db_->Prepare("ListNodeOutputs", Select(rest), node_name_, resource), &ReadRecord);
}

Status SqliteStateStore::PutNodeOutputs(const NodeOutputsRecord& r) {
  MutexLock lock(&mu_);
  if (r.outputs.empty()) {
    return db_->RunCached("PutNodeOutputs", "DELETE FROM node_outputs WHERE uid = ?1 AND node = ?2", r.uid,
                          node_name_);
  }
  return db_->RunCached(
      "PutNodeOutputs",
      "INSERT INTO node_outputs (uid, node, resource, namespace, name, outputs, updated_at_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (uid, node) DO UPDATE SET resource = excluded.resource, "
      "namespace = excluded.namespace, name = excluded.name, outputs = excluded.outputs, "
      "updated_at_ms = excluded.updated_at_ms",
      r.uid, node_name_, r.resource, r.namespace_name, r.name, r.outputs, r.updated_at_ms);
}

}  // namespace nodehook
