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
  r.uid = st.Text(0);
  r.resource = st.Text(1);
  r.namespace_name = st.Text(2);
  r.name = st.Text(3);
  r.essence = st.Text(4);
  r.last_object = st.Text(5);
  if (!st.IsInteger(6)) return CorruptRow("objects", r.uid, "handled_at_ms is not an integer");
  if (!LooksLikeJsonObject(r.last_object)) return CorruptRow("objects", r.uid, "last_object is not a JSON object");
  r.handled_at_ms = st.Int64(6);
  return r;
}

Result<HandlerRecord> ReadHandler(const Statement& st) {
  HandlerRecord r;
  r.uid = st.Text(0);
  r.handler = st.Text(1);
  for (int column : {5, 6, 7}) {
    if (!st.IsInteger(column)) {
      return CorruptRow("handlers", r.uid, "handler " + r.handler + ": retries, first_start_ms and next_attempt_ms "
                                           "must be integers");
    }
  }
  r.resource = st.Text(2);
  r.namespace_name = st.Text(3);
  r.name = st.Text(4);
  r.retries = static_cast<int>(st.Int64(5));
  r.first_start_ms = st.Int64(6);
  r.next_attempt_ms = st.Int64(7);
  r.last_outcome = st.Text(8);
  r.last_message = st.Text(9);
  r.target = st.Text(10);
  r.last_object = st.Text(11);
  if (!r.last_object.empty() && !LooksLikeJsonObject(r.last_object)) {
    return CorruptRow("handlers", r.uid, "handler " + r.handler + ": last_object is not a JSON object");
  }
  return r;
}

// What a list does with a corrupt row: the rows of one uid fail with its error; lists across
// objects leave it out, so one bad row does not hide the others (reading that object on its own
// says what is wrong with it).
enum class CorruptRows { kFail, kSkip };

template <typename Record>
Result<std::vector<Record>> ReadRows(Statement& st, Result<Record> (*read)(const Statement&), CorruptRows corrupt) {
  std::vector<Record> records;
  while (true) {
    Result<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) return records;
    Result<Record> record = read(st);
    if (record.ok()) {
      records.push_back(std::move(record).value());
    } else if (corrupt == CorruptRows::kFail) {
      return record.status();
    }
  }
}

template <typename Record>
Result<std::optional<Record>> ReadOneRow(Statement& st, Result<Record> (*read)(const Statement&)) {
  Result<bool> row = st.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Record>();
  Result<Record> record = read(st);
  if (!record.ok()) return record.status();
  return std::optional<Record>(std::move(record).value());
}

// Runs `sql`, whose parameters are ?1 = uid and ?2 = node.
Status RunForUid(SqliteDb& db, const std::string& operation, const char* sql, const std::string& uid,
                 const std::string& node) {
  Result<Statement> st = db.Prepare(operation, sql);
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node);
  return st->Run();
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
  Result<Statement> st = db_->Prepare(
      "GetObject",
      std::string("SELECT ") + kObjectColumns + " FROM objects WHERE uid = ?1 AND node = ?2");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_);
  return ReadOneRow(*st, &ReadObject);
}

Result<std::vector<ObjectRecord>> SqliteStateStore::ListObjects(const std::string& resource) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "ListObjects", std::string("SELECT ") + kObjectColumns +
                         " FROM objects WHERE node = ?1 AND resource = ?2 ORDER BY namespace, name, uid");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_).Bind(2, resource);
  return ReadRows(*st, &ReadObject, CorruptRows::kSkip);
}

Result<std::optional<HandlerRecord>> SqliteStateStore::GetHandler(const std::string& uid,
                                                                  const std::string& handler) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "GetHandler", std::string("SELECT ") + kHandlerColumns +
                        " FROM handlers WHERE uid = ?1 AND node = ?2 AND handler = ?3");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_).Bind(3, handler);
  return ReadOneRow(*st, &ReadHandler);
}

Result<std::vector<HandlerRecord>> SqliteStateStore::ListHandlers(const std::string& uid) {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "ListHandlers", std::string("SELECT ") + kHandlerColumns +
                          " FROM handlers WHERE uid = ?1 AND node = ?2 ORDER BY handler");
  if (!st.ok()) return st.status();
  st->Bind(1, uid).Bind(2, node_name_);
  return ReadRows(*st, &ReadHandler, CorruptRows::kFail);
}

Result<std::vector<HandlerRecord>> SqliteStateStore::ListAllHandlers() {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "ListAllHandlers", std::string("SELECT ") + kHandlerColumns +
                             " FROM handlers WHERE node = ?1 ORDER BY next_attempt_ms, uid, handler");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_);
  return ReadRows(*st, &ReadHandler, CorruptRows::kSkip);
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
    NODEHOOK_RETURN_IF_ERROR(RunForUid(*db_, "RecordAttempt", kClearGone, r.uid, node_name_));
  }
  Result<Statement> st = db_->Prepare(
      "RecordAttempt",
      "INSERT INTO handlers (uid, node, handler, resource, namespace, name, retries, first_start_ms, "
      "next_attempt_ms, last_outcome, last_message, target, last_object) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
      "ON CONFLICT (uid, node, handler) DO UPDATE SET resource = excluded.resource, "
      "namespace = excluded.namespace, name = excluded.name, retries = excluded.retries, "
      "first_start_ms = excluded.first_start_ms, next_attempt_ms = excluded.next_attempt_ms, "
      "last_outcome = excluded.last_outcome, last_message = excluded.last_message, "
      "target = excluded.target, last_object = excluded.last_object");
  if (!st.ok()) return st.status();
  st->Bind(1, r.uid).Bind(2, node_name_).Bind(3, r.handler).Bind(4, r.resource);
  st->Bind(5, r.namespace_name).Bind(6, r.name).Bind(7, static_cast<int64_t>(r.retries));
  st->Bind(8, r.first_start_ms).Bind(9, r.next_attempt_ms).Bind(10, r.last_outcome);
  st->Bind(11, r.last_message).Bind(12, r.target).Bind(13, r.last_object);
  return st->Run();
}

Status SqliteStateStore::WriteHandled(const ObjectRecord& o, const std::string& handler) {
  {
    Result<Statement> upsert = db_->Prepare(
        "RecordHandled",
        "INSERT INTO objects (uid, node, resource, namespace, name, essence, last_object, "
        "handled_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
        "ON CONFLICT (uid, node) DO UPDATE SET "
        "namespace = excluded.namespace, name = excluded.name, essence = excluded.essence, "
        "last_object = excluded.last_object, handled_at_ms = excluded.handled_at_ms");
    if (!upsert.ok()) return upsert.status();
    upsert->Bind(1, o.uid).Bind(2, node_name_).Bind(3, o.resource).Bind(4, o.namespace_name);
    upsert->Bind(5, o.name).Bind(6, o.essence).Bind(7, o.last_object).Bind(8, o.handled_at_ms);
    NODEHOOK_RETURN_IF_ERROR(upsert->Run());
  }
  {
    // Apart, and only when it differs (the resource's version changed in the config): SQLite
    // rewrites the objects_by_resource entry for every row an upsert sets `resource` on, one
    // more page written per handled change.
    Result<Statement> moved = db_->Prepare(
        "RecordHandled", "UPDATE objects SET resource = ?3 WHERE uid = ?1 AND node = ?2 AND resource <> ?3");
    if (!moved.ok()) return moved.status();
    moved->Bind(1, o.uid).Bind(2, node_name_).Bind(3, o.resource);
    NODEHOOK_RETURN_IF_ERROR(moved->Run());
  }
  {
    Result<Statement> drop = db_->Prepare(
        "RecordHandled", "DELETE FROM handlers WHERE uid = ?1 AND node = ?2 AND handler = ?3");
    if (!drop.ok()) return drop.status();
    drop->Bind(1, o.uid).Bind(2, node_name_).Bind(3, handler);
    NODEHOOK_RETURN_IF_ERROR(drop->Run());
  }
  return RunForUid(*db_, "RecordHandled", kClearGone, o.uid, node_name_);
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
    NODEHOOK_RETURN_IF_ERROR(RunForUid(*db_, "Forget", sql, uid, node_name_));
  }
  return tx.Commit();
}

Result<std::vector<ObjectRecord>> SqliteStateStore::ListAllObjects() {
  MutexLock lock(&mu_);
  Result<Statement> st = db_->Prepare(
      "ListAllObjects", std::string("SELECT ") + kObjectColumns +
                            " FROM objects WHERE node = ?1 ORDER BY resource, namespace, name, uid");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_);
  return ReadRows(*st, &ReadObject, CorruptRows::kSkip);
}

Result<std::vector<ObjectRecord>> SqliteStateStore::ListObjectSummaries() {
  MutexLock lock(&mu_);
  // The same columns with the two large ones left out ('{}' passes ReadObject's check, then goes).
  Result<Statement> st = db_->Prepare(
      "ListObjectSummaries",
      "SELECT uid, resource, namespace, name, '', '{}', handled_at_ms"
      " FROM objects WHERE node = ?1 ORDER BY resource, namespace, name, uid");
  if (!st.ok()) return st.status();
  st->Bind(1, node_name_);
  Result<std::vector<ObjectRecord>> rows = ReadRows(*st, &ReadObject, CorruptRows::kSkip);
  if (rows.ok()) {
    for (ObjectRecord& r : *rows) r.last_object.clear();
  }
  return rows;
}

}  // namespace nodehook
