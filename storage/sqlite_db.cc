#include "storage/sqlite_db.h"

#include <sqlite3.h>

#include "agent/base/private_file.h"
#include "storage/disk_space.h"
#include "storage/local_fs.h"

namespace nodehook {

// ---- Statement ----

Statement::Statement(SqliteDb* db, sqlite3_stmt* stmt, std::string operation)
    : db_(db), stmt_(stmt), operation_(std::move(operation)) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), operation_(std::move(other.operation_)),
      bind_error_(other.bind_error_) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  // Reset so a half-read statement does not keep a read snapshot open, and clear the bindings
  // so the next user of the cached statement starts clean.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Statement& Statement::Bind(int index, const std::string& value) {
  int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                             SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, static_cast<sqlite3_int64>(value));
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) return db_->Error(operation_, bind_error_);
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(operation_, rc);
}

Status Statement::Run() {
  while (true) {
    Result<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t Statement::Int64(int column) const {
  return static_cast<int64_t>(sqlite3_column_int64(stmt_, column));
}

bool Statement::IsInteger(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_INTEGER; }

// ---- SqliteDb ----

void SqliteDb::CloseDb::operator()(sqlite3* db) const { sqlite3_close_v2(db); }
void SqliteDb::FinalizeStatement::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

SqliteDb::SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

SqliteDb::~SqliteDb() {
  statements_.clear();  // finalize every statement before the connection closes
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  // SQLite would create the file 0644 (less the umask) and gives -wal and -shm the file's mode,
  // so creating it 0600 first keeps all three private.
  if (!path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0) {
    NODEHOOK_RETURN_IF_ERROR(CreatePrivateFileIfMissing(path));
  }
  sqlite3* raw = nullptr;
  // NOMUTEX: the owner serializes all use of the connection, so SQLite's own mutex is redundant.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (raw == nullptr) return Status(StatusCode::kInternal, "sqlite Open: out of memory");
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  if (rc != SQLITE_OK) return db->Error("Open", rc);
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Status SqliteDb::Exec(const std::string& operation, const std::string& sql) {
  int rc = sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(operation, rc);
  return Status::Ok();
}

Result<std::string> SqliteDb::QueryText(const std::string& operation, const std::string& sql) {
  Result<Statement> st = Prepare(operation, sql);
  if (!st.ok()) return st.status();
  Result<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return InternalError("sqlite " + operation + ": no result from " + sql);
  return st->Text(0);
}

int64_t SqliteDb::TotalChanges() const { return sqlite3_total_changes64(db_.get()); }

Result<Statement> SqliteDb::Prepare(const std::string& operation, const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db_.get(), sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(raw);
      return Error(operation, rc);
    }
    it = statements_.emplace(sql, std::unique_ptr<sqlite3_stmt, FinalizeStatement>(raw)).first;
  }
  return Statement(this, it->second.get(), operation);
}

Status SqliteDb::Error(const std::string& operation, int rc) const {
  std::string message = "sqlite " + operation + ": " + sqlite3_errmsg(db_.get());
  int primary = rc & 0xff;  // extended codes only refine it
  // SQLite says "database or disk is full", or "disk I/O error" when the -shm file cannot grow.
  if ((primary == SQLITE_FULL || primary == SQLITE_IOERR) && !in_memory()) {
    std::string full = NoSpaceIfFull(StateDirectoryOf(path_), sqlite3_system_errno(db_.get()));
    if (!full.empty()) message = "sqlite " + operation + ": " + full;
  }
  switch (primary) {
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
      return UnavailableError(message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return InternalError(message + " (state file " + path_ +
                           " is damaged or is not a SQLite database; move it aside to start afresh)");
    default:
      return InternalError(message);
  }
}

int64_t SqliteDb::changes() const { return static_cast<int64_t>(sqlite3_changes(db_.get())); }

bool SqliteDb::in_memory() const {
  const char* file = sqlite3_db_filename(db_.get(), "main");
  return file == nullptr || file[0] == '\0';
}

// ---- Transaction ----

Transaction::~Transaction() {
  // Errors are ignored: SQLite may already have rolled back after a failed statement.
  if (open_) (void)db_.RunCached(operation_, "ROLLBACK");
}

Status Transaction::Begin() {
  begun_ = std::chrono::steady_clock::now();  // waiting for the write lock is part of the cost
  NODEHOOK_RETURN_IF_ERROR(db_.RunCached(operation_, kind_ == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN"));
  open_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  NODEHOOK_RETURN_IF_ERROR(db_.RunCached(operation_, "COMMIT"));
  open_ = false;
  if (Histogram* h = kind_ == Kind::kWrite ? db_.commit_seconds() : nullptr) {
    h->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - begun_).count());
  }
  return Status::Ok();
}

}  // namespace nodehook
