#include "agent/base/text_table.h"

#include <algorithm>

namespace nodehook {

std::string FormatTextTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string OneLine(const std::string& text, size_t width) {
  std::string line = text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  if (line.size() <= width) return line;
  // Back up to a UTF-8 character boundary before cutting.
  size_t end = width - 3;
  while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
  return line.substr(0, end) + "...";
}

}  // namespace nodehook
