#include "agent/periodic/check_timing.h"

#include <algorithm>
#include <cstdint>

namespace nodehook {

Duration StableOffset(const std::string& node, const std::string& uid, Duration span) {
  if (span <= Duration::zero()) return Duration::zero();
  // FNV-1a: stable across builds and machines, unlike std::hash.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::string& text) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(node);
  mix(std::string(1, '\0'));
  mix(uid);
  return Duration(static_cast<int64_t>(h % static_cast<uint64_t>(span.count())));
}

TimePoint FirstCheckDue(TimePoint now, const std::string& node, const std::string& uid, Duration interval) {
  return now + StableOffset(node, uid, interval);
}

TimePoint NextCheckDue(TimePoint start, Duration interval, int jitter_percent, double unit_random) {
  double share = (2.0 * unit_random - 1.0) * std::clamp(jitter_percent, 0, 100) / 100.0;
  auto stretched = static_cast<int64_t>(static_cast<double>(interval.count()) * (1.0 + share));
  return start + Duration(std::max<int64_t>(stretched, 1));
}

TimePoint ResumedCheckDue(TimePoint stored, TimePoint now, const std::string& node, const std::string& uid,
                          Duration interval) {
  if (stored > now) return std::min(stored, now + interval);  // a clock set back must not stall checks
  return now + StableOffset(node, uid, std::min(interval, kOverdueSpread));
}

}  // namespace nodehook
