// Where hook scratch directories go when the config does not say: a private directory on a
// memory-backed file system, `<root>/nodehook-<16 hex digits>` (FNV-1a 64 of the state file's
// absolute path, so agents of different state files never sweep each other's runs). Five short-
// lived files per hook cost more journal work on a disk file system than the rest of the agent
// together (docs/benchmarks.md), and the files hold whole objects that need not outlive a run.
// The roots tried are $XDG_RUNTIME_DIR, then /dev/shm (an emptyDir with medium Memory in the
// DaemonSet); without one, the caller falls back to `<state dir>/hook-scratch`.
// Stateless functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"

namespace nodehook {

// "nodehook-" and the hash of `state_file` made absolute (against the working directory).
std::string MemoryWorkDirName(const std::string& state_file);

// `<root>/MemoryWorkDirName(state_file)`, created 0700 when missing. Refused, with the reason:
// a root that is not tmpfs or ramfs, or an existing entry that is not a directory (a symbolic
// link included) or is owned by another user. Our own directory with looser modes is set to 0700.
Result<std::string> PrivateMemoryWorkDir(const std::string& root, const std::string& state_file);

// The first of `roots` (empty ones skipped) that PrivateMemoryWorkDir accepts; nullopt when none
// does. `refused` gets one "ROOT: reason" per root passed over.
std::optional<std::string> ChooseMemoryWorkDir(const std::vector<std::string>& roots, const std::string& state_file,
                                               std::vector<std::string>* refused);

// $XDG_RUNTIME_DIR (when set) and /dev/shm.
std::vector<std::string> DefaultMemoryRoots();

}  // namespace nodehook
