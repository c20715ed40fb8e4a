// Thin RAII wrappers over the SQLite C API, so the store reads as SQL and values, not handles.
//
// Ownership: SqliteDb owns its connection and every statement it prepared (cached by SQL text,
// finalized before the connection closes). Statement is a borrowed handle to one cached statement
// that resets it and clears its bindings when it goes out of scope; at most one Statement per SQL
// text may be alive at a time. Transaction rolls back on destruction unless committed.
//
// Thread-safety: none. A SqliteDb and everything borrowed from it must be used by one thread at a
// time; the owner (e.g. SqliteStateStore) serializes access with its own mutex.
//
// Errors become Status "sqlite <operation>: <SQLite message>": full disk, read-only file, I/O
// errors and lock timeouts are kUnavailable (retry later); a corrupt or foreign file is kInternal.
// A full file system reads "sqlite <operation>: no space left on <dir> (<N> bytes free)"
// (disk_space.h) instead of SQLite's "database or disk is full" or "disk I/O error".
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/base/metrics.h"
#include "agent/base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace nodehook {

class SqliteDb;

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite. A failed bind is reported by the next Step/Run.
  Statement& Bind(int index, const std::string& value);
  Statement& Bind(int index, int64_t value);
  // Binds `values` to ?1, ?2, ... in order: strings as text; ints and bools as int64.
  template <typename... Values>
  Statement& BindAll(const Values&... values) {
    [[maybe_unused]] int index = 0;
    (BindValue(++index, values), ...);
    return *this;
  }

  // One step: true when a row is available, false when the statement is done.
  Result<bool> Step();
  // Steps to completion; for statements that return no rows.
  Status Run();

  // Columns of the current row are 0-based, as in SQLite.
  std::string Text(int column) const;
  int64_t Int64(int column) const;
  // Whether the column's value is stored as an integer (SQLite keeps whatever type was written).
  // Ask before reading the column: a read that converts its value leaves its type undefined.
  bool IsInteger(int column) const;
  // Reads columns first, first + 1, ... into `fields`, each as its type: std::string (Text),
  // int64_t (Int64), int (Int64 narrowed) or bool (Int64 != 0).
  template <typename... Fields>
  void Columns(int first, Fields&... fields) const {
    int column = first;
    (Column(column++, fields), ...);
  }

 private:
  friend class SqliteDb;
  Statement(SqliteDb* db, sqlite3_stmt* stmt, std::string operation);

  template <typename Value>
  void BindValue(int index, const Value& value) {
    if constexpr (std::is_integral_v<Value>) {
      Bind(index, static_cast<int64_t>(value));
    } else {
      Bind(index, value);  // std::string, or text that converts to one
    }
  }
  void Column(int column, std::string& field) const { field = Text(column); }
  void Column(int column, int64_t& field) const { field = Int64(column); }
  void Column(int column, int& field) const { field = static_cast<int>(Int64(column)); }
  void Column(int column, bool& field) const { field = Int64(column) != 0; }

  SqliteDb* db_;
  sqlite3_stmt* stmt_;
  std::string operation_;
  int bind_error_ = 0;
};

class SqliteDb {
 public:
  // Opens (creating if needed) the database at `path`; ":memory:" gives a private in-memory one.
  // A new file is created 0600 whatever the umask, and its -wal and -shm get the same mode.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements without results (pragmas, DDL).
  Status Exec(const std::string& operation, const std::string& sql);
  // The first column of the first row as text, e.g. the answer of "PRAGMA journal_mode=WAL".
  Result<std::string> QueryText(const std::string& operation, const std::string& sql);
  // The statement for `sql`, prepared once and cached for the life of the connection.
  Result<Statement> Prepare(const std::string& operation, const std::string& sql);
  // The same, with `values` bound to ?1, ?2, ... (Statement::BindAll).
  template <typename Value, typename... Values>
  Result<Statement> Prepare(const std::string& operation, const std::string& sql, const Value& first,
                            const Values&... rest) {
    Result<Statement> st = Prepare(operation, sql);
    if (st.ok()) st->BindAll(first, rest...);
    return st;
  }
  // Runs one cached statement without results (BEGIN, COMMIT, INSERT ...: parsed once), with
  // `values` bound to ?1, ?2, ...
  template <typename... Values>
  Status RunCached(const std::string& operation, const std::string& sql, const Values&... values) {
    Result<Statement> st = Prepare(operation, sql);
    if (!st.ok()) return st.status();
    return st->BindAll(values...).Run();
  }

  // Rows changed by this connection since it opened (sqlite3_total_changes64).
  int64_t TotalChanges() const;

  // The Status for SQLite result code `rc`, with the connection's current error message.
  Status Error(const std::string& operation, int rc) const;

  // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  int64_t changes() const;

  const std::string& path() const { return path_; }
  // True when the database lives only in memory (no file, so no WAL).
  bool in_memory() const;

  // Every Transaction from Begin() to a successful Commit() is observed here, in seconds
  // (not owned; null = not measured).
  void ObserveCommits(Histogram* commit_seconds) { commit_seconds_ = commit_seconds; }
  Histogram* commit_seconds() const { return commit_seconds_; }

 private:
  struct CloseDb {
    void operator()(sqlite3* db) const;
  };
  struct FinalizeStatement {
    void operator()(sqlite3_stmt* stmt) const;
  };

  SqliteDb(sqlite3* db, std::string path);

  std::unique_ptr<sqlite3, CloseDb> db_;
  std::string path_;
  std::unordered_map<std::string, std::unique_ptr<sqlite3_stmt, FinalizeStatement>> statements_;
  Histogram* commit_seconds_ = nullptr;
};

// BEGIN IMMEDIATE ... COMMIT, so a writer takes the write lock up front (waiting up to
// busy_timeout) instead of failing when it upgrades from reading to writing.
// kRead: BEGIN ... COMMIT around reads that must see one moment of the file, at the cost of one
// set of SQLite's locks (four fcntl calls in WAL mode) instead of one per statement; not counted
// in the commit histogram.
class Transaction {
 public:
  enum class Kind { kWrite, kRead };
  Transaction(SqliteDb& db, std::string operation, Kind kind = Kind::kWrite)
      : db_(db), operation_(std::move(operation)), kind_(kind) {}
  ~Transaction();  // rolls back when begun and not committed
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status Begin();
  Status Commit();

 private:
  SqliteDb& db_;
  std::string operation_;
  Kind kind_;
  bool open_ = false;
  std::chrono::steady_clock::time_point begun_;
};

// Every row of a bound query, converted by `read`.
template <typename Record>
Result<std::vector<Record>> ReadAll(Statement& st, Record (*read)(const Statement&)) {
  std::vector<Record> records;
  while (true) {
    Result<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) return records;
    records.push_back(read(st));
  }
}

// The same for a statement as SqliteDb::Prepare returns it: its error, or every row.
template <typename Record>
Result<std::vector<Record>> ReadAll(Result<Statement> st, Record (*read)(const Statement&)) {
  if (!st.ok()) return st.status();
  return ReadAll(*st, read);
}

// The row of a bound query that matches at most one, converted by `read`.
template <typename Record>
Result<std::optional<Record>> ReadOne(Statement& st, Record (*read)(const Statement&)) {
  Result<bool> row = st.Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Record>();
  return std::optional<Record>(read(st));
}

// The same for a statement as SqliteDb::Prepare returns it: its error, or the row if any.
template <typename Record>
Result<std::optional<Record>> ReadOne(Result<Statement> st, Record (*read)(const Statement&)) {
  if (!st.ok()) return st.status();
  return ReadOne(*st, read);
}

}  // namespace nodehook
