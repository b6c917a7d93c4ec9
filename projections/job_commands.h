// The job's transition table as data (docs/domain.md "Jobs"), in two
// halves that say the same machine from its two ends:
//  - kCommandRules: for each command, the states of the latest attempt that
//    accept it. The deciders' gate (worker_gate), the `allowed` list of every
//    refusal and the tests that hold the deciders to it read it.
//  - kEventRules: for each event, the states of the latest attempt it may be
//    recorded in and the state it leaves it in: the attempt's legal exits.
//    The transition checker of `runledger verify` reads it.
// tests/tools/transition_check_test.cc holds them together: every event the
// deciders emit, from every state a command accepts, is one the event table
// allows, and the fold leaves the attempt where the table says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "events/event_generated.h"
#include "projections/event_types.h"
#include "projections/job.h"

namespace runledger::jobs::detail {

// Command names as `allowed` lists them (the HTTP paths' last segments).
inline constexpr std::string_view kCmdClaim = "claim";
inline constexpr std::string_view kCmdHeartbeat = "heartbeat";
inline constexpr std::string_view kCmdRelease = "release";
inline constexpr std::string_view kCmdStart = "start";
inline constexpr std::string_view kCmdStepStart = "step-start";
inline constexpr std::string_view kCmdStepDone = "step-done";
inline constexpr std::string_view kCmdStepFailed = "step-failed";
inline constexpr std::string_view kCmdCancel = "cancel";
inline constexpr std::string_view kCmdCancelAck = "cancel-ack";
inline constexpr std::string_view kCmdOutcomeUnknown = "outcome-unknown";
inline constexpr std::string_view kCmdReattach = "reattach";
inline constexpr std::string_view kCmdRerun = "rerun";
inline constexpr std::string_view kCmdYield = "yield";

constexpr uint16_t state_bit(AttemptState s) {
  return static_cast<uint16_t>(1u << static_cast<unsigned>(s));
}

struct CommandRule {
  std::string_view command;
  uint16_t states;  // state_bit() of each state that accepts it
  // Only a cancel that was requested can be acknowledged.
  bool needs_cancel_requested = false;
};

inline constexpr uint16_t kHeld =
    state_bit(AttemptState::kLeased) | state_bit(AttemptState::kRunning);
inline constexpr uint16_t kOver =
    state_bit(AttemptState::kSucceeded) | state_bit(AttemptState::kFailed) |
    state_bit(AttemptState::kCancelled) | state_bit(AttemptState::kYielded);

// In the order `allowed` lists them. STALE accepts only a reattach: its
// outcome is resolved before anything else (and it may not be cancelled).
inline constexpr CommandRule kCommandRules[] = {
    {kCmdClaim, state_bit(AttemptState::kQueued)},
    {kCmdHeartbeat, kHeld},
    {kCmdRelease, state_bit(AttemptState::kLeased)},
    {kCmdStart, state_bit(AttemptState::kLeased)},
    {kCmdStepStart, state_bit(AttemptState::kRunning)},
    {kCmdStepDone, state_bit(AttemptState::kRunning)},
    {kCmdStepFailed, state_bit(AttemptState::kRunning)},
    {kCmdCancel, state_bit(AttemptState::kQueued) | kHeld},
    {kCmdOutcomeUnknown, state_bit(AttemptState::kRunning)},
    {kCmdReattach, state_bit(AttemptState::kRunning) | state_bit(AttemptState::kStale)},
    {kCmdYield, state_bit(AttemptState::kRunning)},
    {kCmdRerun, kOver},
    {kCmdCancelAck, kHeld, /*needs_cancel_requested=*/true},
};

// What an event of `type` may be recorded in and leaves behind, as states of
// the job's latest attempt (a retry, rerun or yield opens a new one).
struct EventRule {
  fb::Payload type;
  uint16_t from;  // state_bit() of each; 0 for the event that creates the job
  uint16_t to;    // state_bit() of each it may leave; kUnchanged: it stays
};

inline constexpr uint16_t kUnchanged = 0;

inline constexpr EventRule kEventRules[] = {
    {fb::Payload::JobEnqueued, 0, state_bit(AttemptState::kQueued)},
    {fb::Payload::JobLeased, state_bit(AttemptState::kQueued), state_bit(AttemptState::kLeased)},
    {fb::Payload::LeaseRenewed, kHeld, kUnchanged},
    {fb::Payload::LeaseReleased, state_bit(AttemptState::kLeased),
     state_bit(AttemptState::kQueued)},
    // A RUNNING attempt stays RUNNING until the AttemptStale of the same
    // command; a LEASED one is QUEUED again.
    {fb::Payload::LeaseExpired, kHeld,
     state_bit(AttemptState::kQueued) | state_bit(AttemptState::kRunning)},
    {fb::Payload::JobStarted, state_bit(AttemptState::kLeased), state_bit(AttemptState::kRunning)},
    {fb::Payload::StepStarted, state_bit(AttemptState::kRunning), kUnchanged},
    // A STALE attempt's step ends too: a reattach's observed exit of it.
    {fb::Payload::StepSucceeded,
     state_bit(AttemptState::kRunning) | state_bit(AttemptState::kStale), kUnchanged},
    {fb::Payload::StepFailed, state_bit(AttemptState::kRunning) | state_bit(AttemptState::kStale),
     kUnchanged},
    {fb::Payload::CancelRequested, kHeld, kUnchanged},
    // STALE: at the boundary a reattach's observed exit of a step makes.
    {fb::Payload::AttemptCancelled,
     state_bit(AttemptState::kQueued) | kHeld | state_bit(AttemptState::kStale),
     state_bit(AttemptState::kCancelled)},
    {fb::Payload::AttemptSucceeded, state_bit(AttemptState::kRunning),
     state_bit(AttemptState::kSucceeded)},
    {fb::Payload::AttemptFailed, state_bit(AttemptState::kRunning),
     state_bit(AttemptState::kFailed)},
    {fb::Payload::RetryScheduled, state_bit(AttemptState::kFailed),
     state_bit(AttemptState::kQueued)},
    {fb::Payload::RerunRequested, kOver, state_bit(AttemptState::kQueued)},
    {fb::Payload::AttemptStale, state_bit(AttemptState::kRunning), state_bit(AttemptState::kStale)},
    {fb::Payload::ExecutionReattached,
     state_bit(AttemptState::kRunning) | state_bit(AttemptState::kStale),
     state_bit(AttemptState::kRunning)},
    // With the evidence of a hold release, STALE only (the checker says so).
    {fb::Payload::AttemptResolved,
     state_bit(AttemptState::kRunning) | state_bit(AttemptState::kStale),
     state_bit(AttemptState::kSucceeded) | state_bit(AttemptState::kFailed)},
    {fb::Payload::AttemptYielded, state_bit(AttemptState::kRunning),
     state_bit(AttemptState::kQueued)},
};

// The rule of a job event; nullptr for any other type.
constexpr const EventRule* event_rule(fb::Payload type) {
  for (const EventRule& rule : kEventRules) {
    if (rule.type == type) return &rule;
  }
  return nullptr;
}

// Every job event has its rule, and only one (event_types.h lists them).
constexpr bool each_job_event_has_one_rule() {
  size_t job_types = 0;
  for (fb::Payload type : kEventTypes) {
    if (event_stream_kind(type) != StreamKind::kJob) continue;
    ++job_types;
    size_t rules = 0;
    for (const EventRule& rule : kEventRules) rules += rule.type == type ? 1 : 0;
    if (rules != 1) return false;
  }
  return job_types == std::size(kEventRules);
}
static_assert(each_job_event_has_one_rule(), "each job event type has exactly one EventRule");

// Whether an attempt in `state` accepts `command` (for a cancel-ack, a cancel
// must have been requested besides: the decider says so in its refusal).
bool state_accepts(AttemptState state, std::string_view command);

// The commands `a` (the latest attempt) accepts now, in the table's order.
std::vector<std::string> allowed_commands(const Attempt& a);

}  // namespace runledger::jobs::detail
