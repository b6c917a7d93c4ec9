// Deciders for work whose fate is uncertain (docs/domain.md 1.8): a worker's
// "outcome unknown" report, and reattach by a worker that lost track of an
// execution. Neither ever launches the work again: reattach takes over the
// running execution or records how it (or one of its steps) ended, and
// releases the hold placed when the attempt went STALE.
#include <fmt/format.h>

#include "base/sha256.h"
#include "projections/job_decide_common.h"

namespace runledger::jobs {

namespace {

constexpr int64_t kMsPerS = 1000;
constexpr std::string_view kObservedRunning = "running";
constexpr std::string_view kObservedExited = "exited";

// The hold of the attempt's staleness, when it is still open.
std::string open_stale_hold(const State& s, const Attempt& a) {
  return detail::hold_open(s, a.stale_hold_id) ? a.stale_hold_id : std::string();
}

// Released by the reattaching worker's command, which the event names.
void emit_hold_released(Decision& d, const std::string& hold_id, std::string note, bool stopped,
                        std::string outcome, const std::string& worker) {
  fb::HoldReleasedT ev;
  ev.note = std::move(note);
  ev.execution_stopped = stopped;
  ev.outcome = std::move(outcome);
  ev.worker = worker;
  d.emit(hold_stream(hold_id), std::move(ev));
}

// The lease a reattach hands out: the ExecutionReattached that puts the
// attempt RUNNING under the command's fresh token (the old one stops
// working), or a refusal when the length is out of bounds or another
// attempt holds the target. `hold_id`: the staleness hold it releases.
Decision reattached(const State& s, const Job& j, const Reattach& c, const Context& ctx,
                    const std::string& hold_id, fb::ExecutionReattachedT* ev) {
  Decision d;
  int64_t lease_s = 0;
  if (!detail::resolve_lease_s(c.lease_s, ctx.policy->lease_default_s, *ctx.policy, &lease_s, &d)) {
    return d;
  }
  if (c.lease_token.empty()) return detail::invalid_field("lease_token", "lease_token is empty");
  const Attempt& a = j.latest();
  auto holder = s.jobs.holder.find(j.target);
  if (holder != s.jobs.holder.end() && holder->second != j.id) {
    return Decision::reject(
        RejectionCode::kTargetBusy,
        fmt::format("job {}: target {} is held by job {}", j.id, j.target, holder->second),
        {{"job", holder->second}});
  }
  ev->attempt = a.number;
  ev->worker = c.worker;
  ev->execution_handle = c.execution_handle;
  ev->lease_token_sha256 = sha256_hex(c.lease_token);
  ev->lease_s = static_cast<int32_t>(lease_s);
  ev->lease_expires_at_ms = ctx.now_ms + lease_s * kMsPerS;
  ev->previous_state = to_string(a.state);
  ev->released_hold_id = hold_id;
  return d;
}

Decision reattach_running(const State& s, const Job& j, const Reattach& c, const Context& ctx) {
  std::string hold_id = open_stale_hold(s, j.latest());
  fb::ExecutionReattachedT ev;
  Decision d = reattached(s, j, c, ctx, hold_id, &ev);
  if (d.rejection) return d;
  d.emit(job_stream(j.id), std::move(ev));
  if (!hold_id.empty()) {
    emit_hold_released(d, hold_id,
                       fmt::format("reattached: execution observed running by worker {}", c.worker),
                       false, "", c.worker);
  }
  return d;
}

// The AttemptResolved of an observed exit: of the whole execution, or of
// the step `step` when it is not empty.
fb::AttemptResolvedT resolution(const Attempt& a, const Reattach& c, const std::string& hold_id) {
  const int exit_code = *c.exit_code;
  fb::AttemptResolvedT ev;
  ev.attempt = a.number;
  ev.outcome = to_string(exit_code == 0 ? AttemptState::kSucceeded : AttemptState::kFailed);
  ev.exit_code = exit_code;
  ev.has_exit_code = true;
  ev.evidence = kObservedExited;
  ev.hold_id = hold_id;
  ev.worker = c.worker;
  ev.step = c.step;
  return ev;
}

Decision resolve_exited(const State& s, const Job& j, const Reattach& c) {
  const Attempt& a = j.latest();
  int exit_code = *c.exit_code;
  std::string hold_id = open_stale_hold(s, a);
  Decision d;
  fb::AttemptResolvedT ev = resolution(a, c, hold_id);
  std::string outcome = ev.outcome;
  d.emit(job_stream(j.id), std::move(ev));
  if (!hold_id.empty()) {
    emit_hold_released(
        d, hold_id,
        fmt::format("reattached: execution observed exited with code {} by worker {}", exit_code,
                    c.worker),
        true, outcome, c.worker);
  }
  return d;
}

// An observed exit of one RUNNING step (docs/domain.md 1.8): evidence about that
// step alone. Exit 0: the step is DONE and the attempt SUCCEEDED after the
// last step, CANCELLED at this boundary when a cancel was requested, else
// RUNNING on under the command's fresh lease. Any other code: the step and
// the attempt FAILED, and a retry by 1.5's rule. The staleness hold, if
// open, is released with the same evidence.
Decision step_exited(const State& s, const Job& j, const Reattach& c, const Context& ctx) {
  const Attempt& a = j.latest();
  const Step* st = detail::find_step(a, c.step);
  if (st == nullptr) return detail::step_not_found(j, c.step);
  if (st->state != StepState::kRunning) {
    return detail::refused(j, fmt::format("{} {}", detail::kCmdReattach, st->name),
                           fmt::format("step {} is {}", st->name, to_string(st->state)));
  }
  if (c.output.size() > kOutputBytesMax) {
    return detail::invalid_field("output",
                                 fmt::format("output is larger than {} bytes", kOutputBytesMax));
  }
  const int exit_code = *c.exit_code;
  const std::string hold_id = open_stale_hold(s, a);
  const std::string evidence = fmt::format(
      "reattached: step {} observed exited with code {} by worker {}", c.step, exit_code, c.worker);
  Decision d;
  if (exit_code != 0) {
    fb::StepFailedT failed;
    failed.attempt = a.number;
    failed.step = c.step;
    failed.worker = c.worker;
    failed.error = fmt::format("exited with code {}", exit_code);
    failed.retryable = c.retryable;
    d.emit(job_stream(j.id), std::move(failed));
    d.emit(job_stream(j.id), resolution(a, c, hold_id));
    if (auto next = detail::retry_after_failure(j, c.retryable, ctx, c.worker)) {
      d.emit(job_stream(j.id), std::move(*next));
    }
    if (!hold_id.empty()) {
      emit_hold_released(d, hold_id, evidence, true, to_string(AttemptState::kFailed), c.worker);
    }
    return d;
  }
  const bool last = detail::first_in_state(a, StepState::kPending) == nullptr;
  fb::ExecutionReattachedT lease;
  if (!last && !a.cancel_requested) {
    // Checked before anything is emitted: a refusal changes nothing.
    d = reattached(s, j, c, ctx, hold_id, &lease);
    if (d.rejection) return d;
  }
  fb::StepSucceededT done;
  done.attempt = a.number;
  done.step = c.step;
  done.worker = c.worker;
  done.output = c.output;
  d.emit(job_stream(j.id), std::move(done));
  if (last) {
    // The last step is done: the work is complete, even with a cancel pending.
    d.emit(job_stream(j.id), resolution(a, c, hold_id));
    if (!hold_id.empty()) {
      emit_hold_released(d, hold_id, evidence, true, to_string(AttemptState::kSucceeded), c.worker);
    }
  } else if (a.cancel_requested) {
    fb::AttemptCancelledT cancel = detail::cancellation(j, "step_boundary", c.worker);
    cancel.last_completed_step = c.step;
    cancel.cleanup_needed = true;
    d.emit(job_stream(j.id), std::move(cancel));
    if (!hold_id.empty()) emit_hold_released(d, hold_id, evidence, true, "", c.worker);
  } else {
    d.emit(job_stream(j.id), std::move(lease));
    if (!hold_id.empty()) emit_hold_released(d, hold_id, evidence, false, "", c.worker);
  }
  return d;
}

}  // namespace

Decision decide(const State& s, const OutcomeUnknown& c, const Context& ctx) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdOutcomeUnknown, c.lease_token, &d);
  if (j == nullptr) return d;
  if (c.kind != holds::kExecutionStateUnknown && c.kind != holds::kResultUnknown) {
    return detail::invalid_field(
        "kind",
        fmt::format("kind must be {} or {}", holds::kExecutionStateUnknown, holds::kResultUnknown));
  }
  std::string why = fmt::format("worker {} reported {}", j->latest().worker, c.kind);
  if (!c.detail.empty()) why += ": " + detail::cut_utf8(c.detail, kErrorBytesMax);
  detail::emit_stale(d, *j, ctx, "outcome_unknown", c.kind, why, j->latest().worker);
  return d;
}

Decision decide(const State& s, const Reattach& c, const Context& ctx) {
  const Job* j = detail::find_job(s, c.job_id);
  if (j == nullptr) return detail::not_found(c.job_id);
  bool running = c.observed == kObservedRunning;
  if (!running && c.observed != kObservedExited) {
    return detail::invalid_field("observed", "observed must be running or exited");
  }
  if (!running && !c.exit_code.has_value()) {
    return Decision::reject(RejectionCode::kMissingField,
                            "exit_code is required when observed is exited",
                            {{"field", "exit_code"}});
  }
  if (running && !c.step.empty()) {
    return detail::invalid_field("step",
                                 "step names the step whose exit was observed: it goes "
                                 "with observed exited only");
  }
  if (!valid_execution_handle(c.execution_handle)) {
    return detail::invalid_field(
        "execution_handle", fmt::format("execution_handle must be 1-{} printable ASCII characters",
                                        kExecutionHandleCharsMax));
  }
  const Attempt& a = j->latest();
  if (!detail::state_accepts(a.state, detail::kCmdReattach)) {
    return detail::refused(*j, detail::kCmdReattach);
  }
  if (a.execution_handle.empty() || a.execution_handle != c.execution_handle) {
    return Decision::reject(
        RejectionCode::kHandleMismatch,
        fmt::format("job {}: execution_handle does not match the one attempt {} started with",
                    j->id, a.number));
  }
  if (running) return reattach_running(s, *j, c, ctx);
  return c.step.empty() ? resolve_exited(s, *j, c) : step_exited(s, *j, c, ctx);
}

}  // namespace runledger::jobs
