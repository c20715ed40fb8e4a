// StoredOutcome: how a handler's last attempt ended, as the state store keeps it
// (HandlerRecord::last_outcome, SnapshotRecord::last_outcome). The one list of these names,
// shared by the agent, the store, the local endpoints (http/) and the fleet view (kubectl/):
// compare through the enum, never by spelling the text again.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

namespace nodehook {

enum class StoredOutcome {
  kDone,              // finished (snapshots; handlers' successes move the diffbase instead)
  kRunning,           // started and not finished: the agent stopped or died meanwhile
  kFailed,            // failed; retried with backoff
  kRetryLater,        // the hook asked to be retried after a delay (exit 75)
  kInProgress,        // multi-step work under way (exit 100): not an error
  kPermanentFailure,  // retry limits reached: waits for a change or an explicit retry
  kRetryRequested,    // a permanent failure revived by an explicit retry: runs once more
  kFinalizerPending,  // finalizer mode: the delete hook succeeded; this node's finalizer is to come off
  kInterrupted,       // stopped at agent shutdown (or loss of leadership): due again, no retry counted
};

inline constexpr const char* StoredOutcomeName(StoredOutcome o) {
  switch (o) {
    case StoredOutcome::kDone: return "done";
    case StoredOutcome::kRunning: return "running";
    case StoredOutcome::kFailed: return "failed";
    case StoredOutcome::kRetryLater: return "retry_later";
    case StoredOutcome::kInProgress: return "in_progress";
    case StoredOutcome::kPermanentFailure: return "permanent_failure";
    case StoredOutcome::kRetryRequested: return "retry_requested";
    case StoredOutcome::kFinalizerPending: return "finalizer_pending";
    case StoredOutcome::kInterrupted: return "interrupted";
  }
  return "failed";
}

// nullopt for a text no version of the agent wrote.
std::optional<StoredOutcome> ParseStoredOutcome(std::string_view text);

// Whether a handler with this outcome is failing (what /v1/objects and `kubectl nodehook
// failing` list): failed, asked to retry later, or given up.
bool IsFailingOutcome(std::string_view text);

inline constexpr const char* kOutcomeDone = StoredOutcomeName(StoredOutcome::kDone);
inline constexpr const char* kOutcomeRunning = StoredOutcomeName(StoredOutcome::kRunning);
inline constexpr const char* kOutcomePermanentFailure = StoredOutcomeName(StoredOutcome::kPermanentFailure);
inline constexpr const char* kOutcomeRetryRequested = StoredOutcomeName(StoredOutcome::kRetryRequested);
inline constexpr const char* kOutcomeFinalizerPending = StoredOutcomeName(StoredOutcome::kFinalizerPending);
inline constexpr const char* kOutcomeInterrupted = StoredOutcomeName(StoredOutcome::kInterrupted);

}  // namespace nodehook
