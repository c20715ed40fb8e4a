#include "agent/nodework/boot_id.h"

#include <fstream>

namespace nodehook {

Result<std::string> ReadBootId(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return UnavailableError("boot ID not readable from " + path);
  const size_t end = line.find_last_not_of(" \t\r\n");
  line = end == std::string::npos ? "" : line.substr(0, end + 1);
  if (line.empty() || line.size() > 128) return InvalidError("boot ID in " + path + " is empty or too long");
  return line;
}

}  // namespace nodehook
