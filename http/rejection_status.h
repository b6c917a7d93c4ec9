// The HTTP status of each reason a decider refuses a command
// (docs/api.md "Errors"): 404 for what does not exist, 422 for input a
// decider finds out of range, 409 for what the state does not allow.
#pragma once

#include "projections/rejection_code.h"

namespace runledger::http {

constexpr int http_status(RejectionCode code) {
  switch (code) {
    case RejectionCode::kNotFound:
    case RejectionCode::kStepNotFound:
      return 404;
    case RejectionCode::kInvalidField:
    case RejectionCode::kMissingField:
      return 422;
    case RejectionCode::kDuplicateId:
    case RejectionCode::kInvalidTransition:
    case RejectionCode::kLeaseMismatch:
    case RejectionCode::kHandleMismatch:
    case RejectionCode::kCancelled:
    case RejectionCode::kAttemptsExhausted:
    case RejectionCode::kStepRunning:
    case RejectionCode::kTargetBusy:
    case RejectionCode::kStaleSync:
    case RejectionCode::kConnectorPaused:
    case RejectionCode::kConnectorDeleting:
    case RejectionCode::kSyncInProgress:
    case RejectionCode::kNoSyncInProgress:
    case RejectionCode::kSyncRunning:
      return 409;
  }
  return 500;
}

}  // namespace runledger::http
