// Opening the state file for the agent: the checks and the recovery that `nodehook run` needs on
// top of SqliteStateStore::Open. The caller must hold the StateLock for `path` (recovery renames
// the file, which is only safe when no other agent uses it). `nodehook state` opens the store
// directly instead: an inspection tool must never move a file aside.
// Stateless; the returned store is thread-safe like any SqliteStateStore.
#pragma once

#include <memory>
#include <string>

#include "agent/base/clock.h"
#include "agent/base/status.h"
#include "storage/local_fs.h"
#include "storage/sqlite_state_store.h"

namespace nodehook {

// Once the StateLock is held (only the agent that acts changes modes, and a waiting one logs
// nothing but its waiting): the state directory, `scratch` (the hook scratch directory) and the
// state files are made owner-only where they are looser (TightenStatePermissions), logged once
// at warn listing what changed; a volatile file system accepted by `rules` is logged at warn.
// The directory was checked before the lock with CheckStateDirectory.
[[nodiscard]] Status PrepareStateDirectory(const std::string& state_file, const std::string& scratch,
                                           const StateDirectoryRules& rules);

// kUnavailable "no space left on <dir> (<N> bytes free); the agent needs ... bytes free to start"
// when the state directory has less than kStateLowSpaceBytes free (disk_space.h); Ok otherwise
// (also when the free space cannot be read: the open that follows will say what is wrong).
[[nodiscard]] Status CheckStateFreeSpace(const std::string& path);

struct OpenedState {
  std::unique_ptr<SqliteStateStore> store;
  // A damaged file was found and moved aside; the store started empty and is marked to adopt
  // existing objects (StateStore::AdoptExistingPending). Surface this in metrics and an Event.
  bool recovered_from_corruption = false;
  std::string moved_aside_to;     // the damaged file's new name
  std::string corruption_detail;  // what the integrity check found
  // The state file was missing although an agent held its lock before (PriorUse): the store
  // started empty and every create hook runs again. Logged at warn here; surface it as above.
  bool state_file_missing = false;
};

// What the StateLock found when it was taken (StateLock::lock_file_existed, previous_holder).
struct PriorUse {
  bool lock_file_existed = false;
  std::string last_holder;  // "" = unknown (a clean stop clears it)
};

// Opens `path` for node `node_name`:
//   0. its directory must exist, be writable and be on a local, persistent file system (a volatile
//      one only when `rules` allow it; CheckStateDirectory), with at least kStateLowSpaceBytes
//      free: a full disk is refused ("no space left on ...") whether the last stop was clean or
//      a kill, before SQLite touches anything;
//   1a. a file missing where `prior` shows an agent ran is logged at warn ("state file is gone"),
//      and a -wal/-shm left without it is moved aside ("<path>.orphan-<UTC time>");
//   1. an existing file gets PRAGMA quick_check;
//   2. a damaged one (corrupt, not a database) is moved aside to "<path>.corrupt-<UTC time>",
//      logged at level error, and replaced by a fresh store marked "adopt existing";
//   3. the store is opened and migrated (a newer-schema file is refused, never moved aside).
Result<OpenedState> OpenStateForAgent(const std::string& path, const std::string& node_name,
                                      const StoreOptions& options, const Clock& clock,
                                      const StateDirectoryRules& rules = {}, const PriorUse& prior = {});

}  // namespace nodehook
