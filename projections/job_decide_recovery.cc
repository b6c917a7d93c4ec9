// Deciders for work whose fate is uncertain (domain.md 1.8): a worker's
// "outcome unknown" report, and reattach by a worker that lost track of an
// execution. Neither ever launches the work again: reattach takes over the
// running execution or records how it ended, and releases the hold placed
// when the attempt went STALE.
#include <fmt/format.h>

#include "events/hash.h"
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

Decision reattach_running(const State& s, const Job& j, const Reattach& c, const Context& ctx) {
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
        409, "target_busy",
        fmt::format("job {}: target {} is held by job {}", j.id, j.target, holder->second),
        {{"job", holder->second}});
  }
  std::string hold_id = open_stale_hold(s, a);
  fb::ExecutionReattachedT ev;
  ev.attempt = a.number;
  ev.worker = c.worker;
  ev.execution_handle = c.execution_handle;
  ev.lease_token_sha256 = sha256_hex(c.lease_token);
  ev.lease_s = static_cast<int32_t>(lease_s);
  ev.lease_expires_at_ms = ctx.now_ms + lease_s * kMsPerS;
  ev.previous_state = to_string(a.state);
  ev.released_hold_id = hold_id;
  d.emit(job_stream(j.id), std::move(ev));
  if (!hold_id.empty()) {
    emit_hold_released(d, hold_id,
                       fmt::format("reattached: execution observed running by worker {}", c.worker),
                       false, "", c.worker);
  }
  return d;
}

Decision resolve_exited(const State& s, const Job& j, const Reattach& c) {
  const Attempt& a = j.latest();
  int exit_code = *c.exit_code;
  std::string outcome =
      to_string(exit_code == 0 ? AttemptState::kSucceeded : AttemptState::kFailed);
  std::string hold_id = open_stale_hold(s, a);
  Decision d;
  fb::AttemptResolvedT ev;
  ev.attempt = a.number;
  ev.outcome = outcome;
  ev.exit_code = exit_code;
  ev.has_exit_code = true;
  ev.evidence = "exited";
  ev.hold_id = hold_id;
  ev.worker = c.worker;
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

}  // namespace

Decision decide(const State& s, const OutcomeUnknown& c, const Context& ctx) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdOutcomeUnknown,
                                     {AttemptState::kRunning}, c.lease_token, &d);
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
    return detail::invalid_field("exit_code", "exit_code is required when observed is exited");
  }
  const Attempt& a = j->latest();
  if (a.state != AttemptState::kRunning && a.state != AttemptState::kStale) {
    return detail::refused(*j, detail::kCmdReattach);
  }
  if (a.execution_handle.empty() || a.execution_handle != c.execution_handle) {
    return Decision::reject(
        409, "handle_mismatch",
        fmt::format("job {}: execution_handle does not match the one attempt {} started with",
                    j->id, a.number));
  }
  return running ? reattach_running(s, *j, c, ctx) : resolve_exited(s, *j, c);
}

}  // namespace runledger::jobs
