// Helpers shared by the job deciders (job_decide_*.cc): lookups, the
// refusals every command answers the same way, and the facts an attempt
// records when it ends. Internal to the job model; pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "projections/job.h"
#include "projections/job_commands.h"
#include "projections/state.h"

namespace runledger::jobs::detail {

const Job* find_job(const State& s, const std::string& id);

Decision not_found(const std::string& job_id);
// 409 invalid_transition naming the state and what it allows; `why` (may be
// empty) says more when the state is right but something else is not.
Decision refused(const Job& j, std::string_view command, std::string_view why = {});
Decision lease_mismatch(const Job& j);
// 422 invalid_field with extra {"field": field}.
Decision invalid_field(std::string_view field, std::string message);

bool token_matches(const Attempt& a, const std::string& lease_token);

// The preamble of every worker command: the job exists, its latest attempt's
// state accepts `command` (kCommandRules), and `lease_token` is the current
// lease's. Returns the job, or nullptr with `*refusal` set.
const Job* worker_gate(const State& s, const std::string& job_id, std::string_view command,
                       const std::string& lease_token, Decision* refusal);

// Resolves an optional lease length against the policy; false (with
// `*refusal` set) when it is out of bounds.
bool resolve_lease_s(const std::optional<int64_t>& requested, int64_t fallback_s,
                     const Policy& policy, int64_t* lease_s, Decision* refusal);

// The step of the attempt named `name`, or nullptr.
const Step* find_step(const Attempt& a, std::string_view name);
// The first step, in plan order, in `state`, or nullptr.
const Step* first_in_state(const Attempt& a, StepState state);
// 404 step_not_found naming the step.
Decision step_not_found(const Job& j, const std::string& step);

// Attempts that count against max_attempts: every one but a YIELDED one.
int counted_attempts(const Job& j);
// The RetryScheduled that docs/domain.md 1.5's rule gives the latest attempt,
// which the same command ends FAILED: when the failure is retryable, no
// cancel was requested and attempts remain; nullopt otherwise. It reuses
// every step complete in the failed attempt. `worker` as for cancellation().
std::optional<fb::RetryScheduledT> retry_after_failure(const Job& j, bool retryable,
                                                       const Context& ctx, std::string_view worker);

// The last step, in plan order, whose work is complete (DONE or REUSED).
std::string last_completed_step(const Attempt& a);
// Steps whose work is complete (DONE or REUSED), in plan order.
std::vector<std::string> completed_steps(const Attempt& a);
// True when any step ran in this attempt (it may have left partial output).
bool any_step_started(const Attempt& a);

// The AttemptCancelled event that ends the latest attempt. `worker`: the
// worker whose command ends it (docs/domain.md: events of worker commands carry
// the worker id), empty for an operator's or the engine's.
fb::AttemptCancelledT cancellation(const Job& j, std::string_view cause, std::string_view worker);

// Cuts text to at most max_bytes without splitting a UTF-8 character.
std::string cut_utf8(std::string_view text, size_t max_bytes);

// The id of an open EXECUTION_STATE_UNKNOWN hold on `target`, or nullptr.
const std::string* blocking_hold_id(const State& s, const std::string& target);
// True when the hold is known and not released.
bool hold_open(const State& s, const std::string& hold_id);

// Appends AttemptStale for the latest attempt and the HoldPlaced that goes
// with it (on the new hold's own stream). `worker` as for cancellation().
void emit_stale(Decision& d, const Job& j, const Context& ctx, std::string_view cause,
                std::string_view hold_kind, std::string_view detail, std::string_view worker);

}  // namespace runledger::jobs::detail
