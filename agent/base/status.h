// Status and Result<T>: the error currency at every module boundary.
// Library exceptions are caught at the adapter that calls the library and turned into one of these.
// Both are [[nodiscard]] (as in abseil): an ignored error does not compile (-Werror=unused-result).
// Where ignoring really is right, cast to (void) and say why.
// Value types; not synchronized.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace nodehook {

enum class StatusCode {
  kOk,
  kInvalid,          // bad input: config, malformed server data, bad arguments
  kNotFound,         // 404
  kConflict,         // 409: stale resourceVersion or failed precondition
  kGone,             // 410: expired resourceVersion or continue token; relist
  kUnauthorized,     // 401: re-read credentials
  kForbidden,        // 403
  kTooManyRequests,  // 429
  kUnavailable,      // connection refused, TLS/DNS error, 5xx, stream cut: retry with backoff
  kTimeout,
  kCancelled,
  kInternal,         // a bug or an unexpected library failure
  kCorrupt,          // one stored record cannot be read (the rest of the file can): quarantine it
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Seconds the server asked us to wait (Retry-After on 429/503); 0 when it did not say.
  int retry_after_seconds() const { return retry_after_seconds_; }
  Status& set_retry_after_seconds(int s) {
    retry_after_seconds_ = s;
    return *this;
  }

  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int retry_after_seconds_ = 0;
};

inline Status InvalidError(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }
inline Status NotFoundError(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status UnavailableError(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {}     // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace nodehook

#define NODEHOOK_RETURN_IF_ERROR(expr)       \
  do {                                       \
    ::nodehook::Status _st = (expr);         \
    if (!_st.ok()) return _st;               \
  } while (0)
