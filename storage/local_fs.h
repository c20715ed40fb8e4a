// The state directory must be a local, writable file system: SQLite's WAL mode needs shared
// memory (mmap of the -shm file) and byte-range locks that network and FUSE file systems do not
// provide reliably, and on them corruption, not an error, is the usual symptom.
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

// The directory that holds `state_file` ("." when the path has no directory part).
std::string StateDirectoryOf(const std::string& state_file);

// kInvalid when the directory of `state_file` is missing, not a directory, on a network/FUSE file
// system (the message names the file system and the path) or not writable; Ok otherwise.
Status CheckStateDirectory(const std::string& state_file, const FsTypeProbe& probe = StatfsType);

}  // namespace nodehook
