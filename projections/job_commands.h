// The job's transition table as data (docs/domain.md "Jobs"): for each
// command, the states of the latest attempt that accept it. The deciders'
// gate (worker_gate), the `allowed` list of every refusal and the tests that
// hold the deciders to it all read this one table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// Whether an attempt in `state` accepts `command` (for a cancel-ack, a cancel
// must have been requested besides: the decider says so in its refusal).
bool state_accepts(AttemptState state, std::string_view command);

// The commands `a` (the latest attempt) accepts now, in the table's order.
std::vector<std::string> allowed_commands(const Attempt& a);

}  // namespace runledger::jobs::detail
