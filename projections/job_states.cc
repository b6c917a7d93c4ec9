// Names of attempt and step states as the log, the views and the metrics
// spell them. They are part of the HTTP contract: never rename one.
#include "projections/job.h"

namespace runledger::jobs {

namespace {

constexpr AttemptState kAllAttemptStates[] = {
    AttemptState::kQueued,    AttemptState::kLeased,    AttemptState::kRunning,
    AttemptState::kStale,     AttemptState::kSucceeded, AttemptState::kFailed,
    AttemptState::kCancelled, AttemptState::kYielded,
};
constexpr StepState kAllStepStates[] = {StepState::kPending, StepState::kRunning, StepState::kDone,
                                        StepState::kFailed, StepState::kReused};

}  // namespace

const char* to_string(AttemptState s) {
  switch (s) {
    case AttemptState::kQueued:
      return "QUEUED";
    case AttemptState::kLeased:
      return "LEASED";
    case AttemptState::kRunning:
      return "RUNNING";
    case AttemptState::kStale:
      return "STALE";
    case AttemptState::kSucceeded:
      return "SUCCEEDED";
    case AttemptState::kFailed:
      return "FAILED";
    case AttemptState::kCancelled:
      return "CANCELLED";
    case AttemptState::kYielded:
      return "YIELDED";
  }
  return "UNKNOWN";
}

const char* to_string(StepState s) {
  switch (s) {
    case StepState::kPending:
      return "PENDING";
    case StepState::kRunning:
      return "RUNNING";
    case StepState::kDone:
      return "DONE";
    case StepState::kFailed:
      return "FAILED";
    case StepState::kReused:
      return "REUSED";
  }
  return "UNKNOWN";
}

std::optional<AttemptState> attempt_state_from(std::string_view s) {
  for (AttemptState st : kAllAttemptStates) {
    if (s == to_string(st)) return st;
  }
  return std::nullopt;
}

std::optional<StepState> step_state_from(std::string_view s) {
  for (StepState st : kAllStepStates) {
    if (s == to_string(st)) return st;
  }
  return std::nullopt;
}

bool is_terminal(AttemptState s) {
  switch (s) {
    case AttemptState::kQueued:
    case AttemptState::kLeased:
    case AttemptState::kRunning:
    case AttemptState::kStale:
      return false;
    case AttemptState::kSucceeded:
    case AttemptState::kFailed:
    case AttemptState::kCancelled:
    case AttemptState::kYielded:
      return true;
  }
  return false;
}

bool valid_execution_handle(std::string_view handle) {
  if (handle.empty() || handle.size() > kExecutionHandleCharsMax) return false;
  for (char c : handle) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E) return false;
  }
  return true;
}

std::map<std::string, size_t> zero_counts_by_state() {
  std::map<std::string, size_t> counts;
  for (AttemptState st : kAllAttemptStates) counts[to_string(st)] = 0;
  return counts;
}

}  // namespace runledger::jobs
