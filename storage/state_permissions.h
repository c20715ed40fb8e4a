// Owner-only permissions for what the agent keeps on the node. The state file, its -wal and -shm
// files and the hook scratch files hold whole objects, secrets in a spec included; files made by
// older versions (0644 in a 0755 hostPath) are tightened at start, once.
//
// New files are private from the start (agent/base/private_file.h): SqliteDb creates the state
// file 0600 and SQLite gives -wal and -shm the state file's mode; the lock file is 0600.
// Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

struct TightenedPermissions {
  std::vector<std::string> changed;  // "PATH 0644->0600", in the order checked
  // Directories left as they are because they are not only ours: they hold other files, or have
  // the sticky bit (like /tmp). Taking their permissions away could break other programs; the
  // state files in them are private anyway.
  std::vector<std::string> shared_dirs;
};

// A directory to make private, and the entries that may be in it: it is left alone when it
// holds anything whose name does not start with one of `own_prefixes`.
struct OwnedDir {
  std::string path;
  std::vector<std::string> own_prefixes;
};

// Sets the state file's directory (when it holds only the state's files and `scratch`) and
// `scratch` (when it holds only "hook-*" run directories) to 0700, and the state file, -wal,
// -shm and lock file to 0600, when they exist and group or others have any permission.
// Missing paths are skipped. Fails only when a stat or chmod fails.
[[nodiscard]] Result<TightenedPermissions> TightenStatePermissions(const std::string& state_file,
                                                                   const std::string& scratch);

// The files that make up the state: the database, its -wal and -shm, and the lock file.
std::vector<std::string> StateFilesOf(const std::string& state_file);

}  // namespace nodehook
