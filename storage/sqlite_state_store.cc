#include "storage/sqlite_state_store.h"

#include <utility>

#include "storage/migrations.h"

namespace nodehook {
namespace {

constexpr const char* kObjectColumns =
    "uid, resource, namespace, name, essence, last_object, handled_at_ms";
constexpr const char* kHandlerColumns =
    "uid, handler, resource, namespace, name, retries, first_start_ms, next_attempt_ms, "
    "last_outcome, last_message, target, last_object";

// The queries for every column ReadObject / ReadHandler reads, with `rest` (WHERE, ORDER BY) added.
std::string SelectObjects(const char* rest) {
  return std::string("SELECT ") + kObjectColumns + " FROM objects " + rest;
}
std::string SelectHandlers(const char* rest) {
  return std::string("SELECT ") + kHandlerColumns + " FROM handlers " + rest;
}

// A stored object as the agent wrote it: a JSON object (RecordHandled stores the whole object).
bool LooksLikeJsonObject(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  size_t last = text.find_last_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{' && text[last] == '}';
}

// kCorrupt naming the row and what is wrong with it: a row this code did not write (edited by
// hand, damaged on disk) is quarantined on its own instead of failing every read.
Status CorruptRow(const char* table, const std::string& uid, const std::string& what) {
  return Status(StatusCode::kCorrupt, "state record " + std::string(table) + "[uid " + uid + "]: " + what);
}

Result<ObjectRecord> ReadObject(const Statement& st) {
  ObjectRecord r;
  st.Columns(0, r.uid, r.resource, r.namespace_name, r.name, r.essence, r.last_object);
  if (!st.IsInteger(6)) return CorruptRow("objects", r.uid, "handled_at_ms is not an integer");
  if (!LooksLikeJsonObject(r.last_object)) return CorruptRow("objects", r.uid, "last_object is not a JSON object");
  r.handled_at_ms = st.Int64(6);
  return r;
}

Result<HandlerRecord> ReadHandler(const Statement& st) {
  HandlerRecord r;
  st.Columns(0, r.uid, r.handler);
  for (int column : {5, 6, 7}) {
    if (!st.IsInteger(column)) {
      return CorruptRow("handlers", r.uid, "handler " + r.handler + ": retries, first_start_ms and next_attempt_ms "
                                           "must be integers");
    }
  }
  st.Columns(2, r.resource, r.namespace_name, r.name, r.retries, r.first_start_ms, r.next_attempt_ms, r.last_outcome,
             r.last_message, r.target, r.last_object);
  if (!r.last_object.empty() && !LooksLikeJsonObject(r.last_object)) {
    return CorruptRow("handlers", r.uid, "handler " + r.handler + ": last_object is not a JSON object");
  }
  return r;
}

// What a list does with a corrupt row: the rows of one uid fail with its error; lists across
// objects leave it out, so one bad row does not hide the others (reading that object on its own
// says what is wrong with it).
enum class CorruptRows { kFail, kSkip };

// A statement as SqliteDb::Prepare returns it: its error, or its rows as `read` and `corrupt` say.
template <typename Record>
Result<std::vector<Record>> ReadRows(Result<Statement> st, Result<Record> (*read)(const Statement&),
                                     CorruptRows corrupt) {
  if (!st.ok()) return st.status();
  std::vector<Record> records;
  while (true) {
    Result<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return records;
    Result<Record> record = read(*st);
    if (record.ok()) {
      records.push_back(std::move(record).value());
    } else if (corrupt == CorruptRows::kFail) {
      return record.status();
    }
  }
}

template <typename Record>
Result<std::optional<Record>> ReadOneRow(Result<Statement> st, Result<Record> (*read)(const Statement&)) {
  if (!st.ok()) return st.status();
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Record>();
  Result<Record> record = read(*st);
  if (!record.ok()) return record.status();
  return std::optional<Record>(std::move(record).value());
}

constexpr const char* kClearGone = "DELETE FROM gone WHERE uid = ?1 AND node = ?2";
// The handler name of delete hooks, as the agent records it (the "delete" hook reason).
constexpr const char* kDeleteHandler = "delete";

Status ApplyPragmas(SqliteDb& db, const StoreOptions& options) {
  NODEHOOK_RETURN_IF_ERROR(db.Exec("Open", "PRAGMA busy_timeout = 5000"));
  Result<std::string> mode = db.QueryText("Open", "PRAGMA journal_mode = WAL");
  if (!mode.ok()) return mode.status();
  // An in-memory database reports "memory"; a file that stays out of WAL (e.g. on a network
  // file system) would break our concurrency and durability assumptions.
  if (!db.in_memory() && *mode != "wal") {
    return InvalidError("state file " + db.path() + " cannot use WAL journaling (journal_mode is " +
                        *mode + "); put the state directory on a local file system");
  }
  NODEHOOK_RETURN_IF_ERROR(db.Exec(
      "Open", options.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL"));
  // The WAL file is reused, not shrunk, after a checkpoint; cap what it keeps so a burst of
  // writes does not leave a large -wal file behind for good.
  NODEHOOK_RETURN_IF_ERROR(db.Exec("Open", "PRAGMA journal_size_limit = 4194304"));
  // SQLite's default page cache (2 MB) filled up on a node with many objects and stayed: about a
  // tenth of the agent's memory with 10,000 objects. A page it no longer holds is read again from
  // the kernel's page cache (a pread of 4 KiB), which costs little next to a handled change.
  NODEHOOK_RETURN_IF_ERROR(db.Exec("Open", "PRAGMA cache_size = -512"));
  return db.Exec("Open", "PRAGMA foreign_keys = ON");
}

}  // namespace

SqliteStateStore::SqliteStateStore(std::unique_ptr<SqliteDb> db, std::string node_name)
    : db_(std::move(db)),
      node_name_(std::move(node_name)),
      group_([this](const std::vector<const GroupCommit::Write*>& writes, const std::string& operation) {
        return RunGroup(writes, operation);
      }) {}

Result<std::unique_ptr<SqliteStateStore>> SqliteStateStore::Open(const std::string& path,
                                                                 const std::string& node_name,
                                                                 const StoreOptions& options) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  NODEHOOK_RETURN_IF_ERROR(ApplyPragmas(**db, options));
  NODEHOOK_RETURN_IF_ERROR(MigrateToLatest(**db));
  if (options.metrics) {
    (*db)->ObserveCommits(&options.metrics->GetHistogram(
        "store_commit_duration_seconds",
        "State store write transactions, from BEGIN (waiting for the write lock) to COMMIT done"));
  }
  return std::unique_ptr<SqliteStateStore>(new SqliteStateStore(std::move(*db), node_name));
}

Result<std::optional<ObjectRecord>> SqliteStateStore::GetObject(const std::string& uid) {
  MutexLock lock(&mu_);
  return ReadObjectRow(uid);
}

Result<std::optional<ObjectRecord>> SqliteStateStore::ReadObjectRow(const std::string& uid) {
  return ReadOneRow(db_->Prepare("GetObject", SelectObjects("WHERE uid = ?1 AND node = ?2"), uid, node_name_),
                    &ReadObject);
}

Result<ObjectState> SqliteStateStore::ReadObjectState(const std::string& uid) {
  MutexLock lock(&mu_);
  Transaction tx(*db_, "ReadObjectState", Transaction::Kind::kRead);
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  Result<std::optional<ObjectRecord>> record = ReadObjectRow(uid);
  if (!record.ok()) return record.status();
  Result<std::vector<HandlerRecord>> progress = ReadHandlerRows(uid);
  if (!progress.ok()) return progress.status();
  NODEHOOK_RETURN_IF_ERROR(tx.Commit());
  return ObjectState{std::move(record).value(), std::move(progress).value()};
}

Result<std::vector<ObjectRecord>> SqliteStateStore::ListObjects(const std::string& resource) {
  MutexLock lock(&mu_);
  const char* rest = "WHERE node = ?1 AND resource = ?2 ORDER BY namespace, name, uid";
  return ReadRows(db_->Prepare("ListObjects", SelectObjects(rest), node_name_, resource), &ReadObject,
                  CorruptRows::kSkip);
}

Result<std::optional<HandlerRecord>> SqliteStateStore::GetHandler(const std::string& uid,
                                                                  const std::string& handler) {
  MutexLock lock(&mu_);
  const char* rest = "WHERE uid = ?1 AND node = ?2 AND handler = ?3";
  return ReadOneRow(db_->Prepare("GetHandler", SelectHandlers(rest), uid, node_name_, handler), &ReadHandler);
}

Result<std::vector<HandlerRecord>> SqliteStateStore::ListHandlers(const std::string& uid) {
  MutexLock lock(&mu_);
  return ReadHandlerRows(uid);
}

Result<std::vector<HandlerRecord>> SqliteStateStore::ReadHandlerRows(const std::string& uid) {
  const char* rest = "WHERE uid = ?1 AND node = ?2 ORDER BY handler";
  return ReadRows(db_->Prepare("ListHandlers", SelectHandlers(rest), uid, node_name_), &ReadHandler,
                  CorruptRows::kFail);
}

Result<std::vector<HandlerRecord>> SqliteStateStore::ListAllHandlers() {
  MutexLock lock(&mu_);
  const char* rest = "WHERE node = ?1 ORDER BY next_attempt_ms, uid, handler";
  return ReadRows(db_->Prepare("ListAllHandlers", SelectHandlers(rest), node_name_), &ReadHandler,
                  CorruptRows::kSkip);
}

Status SqliteStateStore::RunGroup(const std::vector<const GroupCommit::Write*>& writes, const std::string& operation) {
  MutexLock lock(&mu_);
  Transaction tx(*db_, operation);
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  for (const GroupCommit::Write* write : writes) NODEHOOK_RETURN_IF_ERROR((*write)());
  return tx.Commit();
}

Status SqliteStateStore::RecordAttempt(const HandlerRecord& r) {
  return group_.Submit("RecordAttempt", [&] {
    mu_.AssertHeld();  // RunGroup runs the writes
    return WriteAttempt(r);
  });
}

Status SqliteStateStore::RecordHandled(const ObjectRecord& o, const std::string& handler) {
  return group_.Submit("RecordHandled", [&] {
    mu_.AssertHeld();  // RunGroup runs the writes
    return WriteHandled(o, handler);
  });
}

Status SqliteStateStore::WriteAttempt(const HandlerRecord& r) {
  // An attempt of any other handler means the object is there again; a delete handler's attempt
  // is for the gone object, whose mark (the tombstone's age) must stay.
  if (r.handler != kDeleteHandler) {
    NODEHOOK_RETURN_IF_ERROR(db_->RunCached("RecordAttempt", kClearGone, r.uid, node_name_));
  }
  return db_->RunCached(
      "RecordAttempt",
      "INSERT INTO handlers (uid, node, handler, resource, namespace, name, retries, first_start_ms, "
      "next_attempt_ms, last_outcome, last_message, target, last_object) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
      "ON CONFLICT (uid, node, handler) DO UPDATE SET resource = excluded.resource, "
      "namespace = excluded.namespace, name = excluded.name, retries = excluded.retries, "
      "first_start_ms = excluded.first_start_ms, next_attempt_ms = excluded.next_attempt_ms, "
      "last_outcome = excluded.last_outcome, last_message = excluded.last_message, "
      "target = excluded.target, last_object = excluded.last_object",
      r.uid, node_name_, r.handler, r.resource, r.namespace_name, r.name, r.retries, r.first_start_ms,
      r.next_attempt_ms, r.last_outcome, r.last_message, r.target, r.last_object);
}

Status SqliteStateStore::WriteHandled(const ObjectRecord& o, const std::string& handler) {
  NODEHOOK_RETURN_IF_ERROR(db_->RunCached(
      "RecordHandled",
      "INSERT INTO objects (uid, node, resource, namespace, name, essence, last_object, "
      "handled_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT (uid, node) DO UPDATE SET "
      "namespace = excluded.namespace, name = excluded.name, essence = excluded.essence, "
      "last_object = excluded.last_object, handled_at_ms = excluded.handled_at_ms",
      o.uid, node_name_, o.resource, o.namespace_name, o.name, o.essence, o.last_object, o.handled_at_ms));
  // Apart, and only when it differs (the resource's version changed in the config): SQLite
  // rewrites the objects_by_resource entry for every row an upsert sets `resource` on, one
  // more page written per handled change.
  NODEHOOK_RETURN_IF_ERROR(db_->RunCached(
      "RecordHandled", "UPDATE objects SET resource = ?3 WHERE uid = ?1 AND node = ?2 AND resource <> ?3", o.uid,
      node_name_, o.resource));
  NODEHOOK_RETURN_IF_ERROR(db_->RunCached(
      "RecordHandled", "DELETE FROM handlers WHERE uid = ?1 AND node = ?2 AND handler = ?3", o.uid, node_name_,
      handler));
  return db_->RunCached("RecordHandled", kClearGone, o.uid, node_name_);
}

Status SqliteStateStore::Forget(const std::string& uid) {
  MutexLock lock(&mu_);
  Transaction tx(*db_, "Forget");
  NODEHOOK_RETURN_IF_ERROR(tx.Begin());
  for (const char* sql : {"DELETE FROM objects WHERE uid = ?1 AND node = ?2",
                          "DELETE FROM handlers WHERE uid = ?1 AND node = ?2", kClearGone,
                          "DELETE FROM retry_requests WHERE uid = ?1 AND node = ?2",
                          "DELETE FROM check_schedule WHERE uid = ?1 AND node = ?2",
                          "DELETE FROM node_outputs WHERE uid = ?1 AND node = ?2"}) {
    NODEHOOK_RETURN_IF_ERROR(db_->RunCached("Forget", sql, uid, node_name_));
  }
  return tx.Commit();
}

Result<std::vector<ObjectRecord>> SqliteStateStore::ListAllObjects() {
  MutexLock lock(&mu_);
  const char* rest = "WHERE node = ?1 ORDER BY resource, namespace, name, uid";
  return ReadRows(db_->Prepare("ListAllObjects", SelectObjects(rest), node_name_), &ReadObject, CorruptRows::kSkip);
}

namespace {

// The objects' columns with the two large ones left out ('{}' passes ReadObject's check, then goes).
std::string SelectObjectSummaries(const char* rest) {
  return std::string("SELECT uid, resource, namespace, name, '', '{}', handled_at_ms FROM objects ") + rest;
}

}  // namespace

Result<std::vector<ObjectRecord>> SqliteStateStore::ListObjectSummaries() {
  MutexLock lock(&mu_);
  Result<std::vector<ObjectRecord>> rows = ReadRows(
      db_->Prepare("ListObjectSummaries",
                   SelectObjectSummaries("WHERE node = ?1 ORDER BY resource, namespace, name, uid"), node_name_),
      &ReadObject, CorruptRows::kSkip);
  if (rows.ok()) {
    for (ObjectRecord& r : *rows) r.last_object.clear();
  }
  return rows;
}

Result<std::optional<ObjectRecord>> SqliteStateStore::GetObjectSummary(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<std::optional<ObjectRecord>> row = ReadOneRow(
      db_->Prepare("GetObjectSummary", SelectObjectSummaries("WHERE uid = ?1 AND node = ?2"), uid, node_name_),
      &ReadObject);
  if (row.ok() && row->has_value()) (*row)->last_object.clear();  // '{}', short: no buffer to free
  return row;
}

}  // namespace nodehook
