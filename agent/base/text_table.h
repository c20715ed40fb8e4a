// Column-aligned text tables for CLI output, as kubectl prints them: two spaces between
// columns, no trailing blanks. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace nodehook {

// rows[0] is the header. Columns are as wide as their widest cell; the last one is not padded.
std::string FormatTextTable(const std::vector<std::vector<std::string>>& rows);

// `text` on one line, cut to `width` characters with "..." when longer.
std::string OneLine(const std::string& text, size_t width);

}  // namespace nodehook
