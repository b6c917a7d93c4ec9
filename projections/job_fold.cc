// The job fold: applies one job-stream event to the job it names. Reads time
// only from the event envelope (recorded_at_ms), so a replay rebuilds exactly
// the state the engine had. Events were checked by the deciders; the fold
// trusts them and ignores one that names an unknown job or attempt (the
// engine hydrates a job before deciding on it, so that never happens live).
#include <algorithm>

#include "projections/event_types.h"
#include "projections/job_index.h"
#include "projections/state.h"
#include "projections/stream_name.h"

namespace runledger::jobs {

namespace {

using StringVector = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>;

constexpr std::string_view kCancelledStepError = "cancelled";

std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string() : s->str(); }

std::vector<std::string> strs(const StringVector* v) {
  std::vector<std::string> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  for (const auto* s : *v) out.push_back(str(s));
  return out;
}

Step* find_step(Attempt& a, const flatbuffers::String* name) {
  for (Step& st : a.steps) {
    if (name != nullptr && st.name == name->string_view()) return &st;
  }
  return nullptr;
}

// The lease no longer admits any worker command (the worker is kept for forensics).
void end_lease(Attempt& a) {
  a.lease_token_sha256.clear();
  a.lease_expires_at_ms = 0;
}

void finish(Attempt& a, AttemptState state, int64_t at_ms) {
  a.state = state;
  a.finished_at_ms = at_ms;
  end_lease(a);
}

// A step that was running when its attempt ended did not complete.
void close_running_step(Attempt& a, std::string_view error, int64_t at_ms) {
  for (Step& st : a.steps) {
    if (st.state != StepState::kRunning) continue;
    st.state = StepState::kFailed;
    st.error = error;
    st.finished_at_ms = at_ms;
  }
}

Step pending_step(const std::string& name) {
  Step st;
  st.name = name;
  return st;
}

Job enqueued_job(std::string id, const fb::JobEnqueued& ev, const fb::Event& e) {
  Job j;
  j.id = std::move(id);
  j.kind = str(ev.kind());
  j.target = str(ev.target());
  j.input = str(ev.input());
  j.plan = strs(ev.plan());
  j.reuse_on_rerun = strs(ev.reuse_on_rerun());
  j.max_attempts = ev.max_attempts();
  j.priority = ev.priority();
  j.not_before_ms = ev.not_before_ms();
  j.enqueue_seq = e.seq();
  j.created_at_ms = e.recorded_at_ms();
  Attempt a;
  a.number = ev.attempt();
  a.created_at_ms = e.recorded_at_ms();
  a.not_before_ms = j.not_before_ms;
  a.steps.reserve(j.plan.size());
  for (const std::string& name : j.plan) a.steps.push_back(pending_step(name));
  j.attempts.push_back(std::move(a));
  return j;
}

// A retry, rerun or yield: a new QUEUED attempt whose `reused` steps carry
// the result of the run they come from (reused_from: the attempt in which the
// step actually ran, also when `previous` had reused it in turn).
void open_attempt(Job& j, int number, int previous, int64_t not_before_ms,
                  const StringVector* reused, int64_t at_ms) {
  const Attempt* prev = j.attempt(previous);
  if (number != static_cast<int>(j.attempts.size()) + 1 || prev == nullptr) return;
  std::vector<std::string> reused_names = strs(reused);
  Attempt next;
  next.number = number;
  next.created_at_ms = at_ms;
  next.not_before_ms = not_before_ms;
  next.steps.reserve(prev->steps.size());
  for (const Step& ps : prev->steps) {
    Step st = pending_step(ps.name);
    if (std::find(reused_names.begin(), reused_names.end(), ps.name) != reused_names.end()) {
      st.state = StepState::kReused;
      st.output = ps.output;
      st.reused_from = ps.state == StepState::kReused ? ps.reused_from : prev->number;
      next.last_completed_step = ps.name;
    }
    next.steps.push_back(std::move(st));
  }
  j.attempts.push_back(std::move(next));
}

void apply_leased(Attempt& a, const fb::JobLeased& ev, const fb::Event&) {
  a.state = AttemptState::kLeased;
  a.worker = str(ev.worker());
  a.lease_token_sha256 = str(ev.lease_token_sha256());
  a.lease_s = ev.lease_s();
  a.lease_expires_at_ms = ev.lease_expires_at_ms();
}

void apply_renewed(Attempt& a, const fb::LeaseRenewed& ev, const fb::Event&) {
  // lease_s stays the claim's: it is the default length of the next heartbeat.
  a.lease_expires_at_ms = ev.lease_expires_at_ms();
}

void apply_released(Attempt& a, const fb::LeaseReleased&, const fb::Event&) {
  a.state = AttemptState::kQueued;
  end_lease(a);
}

void apply_lease_expired(Attempt& a, const fb::LeaseExpired&, const fb::Event&) {
  // A RUNNING attempt stays RUNNING until the AttemptStale of the same command.
  if (a.state == AttemptState::kLeased) a.state = AttemptState::kQueued;
  end_lease(a);
}

void apply_started(Attempt& a, const fb::JobStarted& ev, const fb::Event& e) {
  a.state = AttemptState::kRunning;
  a.started_at_ms = e.recorded_at_ms();
  a.execution_handle = str(ev.execution_handle());
}

void apply_step_started(Attempt& a, const fb::StepStarted& ev, const fb::Event& e) {
  if (Step* st = find_step(a, ev.step())) {
    st->state = StepState::kRunning;
    st->started_at_ms = e.recorded_at_ms();
  }
}

void apply_step_succeeded(Attempt& a, const fb::StepSucceeded& ev, const fb::Event& e) {
  if (Step* st = find_step(a, ev.step())) {
    st->state = StepState::kDone;
    st->finished_at_ms = e.recorded_at_ms();
    st->output = str(ev.output());
    a.last_completed_step = st->name;
  }
}

void apply_step_failed(Attempt& a, const fb::StepFailed& ev, const fb::Event& e) {
  if (Step* st = find_step(a, ev.step())) {
    st->state = StepState::kFailed;
    st->finished_at_ms = e.recorded_at_ms();
    st->error = str(ev.error());
  }
}

void apply_cancel_requested(Attempt& a, const fb::CancelRequested& ev, const fb::Event& e) {
  a.cancel_requested = true;
  a.cancel_reason = str(ev.reason());
  a.cancel_requested_by = str(e.actor());
}

void apply_cancelled(Attempt& a, const fb::AttemptCancelled& ev, const fb::Event& e) {
  finish(a, AttemptState::kCancelled, e.recorded_at_ms());
  // Every cancellation answers a request; a QUEUED one carries it in this event.
  a.cancel_requested = true;
  if (ev.reason() != nullptr && ev.reason()->size() > 0) a.cancel_reason = ev.reason()->str();
  if (a.cancel_requested_by.empty()) a.cancel_requested_by = str(e.actor());
  a.last_completed_step = str(ev.last_completed_step());
  a.cleanup_needed = ev.cleanup_needed();
  close_running_step(a, kCancelledStepError, e.recorded_at_ms());
}

void apply_succeeded(Attempt& a, const fb::AttemptSucceeded&, const fb::Event& e) {
  finish(a, AttemptState::kSucceeded, e.recorded_at_ms());
}

void apply_failed(Attempt& a, const fb::AttemptFailed& ev, const fb::Event& e) {
  finish(a, AttemptState::kFailed, e.recorded_at_ms());
  a.error = str(ev.error());
}

void apply_stale(Attempt& a, const fb::AttemptStale& ev, const fb::Event&) {
  a.state = AttemptState::kStale;
  a.stale_hold_id = str(ev.hold_id());
  end_lease(a);
}

void apply_reattached(Attempt& a, const fb::ExecutionReattached& ev, const fb::Event&) {
  a.state = AttemptState::kRunning;
  a.worker = str(ev.worker());
  a.execution_handle = str(ev.execution_handle());
  a.lease_token_sha256 = str(ev.lease_token_sha256());
  a.lease_s = ev.lease_s();
  a.lease_expires_at_ms = ev.lease_expires_at_ms();
}

void apply_resolved(Attempt& a, const fb::AttemptResolved& ev, const fb::Event& e) {
  std::optional<AttemptState> outcome = attempt_state_from(str(ev.outcome()));
  if (outcome != AttemptState::kSucceeded && outcome != AttemptState::kFailed) return;
  finish(a, *outcome, e.recorded_at_ms());
  if (*outcome == AttemptState::kSucceeded) return;
  const std::string what = ev.step() == nullptr || ev.step()->size() == 0
                               ? std::string("execution")
                               : "step " + ev.step()->str();
  a.error = ev.has_exit_code() ? what + " exited with code " + std::to_string(ev.exit_code())
                               : "resolved as FAILED by " + str(ev.evidence());
  close_running_step(a, a.error, e.recorded_at_ms());
}

void apply_yielded(Attempt& a, const fb::AttemptYielded&, const fb::Event& e) {
  finish(a, AttemptState::kYielded, e.recorded_at_ms());
}

// Calls apply(attempt, payload, event) on the attempt the payload names.
template <typename T>
void on_attempt(Job& j, const fb::Event& e, const T* ev,
                void (*apply)(Attempt&, const T&, const fb::Event&)) {
  if (ev == nullptr) return;
  if (Attempt* a = j.attempt(ev->attempt())) apply(*a, *ev, e);
}

void apply_event(Job& j, const fb::Event& e) {
  using P = fb::Payload;
  switch (e.payload_type()) {
    case P::JobLeased:
      return on_attempt(j, e, e.payload_as_JobLeased(), apply_leased);
    case P::LeaseRenewed:
      return on_attempt(j, e, e.payload_as_LeaseRenewed(), apply_renewed);
    case P::LeaseReleased:
      return on_attempt(j, e, e.payload_as_LeaseReleased(), apply_released);
    case P::LeaseExpired:
      return on_attempt(j, e, e.payload_as_LeaseExpired(), apply_lease_expired);
    case P::JobStarted:
      return on_attempt(j, e, e.payload_as_JobStarted(), apply_started);
    case P::StepStarted:
      return on_attempt(j, e, e.payload_as_StepStarted(), apply_step_started);
    case P::StepSucceeded:
      return on_attempt(j, e, e.payload_as_StepSucceeded(), apply_step_succeeded);
    case P::StepFailed:
      return on_attempt(j, e, e.payload_as_StepFailed(), apply_step_failed);
    case P::CancelRequested:
      return on_attempt(j, e, e.payload_as_CancelRequested(), apply_cancel_requested);
    case P::AttemptCancelled:
      return on_attempt(j, e, e.payload_as_AttemptCancelled(), apply_cancelled);
    case P::AttemptSucceeded:
      return on_attempt(j, e, e.payload_as_AttemptSucceeded(), apply_succeeded);
    case P::AttemptFailed:
      return on_attempt(j, e, e.payload_as_AttemptFailed(), apply_failed);
    case P::AttemptStale:
      return on_attempt(j, e, e.payload_as_AttemptStale(), apply_stale);
    case P::ExecutionReattached:
      return on_attempt(j, e, e.payload_as_ExecutionReattached(), apply_reattached);
    case P::AttemptResolved:
      return on_attempt(j, e, e.payload_as_AttemptResolved(), apply_resolved);
    case P::RetryScheduled: {
      const auto* ev = e.payload_as_RetryScheduled();
      return open_attempt(j, ev->attempt(), ev->previous_attempt(), ev->not_before_ms(),
                          ev->reused_steps(), e.recorded_at_ms());
    }
    case P::RerunRequested: {
      // A rerun is an explicit request: it is claimable at once.
      const auto* ev = e.payload_as_RerunRequested();
      return open_attempt(j, ev->attempt(), ev->previous_attempt(), 0, ev->reused_steps(),
                          e.recorded_at_ms());
    }
    case P::AttemptYielded: {
      // The yielded attempt ends and the next is claimable at once, in one event.
      const auto* ev = e.payload_as_AttemptYielded();
      on_attempt(j, e, ev, apply_yielded);
      return open_attempt(j, ev->next_attempt(), ev->attempt(), 0, ev->reused_steps(),
                          e.recorded_at_ms());
    }
    case P::JobEnqueued:  // creates the job: see evolve()
    case P::NONE:
      RUNLEDGER_CONNECTOR_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      RUNLEDGER_HOLD_EVENT_TYPES(RUNLEDGER_EVENT_CASE)
      return;
  }
}

}  // namespace

void evolve(State& s, const fb::Event& e) {
  const std::string_view id =
      stream_id(e.stream() == nullptr ? "" : e.stream()->string_view(), StreamKind::kJob);
  if (id.empty()) return;
  if (const auto* ev = e.payload_as_JobEnqueued()) {
    if (s.jobs.by_id.find(id) != s.jobs.by_id.end()) return;
    Job j = enqueued_job(std::string(id), *ev, e);
    j.version = e.stream_version();
    j.updated_at_ms = e.recorded_at_ms();
    std::string key = j.id;
    detail::index(s.jobs, s.jobs.by_id.emplace(std::move(key), std::move(j)).first->second);
    return;
  }
  auto it = s.jobs.by_id.find(id);
  if (it == s.jobs.by_id.end()) return;
  Job& j = it->second;
  const detail::IndexedFields before = detail::indexed_fields(j);
  apply_event(j, e);
  j.version = e.stream_version();
  j.updated_at_ms = e.recorded_at_ms();
  // Most events (steps, heartbeats of a running attempt) leave the indexes as
  // they were: the fold then costs no set or map update.
  if (const detail::IndexedFields after = detail::indexed_fields(j); after != before) {
    detail::unindex(s.jobs, j, before);
    detail::index(s.jobs, j, after);
  }
}

}  // namespace runledger::jobs
