// Why a decider refused a command: a closed list. The values are stable
// (never renumbered or reused; a new code goes at the end) and each name is
// the `code` of the error JSON, part of the API (docs/api.md "Errors"). The
// HTTP status of each is the HTTP layer's to map (http/rejection_status.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace runledger {

enum class RejectionCode : uint8_t {
  kInvalidField = 1,
  kMissingField = 2,
  kNotFound = 3,
  kStepNotFound = 4,
  kDuplicateId = 5,
  kInvalidTransition = 6,
  kLeaseMismatch = 7,
  kHandleMismatch = 8,
  kCancelled = 9,
  kAttemptsExhausted = 10,
  kStepRunning = 11,
  kTargetBusy = 12,
  kStaleSync = 13,
  kConnectorPaused = 14,
  kConnectorDeleting = 15,
  kSyncInProgress = 16,
  kNoSyncInProgress = 17,
  kSyncRunning = 18,
};

inline constexpr RejectionCode kAllRejectionCodes[] = {
    RejectionCode::kInvalidField,      RejectionCode::kMissingField,
    RejectionCode::kNotFound,          RejectionCode::kStepNotFound,
    RejectionCode::kDuplicateId,       RejectionCode::kInvalidTransition,
    RejectionCode::kLeaseMismatch,     RejectionCode::kHandleMismatch,
    RejectionCode::kCancelled,         RejectionCode::kAttemptsExhausted,
    RejectionCode::kStepRunning,       RejectionCode::kTargetBusy,
    RejectionCode::kStaleSync,         RejectionCode::kConnectorPaused,
    RejectionCode::kConnectorDeleting, RejectionCode::kSyncInProgress,
    RejectionCode::kNoSyncInProgress,  RejectionCode::kSyncRunning,
};

// The code as the error JSON spells it ("invalid_transition").
constexpr std::string_view code_name(RejectionCode code) {
  switch (code) {
    case RejectionCode::kInvalidField:
      return "invalid_field";
    case RejectionCode::kMissingField:
      return "missing_field";
    case RejectionCode::kNotFound:
      return "not_found";
    case RejectionCode::kStepNotFound:
      return "step_not_found";
    case RejectionCode::kDuplicateId:
      return "duplicate_id";
    case RejectionCode::kInvalidTransition:
      return "invalid_transition";
    case RejectionCode::kLeaseMismatch:
      return "lease_mismatch";
    case RejectionCode::kHandleMismatch:
      return "handle_mismatch";
    case RejectionCode::kCancelled:
      return "cancelled";
    case RejectionCode::kAttemptsExhausted:
      return "attempts_exhausted";
    case RejectionCode::kStepRunning:
      return "step_running";
    case RejectionCode::kTargetBusy:
      return "target_busy";
    case RejectionCode::kStaleSync:
      return "stale_sync";
    case RejectionCode::kConnectorPaused:
      return "connector_paused";
    case RejectionCode::kConnectorDeleting:
      return "connector_deleting";
    case RejectionCode::kSyncInProgress:
      return "sync_in_progress";
    case RejectionCode::kNoSyncInProgress:
      return "no_sync_in_progress";
    case RejectionCode::kSyncRunning:
      return "sync_running";
  }
  return "";
}

}  // namespace runledger
