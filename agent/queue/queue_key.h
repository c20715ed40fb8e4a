// QueueKey: what the work queue holds for an object: which watched resource (its index in the
// config) and which object (uid). Typed, so no worker parses a key back from text.
// Plain value; thread-compatible.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <tuple>

namespace nodehook {

struct QueueKey {
  size_t resource = 0;
  std::string uid;

  bool operator==(const QueueKey& o) const { return resource == o.resource && uid == o.uid; }
  bool operator!=(const QueueKey& o) const { return !(*this == o); }
  bool operator<(const QueueKey& o) const { return std::tie(resource, uid) < std::tie(o.resource, o.uid); }
};

struct QueueKeyHash {
  size_t operator()(const QueueKey& k) const { return std::hash<std::string>()(k.uid) * 31 + k.resource; }
};

// "<resource index>/<uid>", for log lines.
inline std::string KeyText(const QueueKey& k) { return std::to_string(k.resource) + "/" + k.uid; }
inline const std::string& KeyText(const std::string& k) { return k; }

}  // namespace nodehook
