// SqliteStateStore: node outputs (schema version 6). Same locking as the rest of the store: every
// call holds mu_ and is one statement (one transaction).
#include "storage/sqlite_state_store.h"

namespace nodehook {
namespace {

constexpr const char* kColumns = "uid, resource, namespace, name, outputs, updated_at_ms";

NodeOutputsRecord ReadRecord(const Statement& row) {
  return NodeOutputsRecord{row.Text(0), row.Text(1), row.Text(2), row.Text(3), row.Text(4), row.Int64(5)};
}

}  // namespace

Result<std::optional<NodeOutputsRecord>> SqliteStateStore::GetNodeOutputs(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "GetNodeOutputs", std::string("SELECT ") + kColumns + " FROM node_outputs WHERE uid = ?1 AND node = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_);
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<NodeOutputsRecord>();
  return std::optional<NodeOutputsRecord>(ReadRecord(*st));
}

Result<std::vector<NodeOutputsRecord>> SqliteStateStore::ListNodeOutputs(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare("ListNodeOutputs", std::string("SELECT ") + kColumns +
                                                             " FROM node_outputs WHERE node = ?1 AND resource = ?2"
                                                             " ORDER BY namespace, name, uid");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, resource);
  return ReadAll(*st, &ReadRecord);
}

Status SqliteStateStore::PutNodeOutputs(const NodeOutputsRecord& r) {
  MutexLock lock(&mu_);
  if (r.outputs.empty()) {
    Result<Statement> st = db_->Prepare("PutNodeOutputs", "DELETE FROM node_outputs WHERE uid = ?1 AND node = ?2");
    if (!st.ok()) return st.status();
    st->Bind(1, r.uid).Bind(2, node_name_);
    return st->Run();
  }
  Result<Statement> st = db_->Prepare(
      "PutNodeOutputs",
      "INSERT INTO node_outputs (uid, node, resource, namespace, name, outputs, updated_at_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (uid, node) DO UPDATE SET resource = excluded.resource, "
      "namespace = excluded.namespace, name = excluded.name, outputs = excluded.outputs, "
      "updated_at_ms = excluded.updated_at_ms");
  if (!st.ok()) return st.status();
  st->Bind(1, r.uid).Bind(2, node_name_).Bind(3, r.resource).Bind(4, r.namespace_name);
  st->Bind(5, r.name).Bind(6, r.outputs).Bind(7, r.updated_at_ms);
  return st->Run();
}

}  // namespace nodehook
