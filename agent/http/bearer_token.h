// BearerTokenFile: authenticates "Authorization: Bearer TOKEN" against a token kept in a file
// (a mounted Secret). The file is read on every check, so a rotated Secret takes effect at
// once; it is a few bytes on a local volume, so this never blocks for long. The comparison
// takes the same time wherever the first differing byte is.
// Why not TokenReview: it would put an API round trip (and the API server's availability) on
// the path of every callback and need `tokenreviews create` for every agent; a shared token
// from a Secret the caller also mounts is enough for a node-local callback.
// Immutable after construction; thread-safe.
#pragma once

#include <string>
#include <utility>

#include "agent/base/status.h"

namespace nodehook {

class BearerTokenFile {
 public:
  static constexpr size_t kMinLength = 16;
  static constexpr size_t kMaxLength = 4096;

  explicit BearerTokenFile(std::string path) : path_(std::move(path)) {}

  // The token, with surrounding whitespace removed; kInvalid naming the file when it cannot be
  // read, is empty, shorter than kMinLength or longer than kMaxLength.
  Result<std::string> Read() const;
  // True only for "Bearer <the file's token>"; false whenever the file is unusable.
  bool Allows(const std::string& authorization_header) const;
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
};

// Equal contents, in time that depends only on `expected`'s length.
bool ConstantTimeEquals(const std::string& given, const std::string& expected);

}  // namespace nodehook
