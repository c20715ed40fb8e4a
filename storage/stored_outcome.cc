#include "storage/stored_outcome.h"

namespace nodehook {

std::optional<StoredOutcome> ParseStoredOutcome(std::string_view text) {
  for (StoredOutcome o : {StoredOutcome::kDone, StoredOutcome::kRunning, StoredOutcome::kFailed,
                          StoredOutcome::kRetryLater, StoredOutcome::kInProgress, StoredOutcome::kPermanentFailure,
                          StoredOutcome::kRetryRequested, StoredOutcome::kFinalizerPending,
                          StoredOutcome::kInterrupted}) {
    if (text == StoredOutcomeName(o)) return o;
  }
  return std::nullopt;
}

bool IsFailingOutcome(std::string_view text) {
  auto o = ParseStoredOutcome(text);
  return o == StoredOutcome::kFailed || o == StoredOutcome::kRetryLater || o == StoredOutcome::kPermanentFailure;
}

}  // namespace nodehook
