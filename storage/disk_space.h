// Free space on the state file's file system, so a full disk is named as one instead of with
// SQLite's words for it ("database or disk is full", or "disk I/O error" when the -shm file
// cannot grow). Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "agent/base/status.h"

namespace nodehook {

// Below this a file system counts as full for the state: SQLite needs 32 KiB for the -shm file
// and room for WAL frames, so under 1 MiB a start or a burst of writes fails soon anyway.
inline constexpr uint64_t kStateLowSpaceBytes = 1024 * 1024;

// Bytes this process may still write on the file system holding `dir` (statvfs): root may use
// the blocks reserved for it, others may not.
Result<uint64_t> FreeBytes(const std::string& dir);

// "no space left on <dir> (<free> bytes free)".
std::string NoSpaceMessage(const std::string& dir, uint64_t free_bytes);

// The no-space message when the file system of `dir` is full (errno ENOSPC/EDQUOT was seen, or
// fewer than kStateLowSpaceBytes are free); "" when it is not, or cannot be told.
std::string NoSpaceIfFull(const std::string& dir, int system_errno);

}  // namespace nodehook
