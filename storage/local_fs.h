// The state directory must be a local, writable, persistent file system: SQLite's WAL mode needs
// shared memory (mmap of the -shm file) and byte-range locks that network and FUSE file systems
// do not provide reliably, and on them corruption, not an error, is the usual symptom. A file
// system in memory (tmpfs, ramfs) loses the state on every reboot, and then every create hook
// runs again: refused unless the user opts in.
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "agent/base/status.h"

namespace nodehook {

// Returns statfs(2)'s f_type for `dir`. Injectable so tests can pretend to be on NFS.
using FsTypeProbe = std::function<Result<int64_t>(const std::string& dir)>;
Result<int64_t> StatfsType(const std::string& dir);

// "nfs", "cifs", "fuse", ... for a file system type on which the state file must not live;
// nullptr for every other type.
const char* UnsafeFileSystemName(int64_t f_type);

// "tmpfs" or "ramfs" for a file system emptied on every reboot; nullptr for every other type.
const char* VolatileFileSystemName(int64_t f_type);

struct StateDirectoryRules {
  bool allow_volatile = false;  // accept tmpfs/ramfs (the user's `allow_volatile_state`)
  FsTypeProbe probe = StatfsType;
};

// The directory that holds `state_file` ("." when the path has no directory part).
std::string StateDirectoryOf(const std::string& state_file);

// kInvalid when the directory of `state_file` is missing, not a directory, on a network/FUSE file
// system, on tmpfs/ramfs without `allow_volatile` (the message names the file system and the
// path) or not writable; Ok otherwise.
[[nodiscard]] Status CheckStateDirectory(const std::string& state_file, const StateDirectoryRules& rules = {});

}  // namespace nodehook
