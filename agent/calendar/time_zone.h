// IANA time zones read from TZif files (RFC 8536: versions 1 to 4; the 64-bit data when the file
// has it, and its POSIX TZ footer for every time after the last listed transition). Instead of
// setenv("TZ") + localtime_r, which change process-wide state and are not thread-safe.
//
// A TimeZone is an immutable value: safe to share between threads once loaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/base/status.h"
#include "agent/calendar/civil_time.h"
#include "agent/calendar/posix_tz.h"

namespace nodehook {

inline constexpr const char* kDefaultZoneInfoDir = "/usr/share/zoneinfo";

// A moment as the wall clock of one zone shows it.
struct LocalTime {
  CivilTime civil;
  int utc_offset_seconds = 0;  // local = UTC + this
  bool dst = false;
  std::string abbreviation;  // "CEST"
};

class TimeZone {
 public:
  // UTC itself, without any file (so the default zone works where no tzdata is installed).
  static TimeZone Utc();
  // Reads the bytes of a TZif file; `name` is only kept for messages.
  static Result<TimeZone> FromTzif(const std::string& name, const std::string& bytes);

  const std::string& name() const { return name_; }

  LocalTime ToCivil(int64_t unix_seconds) const;
  int OffsetAt(int64_t unix_seconds) const;

  // The instant a wall-clock time names, chosen deterministically where the clock is not one to
  // one: the FIRST instant whose local time is at or after `civil`. So
  //  - in an overlap (clocks set back: 02:30 happens twice) it is the earlier of the two instants;
  //  - in a gap (clocks set forward: 02:30 never happens) it is the instant the gap ends (03:00
  //    of the new offset), as if the skipped wall-clock time were reached the moment the clock
  //    jumps over it.
  // This keeps FromCivil monotonic (a later wall-clock time never maps to an earlier instant), so
  // a daily window at 02:30 opens exactly once on both switch days.
  int64_t FromCivil(const CivilTime& civil) const;

 private:
  struct Type {
    int offset = 0;
    bool dst = false;
    std::string abbreviation;
  };
  struct Info {
    int offset;
    bool dst;
    const std::string* abbreviation;
  };
  Info InfoAt(int64_t unix_seconds) const;

  std::string name_;
  std::vector<int64_t> transitions_;   // ascending unix seconds
  std::vector<uint8_t> type_indices_;  // the type in force from transitions_[i]
  std::vector<Type> types_;            // types_[0]: before the first transition
  std::optional<PosixTzRule> footer_;  // after the last transition
};

// Loads `name` ("Europe/Berlin") from `zoneinfo_dir`. "UTC" is built in. Refuses names that are
// empty, absolute, contain a ".." part or characters outside letters, digits and "/_+-" (a zone
// name must not reach outside the directory), files that are not TZif, and leap-second
// ("right/") files, whose times are not POSIX times.
Result<TimeZone> LoadTimeZone(const std::string& name, const std::string& zoneinfo_dir = kDefaultZoneInfoDir);

}  // namespace nodehook
