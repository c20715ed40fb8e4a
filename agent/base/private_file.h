// Owner-only files and directories. The state file, its WAL and the hook input files hold whole
// objects (secrets in a spec included), so they are created 0600 / 0700 whatever the process
// umask is: an explicit mode, and an fchmod when a restrictive umask took even the owner's bits.
// We do not set a process umask instead, because hooks would inherit it.
// Stateless functions; thread-safe.
#pragma once

#include <string>

#include <sys/types.h>

#include "agent/base/status.h"

namespace nodehook {

inline constexpr mode_t kPrivateFileMode = 0600;
inline constexpr mode_t kPrivateDirMode = 0700;

// Opens `path` with `flags` (O_CREAT is added, O_CLOEXEC too); a file created by this call gets
// exactly kPrivateFileMode. Returns the descriptor, which the caller closes.
[[nodiscard]] Result<int> OpenPrivateFile(const std::string& path, int flags);

// Creates `path` empty and 0600 when it does not exist; leaves an existing file as it is.
[[nodiscard]] Status CreatePrivateFileIfMissing(const std::string& path);

// Replaces the content of `path` (created 0600 when missing; never follows a symlink there).
[[nodiscard]] Status WritePrivateFile(const std::string& path, const std::string& content);

// Creates directory `path` with exactly kPrivateDirMode when missing; an existing one is kept.
[[nodiscard]] Status CreatePrivateDirIfMissing(const std::string& path);

// True when group or others have any permission on a file of mode `mode`.
inline bool IsLooserThanOwnerOnly(mode_t mode) { return (mode & 077) != 0; }

}  // namespace nodehook
