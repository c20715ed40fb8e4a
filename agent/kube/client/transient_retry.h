// RetryWhileTransient: one API call (or a few in a row) asked again while the answer says "not
// now" (unavailable, timeout, 429, or 401 while a rotating token is re-read by the client), with
// a backoff of 1 s doubling to 30 s by the clock given, until a lasting answer or `stop`. For the
// reads an agent needs once at start (its own pod), where waiting is right and a 403 or 404 is
// an answer. Thread-safe as `attempt` is.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "agent/base/cancel.h"
#include "agent/base/clock.h"
#include "agent/base/mutex.h"
#include "agent/base/status.h"

namespace nodehook {

inline bool TransientApiError(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kTimeout || code == StatusCode::kTooManyRequests ||
         code == StatusCode::kUnauthorized;
}

// Returns `attempt`'s first lasting result; kCancelled when `stop` fires while waiting.
// `on_retry(error, wait)` is told before each wait (to log it).
template <typename T>
Result<T> RetryWhileTransient(const std::function<Result<T>()>& attempt, Clock& clock, const CancelToken& stop,
                              const std::function<void(const Status&, Duration)>& on_retry) {
  Mutex mu;
  std::condition_variable cv;
  CancelRegistration wake(stop, [&] {
    MutexLock lock(&mu);
    cv.notify_all();
  });
  Duration wait = std::chrono::seconds(1);
  for (;;) {
    Result<T> result = attempt();
    if (result.ok() || !TransientApiError(result.status().code())) return result;
    on_retry(result.status(), wait);
    MutexLock lock(&mu);
    WaitUntil(clock, cv, mu, clock.Now() + wait, [&] { return stop.cancelled(); });
    if (stop.cancelled()) return Status(StatusCode::kCancelled, "stopped while waiting for the API server");
    wait = std::min<Duration>(wait * 2, std::chrono::seconds(30));
  }
}

}  // namespace nodehook
