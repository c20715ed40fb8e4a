// Integrity of the state file at start-up: a quick check, and moving a damaged file aside so the
// agent can start afresh without destroying the evidence.
// Stateless functions; safe from any thread, but only the holder of the StateLock may call
// MoveAside (nobody else may have the file open).
#pragma once

#include <string>

#include "agent/base/clock.h"
#include "agent/base/status.h"

namespace nodehook {

struct IntegrityVerdict {
  bool damaged = false;
  std::string detail;  // what SQLite said: quick_check's first findings, or the open/read error
};

// Runs PRAGMA quick_check on the existing database at `path` (reading its WAL too). Damaged when
// SQLite calls the file corrupt or not a database, or quick_check reports any problem. Failures
// that say nothing about the file's content (I/O error, permission, lock timeout) are an error
// Status instead, so a transient problem never gets a good file moved aside.
Result<IntegrityVerdict> QuickCheck(const std::string& path);

// Renames `path` and its -wal and -shm companions (those that exist) to
// "<path>.<label>-<UTC YYYYmmddTHHMMSSZ>" (+ "-wal"/"-shm"), adding ".N" if that name is taken.
// Returns the new name of the main file (which need not exist: a -wal left without its main file
// is moved aside with label "orphan", so it is never applied to a new, empty file).
Result<std::string> MoveAside(const std::string& path, TimePoint now, const std::string& label = "corrupt");

}  // namespace nodehook
