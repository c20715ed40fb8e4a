// Bytes from any client of the health/retry port, parsed as the local server does, at every
// prefix length a slow client could leave us with.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/http/request_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr size_t kMaxBytes = 4096;
  for (size_t cut : {size / 2, size}) {
    nodehook::LocalRequest request;
    if (nodehook::ParseHttpRequest(bytes.substr(0, cut), kMaxBytes, &request) ==
        nodehook::ParseOutcome::kComplete) {
      (void)nodehook::QueryParam(request.query, "uid");
      (void)nodehook::QueryParam(request.query, "handler");
    }
  }
  return 0;
}
