// The kernel's boot ID (/proc/sys/kernel/random/boot_id): a new one after every boot, the same
// for every process and container of one boot, so an agent that restarts without a reboot sees
// it unchanged. Thread-safe.
#pragma once

#include <string>

#include "agent/base/status.h"

namespace nodehook {

inline constexpr const char* kBootIdFile = "/proc/sys/kernel/random/boot_id";

// The first line of `path`, trimmed; an error when unreadable or empty.
Result<std::string> ReadBootId(const std::string& path);

}  // namespace nodehook
