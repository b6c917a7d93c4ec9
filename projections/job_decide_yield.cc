// The decider of yield (docs/domain.md 1.9): a worker that is being shut down or
// redeployed hands its RUNNING attempt back between steps. The attempt ends
// YIELDED, costing no attempt, and the next one is QUEUED at once and reuses
// every step that is complete, so the next worker runs no finished step again.
#include <fmt/format.h>

#include "projections/job_decide_common.h"

namespace runledger::jobs {

Decision decide(const State& s, const Yield& c, const Context& /*ctx*/) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdYield, c.lease_token, &d);
  if (j == nullptr) return d;
  if (c.reason.size() > kReasonBytesMax) {
    return detail::invalid_field("reason",
                                 fmt::format("reason is longer than {} bytes", kReasonBytesMax));
  }
  const Attempt& a = j->latest();
  if (const Step* running = detail::first_in_state(a, StepState::kRunning)) {
    return Decision::reject(
        RejectionCode::kStepRunning,
        fmt::format("job {}: step {} of attempt {} is RUNNING: an attempt yields between steps",
                    j->id, running->name, a.number),
        {{"step", running->name}, {"state", to_string(a.state)}});
  }
  // A yield is a step boundary: a requested cancel is honoured there.
  if (a.cancel_requested) {
    d.emit(job_stream(j->id), detail::cancellation(*j, "yield", a.worker));
    return d;
  }
  if (a.number >= kAttemptsMax) {
    return Decision::reject(
        RejectionCode::kAttemptsExhausted,
        fmt::format("job {} has {} attempts, the most a job may have", j->id, kAttemptsMax));
  }
  fb::AttemptYieldedT ev;
  ev.attempt = a.number;
  ev.next_attempt = a.number + 1;
  ev.reason = c.reason;
  ev.reused_steps = detail::completed_steps(a);
  ev.last_completed_step = detail::last_completed_step(a);
  ev.worker = a.worker;
  d.emit(job_stream(j->id), std::move(ev));
  return d;
}

}  // namespace runledger::jobs
