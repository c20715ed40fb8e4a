// Which connection the local server gives up when one more arrives, so that no single client
// can starve the probes. Pure function; thread-safe.
//
// A connection is "idle" until its request has arrived whole. Only idle connections are ever
// evicted, and always the oldest of a chosen peer (peer = the client's IP address):
//   - a peer at `max_per_peer` loses its own oldest idle connection: one pod (one IP) holding
//     hundreds of connections only ever competes with itself, and its newest connection, like
//     a probe that sends its request at once, is the one that gets served;
//   - at `max_connections` (many peers), the peer holding the most connections loses its
//     oldest idle one: a peer with one connection (the kubelet) is the last to be touched.
// When nothing can be evicted (every connection is writing its answer) the new one is refused.
// A slowloris client gains nothing by trickling bytes: the deadline counts from accept
// (LocalServerOptions::read_timeout), not from the last byte.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace nodehook {

struct ConnectionLimits {
  size_t max_connections = 128;
  size_t max_per_peer = 8;
};

struct OpenConnectionView {
  std::string peer;  // the client's address, without the port
  bool idle = true;  // no complete request yet
};

struct Admission {
  bool admit = true;
  std::optional<size_t> evict;  // index into `open` to close first
};

// `open` is in accept order (oldest first).
Admission AdmitConnection(const std::vector<OpenConnectionView>& open, const std::string& peer,
                          const ConnectionLimits& limits);

}  // namespace nodehook
