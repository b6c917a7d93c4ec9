// Deciders of the work itself: start and the pipeline steps (docs/domain.md 1.2,
// 1.5), including the retry a retryable step failure schedules. A requested
// cancel is honoured at every boundary these commands cross.
#include <fmt/format.h>

#include "projections/job_decide_common.h"

namespace runledger::jobs {

namespace {

using detail::find_step;
using detail::first_in_state;
using detail::step_not_found;

// A boundary met with a cancel pending: the attempt ends here, and the
// worker is told to stop (the events are appended although the command is
// refused). The reason reads as in the job's view: null when none was given.
Decision cancelled_at(const Job& j, std::string_view cause) {
  const std::string& reason = j.latest().cancel_reason;
  Decision d = Decision::reject(
      RejectionCode::kCancelled,
      fmt::format("job {}: cancel was requested, attempt {} is now CANCELLED", j.id,
                  j.latest().number),
      {{"state", to_string(AttemptState::kCancelled)},
       {"cancel_reason", reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(reason)}});
  d.emit(job_stream(j.id), detail::cancellation(j, cause, j.latest().worker));
  return d;
}

// The gate of step commands: a RUNNING attempt, the current token, a step
// of the plan. Returns the step, or nullptr with `*refusal` set.
const Step* step_gate(const State& s, const std::string& job_id, const std::string& step,
                      std::string_view command, const std::string& lease_token, const Job** job,
                      Decision* refusal) {
  *job = detail::worker_gate(s, job_id, command, lease_token, refusal);
  if (*job == nullptr) return nullptr;
  const Step* st = find_step((*job)->latest(), step);
  if (st == nullptr) *refusal = step_not_found(**job, step);
  return st;
}

Decision step_not_running(const Job& j, std::string_view command, const Step& st) {
  return detail::refused(j, fmt::format("{} {}", command, st.name),
                         fmt::format("step {} is {}", st.name, to_string(st.state)));
}

}  // namespace

Decision decide(const State& s, const Start& c, const Context& /*ctx*/) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdStart, c.lease_token, &d);
  if (j == nullptr) return d;
  if (!c.execution_handle.empty() && !valid_execution_handle(c.execution_handle)) {
    return detail::invalid_field(
        "execution_handle", fmt::format("execution_handle must be 1-{} printable ASCII characters",
                                        kExecutionHandleCharsMax));
  }
  const Attempt& a = j->latest();
  if (a.cancel_requested) return cancelled_at(*j, "start");
  fb::JobStartedT ev;
  ev.attempt = a.number;
  ev.worker = a.worker;
  ev.execution_handle = c.execution_handle;
  d.emit(job_stream(j->id), std::move(ev));
  // A rerun that reuses every step has no work left: it is complete at once.
  if (first_in_state(a, StepState::kPending) == nullptr) {
    fb::AttemptSucceededT done;
    done.attempt = a.number;
    done.worker = a.worker;
    d.emit(job_stream(j->id), std::move(done));
  }
  return d;
}

Decision decide(const State& s, const StepStart& c, const Context& /*ctx*/) {
  Decision d;
  const Job* j = nullptr;
  const Step* st = step_gate(s, c.job_id, c.step, detail::kCmdStepStart, c.lease_token, &j, &d);
  if (st == nullptr) return d;
  const Attempt& a = j->latest();
  std::string command = fmt::format("{} {}", detail::kCmdStepStart, c.step);
  if (const Step* running = first_in_state(a, StepState::kRunning)) {
    return detail::refused(*j, command, fmt::format("step {} is RUNNING", running->name));
  }
  const Step* next = first_in_state(a, StepState::kPending);
  if (next != st) {
    std::string why = fmt::format("step {} is {}", st->name, to_string(st->state));
    if (next != nullptr) why += fmt::format(", the next step is {}", next->name);
    return detail::refused(*j, command, why);
  }
  if (a.cancel_requested) return cancelled_at(*j, "step_boundary");
  fb::StepStartedT ev;
  ev.attempt = a.number;
  ev.step = c.step;
  ev.worker = a.worker;
  d.emit(job_stream(j->id), std::move(ev));
  return d;
}

Decision decide(const State& s, const StepDone& c, const Context& /*ctx*/) {
  Decision d;
  const Job* j = nullptr;
  const Step* st = step_gate(s, c.job_id, c.step, detail::kCmdStepDone, c.lease_token, &j, &d);
  if (st == nullptr) return d;
  if (st->state != StepState::kRunning) return step_not_running(*j, detail::kCmdStepDone, *st);
  if (c.output.size() > kOutputBytesMax) {
    return detail::invalid_field("output",
                                 fmt::format("output is larger than {} bytes", kOutputBytesMax));
  }
  const Attempt& a = j->latest();
  fb::StepSucceededT ev;
  ev.attempt = a.number;
  ev.step = c.step;
  ev.worker = a.worker;
  ev.output = c.output;
  d.emit(job_stream(j->id), std::move(ev));
  if (first_in_state(a, StepState::kPending) == nullptr) {
    // The last step is done: the work is complete, even with a cancel pending.
    fb::AttemptSucceededT done;
    done.attempt = a.number;
    done.worker = a.worker;
    d.emit(job_stream(j->id), std::move(done));
  } else if (a.cancel_requested) {
    fb::AttemptCancelledT cancel = detail::cancellation(*j, "step_boundary", a.worker);
    cancel.last_completed_step = c.step;
    cancel.cleanup_needed = true;
    d.emit(job_stream(j->id), std::move(cancel));
  }
  return d;
}

Decision decide(const State& s, const StepFail& c, const Context& ctx) {
  Decision d;
  const Job* j = nullptr;
  const Step* st = step_gate(s, c.job_id, c.step, detail::kCmdStepFailed, c.lease_token, &j, &d);
  if (st == nullptr) return d;
  if (st->state != StepState::kRunning) return step_not_running(*j, detail::kCmdStepFailed, *st);
  const Attempt& a = j->latest();
  std::string error = detail::cut_utf8(c.error, kErrorBytesMax);
  fb::StepFailedT failed;
  failed.attempt = a.number;
  failed.step = c.step;
  failed.worker = a.worker;
  failed.error = error;
  failed.retryable = c.retryable;
  d.emit(job_stream(j->id), std::move(failed));
  fb::AttemptFailedT ended;
  ended.attempt = a.number;
  ended.error = fmt::format("step {} failed: {}", c.step, error);
  ended.worker = a.worker;
  d.emit(job_stream(j->id), std::move(ended));
  if (auto next = detail::retry_after_failure(*j, c.retryable, ctx, a.worker)) {
    d.emit(job_stream(j->id), std::move(*next));
  }
  return d;
}

}  // namespace runledger::jobs
