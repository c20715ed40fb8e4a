// Builds TZif files byte by byte (RFC 8536), so the reader is tested on files whose every field
// the test chose, besides the machine's zoneinfo.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nodehook {

struct TzifType {
  int32_t offset;
  bool dst;
  std::string abbreviation;
};

struct TzifContent {
  char version = '2';  // '\0' for version 1 (32-bit data only, no footer)
  std::vector<int64_t> transitions;
  std::vector<uint8_t> type_indices;
  std::vector<TzifType> types;
  std::string footer;  // the POSIX TZ string (version 2+)
  uint32_t leap_count = 0;
};

inline void PutBigEndian(std::string* out, uint64_t value, int width) {
  for (int i = width - 1; i >= 0; --i) out->push_back(static_cast<char>(value >> (8 * i) & 0xff));
}

inline std::string TzifBlock(const TzifContent& c, int time_size, std::string* header_out) {
  std::string chars;
  std::vector<uint8_t> abbreviation_index;
  for (const TzifType& t : c.types) {
    abbreviation_index.push_back(static_cast<uint8_t>(chars.size()));
    chars += t.abbreviation;
    chars.push_back('\0');
  }
  std::string header = "TZif";
  header.push_back(c.version);
  header.append(15, '\0');
  for (uint64_t count : {uint64_t{0}, uint64_t{0}, uint64_t{c.leap_count}, uint64_t{c.transitions.size()},
                         uint64_t{c.types.size()}, uint64_t{chars.size()}}) {
    PutBigEndian(&header, count, 4);
  }
  std::string data;
  for (int64_t t : c.transitions) PutBigEndian(&data, static_cast<uint64_t>(t), time_size);
  for (uint8_t i : c.type_indices) data.push_back(static_cast<char>(i));
  for (size_t i = 0; i < c.types.size(); ++i) {
    PutBigEndian(&data, static_cast<uint32_t>(c.types[i].offset), 4);
    data.push_back(c.types[i].dst ? 1 : 0);
    data.push_back(static_cast<char>(abbreviation_index[i]));
  }
  data += chars;
  for (uint32_t i = 0; i < c.leap_count; ++i) {
    PutBigEndian(&data, 78796800 + i, time_size);
    PutBigEndian(&data, i + 1, 4);
  }
  *header_out = header;
  return data;
}

inline std::string BuildTzif(const TzifContent& c) {
  std::string header;
  std::string v1 = TzifBlock(c, 4, &header);
  std::string file = header + v1;
  if (c.version == '\0') return file;
  std::string v2 = TzifBlock(c, 8, &header);
  return file + header + v2 + "\n" + c.footer + "\n";
}

}  // namespace nodehook
