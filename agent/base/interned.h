// Intern: one process-wide copy of each distinct text, for values that repeat across many
// records and come from a small set (a watched resource's id in every object's snapshot entry).
// The copies are never freed, so the views stay valid for the life of the process: intern only
// texts from a bounded set. Thread-safe.
#pragma once

#include <string_view>

namespace nodehook {

std::string_view Intern(std::string_view text);

}  // namespace nodehook
