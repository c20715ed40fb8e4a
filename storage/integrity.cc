#include "storage/integrity.h"

#include <cerrno>
#include <cstring>
#include <memory>

#include <sqlite3.h>
#include <unistd.h>

#include "agent/base/utc_time.h"
#include "storage/disk_space.h"
#include "storage/local_fs.h"

namespace nodehook {
namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct Finalize {
  void operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }
};

bool MeansDamaged(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

Result<IntegrityVerdict> Failure(sqlite3* db, const std::string& path, int rc) {
  std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (MeansDamaged(rc)) return IntegrityVerdict{true, message};
  // "disk I/O error" is what SQLite says when a full disk keeps it from growing the -shm file.
  int primary = rc & 0xff;
  if (primary == SQLITE_IOERR || primary == SQLITE_FULL) {
    std::string full = NoSpaceIfFull(StateDirectoryOf(path), db != nullptr ? sqlite3_system_errno(db) : 0);
    if (!full.empty()) message = full;
  }
  return UnavailableError("cannot check state file " + path + ": " + message);
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

Result<IntegrityVerdict> QuickCheck(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, CloseDb> db(raw);
  if (rc != SQLITE_OK) return Failure(raw, path, rc);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, 5000);

  sqlite3_stmt* st_raw = nullptr;
  rc = sqlite3_prepare_v2(raw, "PRAGMA quick_check(5)", -1, &st_raw, nullptr);
  std::unique_ptr<sqlite3_stmt, Finalize> st(st_raw);
  if (rc != SQLITE_OK) return Failure(raw, path, rc);

  std::string findings;
  while ((rc = sqlite3_step(st_raw)) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(st_raw, 0);
    std::string line = text != nullptr ? reinterpret_cast<const char*>(text) : "";
    if (line == "ok") continue;
    if (!findings.empty()) findings += "; ";
    findings += line;
  }
  if (rc != SQLITE_DONE) return Failure(raw, path, rc);
  if (!findings.empty()) return IntegrityVerdict{true, findings};
  return IntegrityVerdict{false, "ok"};
}

Result<std::string> MoveAside(const std::string& path, TimePoint now, const std::string& label) {
  std::string stem = path + "." + label + "-" + BasicUtcStamp(now);
  std::string target = stem;
  for (int n = 2; Exists(target) || Exists(target + "-wal"); ++n) target = stem + "." + std::to_string(n);
  // The WAL and shared-memory files go first: a main file without its old WAL is harmless,
  // an old WAL next to a fresh main file is not (SQLite would try to apply it).
  for (const char* suffix : {"-wal", "-shm", ""}) {
    std::string from = path + suffix;
    if (!Exists(from)) continue;
    if (std::rename(from.c_str(), (target + suffix).c_str()) != 0) {
      return UnavailableError("cannot move state file " + from + " aside to " + target + suffix + ": " +
                              std::strerror(errno));
    }
  }
  return target;
}

}  // namespace nodehook
