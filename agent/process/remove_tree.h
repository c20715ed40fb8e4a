// Removing what hooks leave behind, without trusting it: directory trees are removed through
// descriptors (openat/unlinkat), never by path and never through a symbolic link, so a hook that
// swaps a directory for a link cannot make the agent delete anything outside the tree. The walk
// stays on one file system (a bind mount inside is left alone) and at most kMaxRemoveDepth deep,
// so neither a mount nor a hook's endlessly nested directories can cost the agent its descriptors.
// Stateless; thread-safe.
#pragma once

#include <string>

#include "agent/base/status.h"

namespace nodehook {

inline constexpr int kMaxRemoveDepth = 64;

// Removes the entry `name` of the open directory `dir_fd`, whatever it is (file, link, FIFO,
// directory tree). A missing entry is fine. Errors name what could not be removed, starting
// from `shown` (the entry's path as the reader knows it).
Status RemoveEntryAt(int dir_fd, const std::string& name, const std::string& shown);

// True for the names ScratchDir creates: "hook-" and six characters of mkdtemp's alphabet.
bool IsScratchDirName(const std::string& name);

// Removes scratch directories that earlier runs left under `work_dir` (an agent killed mid-hook,
// or a removal that failed); anything else there is left alone. Returns how many were removed;
// a missing `work_dir` is zero. One that cannot be removed does not stop the others; the
// first such error is returned. Call only while no hook of this agent runs.
Result<int> SweepScratchDirs(const std::string& work_dir);

}  // namespace nodehook
