// The job rules of check_transition() (docs/domain.md section 1): each job event
// against the attempt it names. The attempt must be the job's latest (an
// older one is terminal and never changes), in a state the event may leave
// from, and the event must respect the per-target lock and the holds.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "base/assert.h"
#include "projections/event_types.h"
#include "projections/hold.h"
#include "projections/job_commands.h"
#include "projections/job_decide_common.h"
#include "projections/transition_check_internal.h"

namespace runledger::transition_check {

namespace {

using jobs::Attempt;
using jobs::AttemptState;
using jobs::Job;
using jobs::Step;
using jobs::StepState;
using P = fb::Payload;

std::string_view type_of(const fb::Event& e) { return fb::EnumNamePayload(e.payload_type()); }

std::string text(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

std::string state_list(uint16_t states) {
  std::vector<std::string_view> names;
  for (unsigned i = 0; i <= static_cast<unsigned>(AttemptState::kYielded); ++i) {
    const auto st = static_cast<AttemptState>(i);
    if ((states & jobs::detail::state_bit(st)) != 0) names.emplace_back(jobs::to_string(st));
  }
  return fmt::format("{}", fmt::join(names, " or "));
}

// The states of the latest attempt `e` may be recorded in: the job's event
// table (projections/job_commands.h).
uint16_t from_states(const fb::Event& e) {
  const jobs::detail::EventRule* rule = jobs::detail::event_rule(e.payload_type());
  RL_ASSERT(rule != nullptr, "check_on_job() dispatches job events only");
  return rule->from;
}

// The attempt an event names must be the latest: earlier attempts are
// terminal, and a terminal attempt never changes.
Status named_attempt(const fb::Event& e, const Job& j, int number, const Attempt** out) {
  const Attempt& latest = j.latest();
  if (number != latest.number) {
    return forbidden(e, fmt::format("names attempt {}, the latest attempt is {} ({})", number,
                                    latest.number, jobs::to_string(latest.state)));
  }
  *out = &latest;
  return Status::Ok();
}

// The latest attempt is in a state the event's rule leaves from.
Status need_state(const fb::Event& e, const Attempt& a) {
  const uint16_t from = from_states(e);
  if ((from & jobs::detail::state_bit(a.state)) != 0) return Status::Ok();
  return forbidden(e, fmt::format("attempt {} is {}, {} needs {}", a.number,
                                  jobs::to_string(a.state), type_of(e), state_list(from)));
}

// The attempt the payload names (`number`), in a state the event may leave.
Status attempt_in(const fb::Event& e, const Job& j, int number, const Attempt** out) {
  if (Status s = named_attempt(e, j, number, out); !s.ok()) return s;
  return need_state(e, **out);
}

// The same step lookups the deciders make.
using jobs::detail::find_step;
using jobs::detail::first_in_state;

// Invariant 1 of docs/domain.md: one LEASED/RUNNING attempt per target, and no
// work handed out while an EXECUTION_STATE_UNKNOWN hold blocks the target.
Status target_free(const State& s, const fb::Event& e, const Job& j, bool holds_count) {
  auto holder = s.jobs.holder.find(j.target);
  if (holder != s.jobs.holder.end() && holder->second != j.id) {
    return forbidden(e, fmt::format("target {} is held by job {}", j.target, holder->second));
  }
  if (!holds_count) return Status::Ok();
  auto blocking = s.holds.blocking_by_target.find(j.target);
  if (blocking != s.holds.blocking_by_target.end() && !blocking->second.empty()) {
    return forbidden(
        e, fmt::format("target {} is blocked by hold {}", j.target, *blocking->second.begin()));
  }
  return Status::Ok();
}

Status check_enqueued(const fb::Event& e, const Job* existing) {
  const auto* ev = e.payload_as_JobEnqueued();
  if (existing != nullptr) return forbidden(e, "the job already exists");
  if (ev->attempt() != 1) {
    return forbidden(e, fmt::format("a job starts at attempt 1, not {}", ev->attempt()));
  }
  if (text(ev->target()).empty()) return forbidden(e, "the job has no target");
  if (ev->plan() == nullptr || ev->plan()->size() == 0) return forbidden(e, "the plan is empty");
  return Status::Ok();
}

Status check_leased(const State& s, const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_JobLeased();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) return st;
  if (e.recorded_at_ms() < a->not_before_ms) {
    return forbidden(
        e, fmt::format("attempt {} may not start before {} ms", a->number, a->not_before_ms));
  }
  return target_free(s, e, j, /*holds_count=*/true);
}

Status check_lease_expired(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_LeaseExpired();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) {
    return st;
  }
  if (e.recorded_at_ms() < a->lease_expires_at_ms) {
    return forbidden(e, fmt::format("the lease of attempt {} runs until {} ms, recorded at {} ms",
                                    a->number, a->lease_expires_at_ms, e.recorded_at_ms()));
  }
  if (text(ev->state()) != jobs::to_string(a->state)) {
    return forbidden(e, fmt::format("records state {}, attempt {} is {}", text(ev->state()),
                                    a->number, jobs::to_string(a->state)));
  }
  return Status::Ok();
}

Status check_started(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  if (Status st = attempt_in(e, j, e.payload_as_JobStarted()->attempt(), &a); !st.ok()) {
    return st;
  }
  // A start with a cancel pending is refused and cancels the attempt instead.
  if (a->cancel_requested) return forbidden(e, "cancel was requested: the attempt may not start");
  return Status::Ok();
}

Status check_step_started(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_StepStarted();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) return st;
  const std::string name = text(ev->step());
  if (find_step(*a, name) == nullptr) return forbidden(e, "step " + name + " is not in the plan");
  if (const Step* running = first_in_state(*a, StepState::kRunning)) {
    return forbidden(e, "step " + running->name + " is still RUNNING");
  }
  const Step* next = first_in_state(*a, StepState::kPending);
  if (next == nullptr || next->name != name) {
    return forbidden(e, fmt::format("step {} is not the next PENDING step ({})", name,
                                    next == nullptr ? "none" : next->name));
  }
  if (a->cancel_requested) return forbidden(e, "cancel was requested: no step may start");
  return Status::Ok();
}

// StepSucceeded and StepFailed: the step named must be RUNNING. A STALE
// attempt's step may end too: a reattach's observed exit of that step.
template <typename T>
Status check_step_ended(const fb::Event& e, const Job& j, const T* ev) {
  const Attempt* a = nullptr;
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) {
    return st;
  }
  const Step* step = find_step(*a, text(ev->step()));
  if (step == nullptr) return forbidden(e, "step " + text(ev->step()) + " is not in the plan");
  if (step->state != StepState::kRunning) {
    return forbidden(
        e, fmt::format("step {} is {}, not RUNNING", step->name, jobs::to_string(step->state)));
  }
  return Status::Ok();
}

Status check_cancel_requested(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_CancelRequested();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) {
    return st;
  }
  if (a->cancel_requested) return forbidden(e, "cancel was already requested");
  return Status::Ok();
}

Status check_cancelled(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_AttemptCancelled();
  // STALE: at the boundary a reattach's observed exit of a step makes.
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) {
    return st;
  }
  // Work that was handed out ends only where the worker honours a request.
  if (a->state != AttemptState::kQueued && !a->cancel_requested) {
    return forbidden(e, fmt::format("attempt {} is {} and no cancel was requested", a->number,
                                    jobs::to_string(a->state)));
  }
  return Status::Ok();
}

Status check_succeeded(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_AttemptSucceeded();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) return st;
  for (const Step& st : a->steps) {
    if (st.state != StepState::kDone && st.state != StepState::kReused) {
      return forbidden(e, fmt::format("step {} is {}: no success before every step is done",
                                      st.name, jobs::to_string(st.state)));
    }
  }
  return Status::Ok();
}

// Attempt `next` follows the latest attempt, within the bound on attempts,
// and reuses only steps the latest attempt completed.
Status opens_next(const fb::Event& e, const Job& j, int previous, int next,
                  const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* reused) {
  const Attempt& latest = j.latest();
  if (previous != latest.number || next != latest.number + 1) {
    return forbidden(e, fmt::format("opens attempt {} after {}, the latest attempt is {}", next,
                                    previous, latest.number));
  }
  if (next > jobs::kAttemptsMax) {
    return forbidden(e, fmt::format("a job has at most {} attempts", jobs::kAttemptsMax));
  }
  if (reused == nullptr) return Status::Ok();
  for (const auto* name : *reused) {
    const Step* st = find_step(latest, name->string_view());
    if (st == nullptr || (st->state != StepState::kDone && st->state != StepState::kReused)) {
      return forbidden(e, fmt::format("reuses step {}, which attempt {} did not complete",
                                      name->string_view(), latest.number));
    }
  }
  return Status::Ok();
}

// RetryScheduled and RerunRequested open attempt latest+1 after a terminal
// one (a FAILED one for a retry).
template <typename T>
Status check_new_attempt(const fb::Event& e, const Job& j, const T* ev) {
  if (Status st = need_state(e, j.latest()); !st.ok()) return st;
  return opens_next(e, j, ev->previous_attempt(), ev->attempt(), ev->reused_steps());
}

// AttemptYielded ends a RUNNING attempt between steps and opens the next.
Status check_yielded(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_AttemptYielded();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) return st;
  if (const Step* running = first_in_state(*a, StepState::kRunning)) {
    return forbidden(e, "step " + running->name + " is still RUNNING");
  }
  // A yield with a cancel pending ends the attempt CANCELLED instead.
  if (a->cancel_requested) return forbidden(e, "cancel was requested: the attempt may not yield");
  return opens_next(e, j, ev->attempt(), ev->next_attempt(), ev->reused_steps());
}

Status check_retry(const fb::Event& e, const Job& j) {
  const auto* ev = e.payload_as_RetryScheduled();
  if (Status st = check_new_attempt(e, j, ev); !st.ok()) return st;
  // Yielded attempts do not count against max_attempts (docs/domain.md 1.9).
  const auto counted = std::count_if(j.attempts.begin(), j.attempts.end(), [](const Attempt& a) {
    return a.state != AttemptState::kYielded;
  });
  if (counted + 1 > j.max_attempts) {
    return forbidden(e, fmt::format("attempt {} exceeds max_attempts {} ({} counted: yielded "
                                    "attempts do not count)",
                                    ev->attempt(), j.max_attempts, counted + 1));
  }
  return Status::Ok();
}

Status check_reattached(const State& s, const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_ExecutionReattached();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) {
    return st;
  }
  if (a->execution_handle.empty() || a->execution_handle != text(ev->execution_handle())) {
    return forbidden(e, "the execution_handle is not the one the attempt started with");
  }
  if (text(ev->previous_state()) != jobs::to_string(a->state)) {
    return forbidden(
        e, fmt::format("records previous state {}, attempt {} is {}", text(ev->previous_state()),
                       a->number, jobs::to_string(a->state)));
  }
  return target_free(s, e, j, /*holds_count=*/false);
}

Status check_resolved(const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  const auto* ev = e.payload_as_AttemptResolved();
  if (Status st = attempt_in(e, j, ev->attempt(), &a); !st.ok()) return st;
  // A hold release speaks for a STALE attempt only; an observed exit may
  // also end one still RUNNING.
  if (text(ev->evidence()) == holds::kEvidenceHoldRelease && a->state != AttemptState::kStale) {
    return forbidden(
        e, fmt::format("attempt {} is {}, a hold release resolves a STALE attempt only", a->number,
                       jobs::to_string(a->state)));
  }
  const std::string outcome = text(ev->outcome());
  if (outcome != "SUCCEEDED" && outcome != "FAILED") {
    return forbidden(e, "outcome " + outcome + " is neither SUCCEEDED nor FAILED");
  }
  // One step's exit speaks for the attempt only once every step is done.
  if (!text(ev->step()).empty() && outcome == "SUCCEEDED") {
    for (const Step& st : a->steps) {
      if (st.state != StepState::kDone && st.state != StepState::kReused) {
        return forbidden(e, fmt::format("step {} is {}: no success before every step is done",
                                        st.name, jobs::to_string(st.state)));
      }
    }
  }
  return Status::Ok();
}

Status check_on_job(const State& s, const fb::Event& e, const Job& j) {
  const Attempt* a = nullptr;
  switch (e.payload_type()) {
    case P::JobLeased:
      return check_leased(s, e, j);
    case P::LeaseRenewed:
      return attempt_in(e, j, e.payload_as_LeaseRenewed()->attempt(), &a);
    case P::LeaseReleased:
      return attempt_in(e, j, e.payload_as_LeaseReleased()->attempt(), &a);
    case P::LeaseExpired:
      return check_lease_expired(e, j);
    case P::JobStarted:
      return check_started(e, j);
    case P::StepStarted:
      return check_step_started(e, j);
    case P::StepSucceeded:
      return check_step_ended(e, j, e.payload_as_StepSucceeded());
    case P::StepFailed:
      return check_step_ended(e, j, e.payload_as_StepFailed());
    case P::CancelRequested:
      return check_cancel_requested(e, j);
    case P::AttemptCancelled:
      return check_cancelled(e, j);
    case P::AttemptSucceeded:
      return check_succeeded(e, j);
    case P::AttemptFailed:
      return attempt_in(e, j, e.payload_as_AttemptFailed()->attempt(), &a);
    case P::RetryScheduled:
      return check_retry(e, j);
    case P::RerunRequested:
      return check_new_attempt(e, j, e.payload_as_RerunRequested());
    case P::AttemptStale:
      return attempt_in(e, j, e.payload_as_AttemptStale()->attempt(), &a);
    case P::ExecutionReattached:
      return check_reattached(s, e, j);
    case P::AttemptResolved:
      return check_resolved(e, j);
    case P::AttemptYielded:
      return check_yielded(e, j);
    case P::JobEnqueued:  // checked before the job is looked up
    case P::NONE:
      RUNLEDGER_CONNECTOR_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      break;
  }
  return forbidden(e, "not a job event");
}

}  // namespace

Status check_job_event(const State& s, const fb::Event& e) {
  std::string_view id;
  if (!id_in_stream(e, StreamKind::kJob, &id))
    return forbidden(e, "a job event outside a job stream");
  auto it = s.jobs.by_id.find(std::string(id));
  const Job* j = it == s.jobs.by_id.end() ? nullptr : &it->second;
  if (e.payload_type() == P::JobEnqueued) return check_enqueued(e, j);
  if (j == nullptr || j->attempts.empty()) return forbidden(e, "the job does not exist");
  return check_on_job(s, e, *j);
}

}  // namespace runledger::transition_check
