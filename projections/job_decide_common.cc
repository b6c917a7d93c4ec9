// Helpers shared by the job deciders: see job_decide_common.h.
#include "projections/job_decide_common.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/sha256.h"

namespace runledger::jobs::detail {

namespace {

constexpr int64_t kMsPerS = 1000;

// Doubles from the policy's backoff with each failed attempt, up to its maximum.
int64_t retry_backoff_ms(const Policy& p, int failed_attempt) {
  int64_t backoff_s = p.retry_backoff_s;
  for (int n = 1; n < failed_attempt && backoff_s < p.retry_backoff_max_s; ++n) backoff_s *= 2;
  return std::min(backoff_s, p.retry_backoff_max_s) * kMsPerS;
}

}  // namespace

const Job* find_job(const State& s, const std::string& id) {
  auto it = s.jobs.by_id.find(id);
  return it == s.jobs.by_id.end() ? nullptr : &it->second;
}

Decision not_found(const std::string& job_id) {
  return Decision::reject(RejectionCode::kNotFound, fmt::format("job {} not found", job_id));
}

Decision refused(const Job& j, std::string_view command, std::string_view why) {
  const Attempt& a = j.latest();
  std::vector<std::string> allowed = allowed_commands(a);
  std::string message = fmt::format("job {} is {}: cannot {}", j.id, to_string(a.state), command);
  if (!why.empty()) message += fmt::format(": {}", why);
  message += fmt::format(" (allowed: {})", fmt::join(allowed, ", "));
  nlohmann::json extra = {{"state", to_string(a.state)}, {"allowed", allowed}};
  return Decision::reject(RejectionCode::kInvalidTransition, std::move(message), std::move(extra));
}

Decision lease_mismatch(const Job& j) {
  return Decision::reject(
      RejectionCode::kLeaseMismatch,
      fmt::format("job {}: the lease token is not the current lease of attempt {}", j.id,
                  j.latest().number));
}

Decision invalid_field(std::string_view field, std::string message) {
  return Decision::reject(RejectionCode::kInvalidField, std::move(message), {{"field", field}});
}

bool token_matches(const Attempt& a, const std::string& lease_token) {
  return !a.lease_token_sha256.empty() && equals_hex(sha256(lease_token), a.lease_token_sha256);
}

const Job* worker_gate(const State& s, const std::string& job_id, std::string_view command,
                       const std::string& lease_token, Decision* refusal) {
  const Job* j = find_job(s, job_id);
  if (j == nullptr) {
    *refusal = not_found(job_id);
    return nullptr;
  }
  if (!state_accepts(j->latest().state, command)) {
    *refusal = refused(*j, command);
    return nullptr;
  }
  if (!token_matches(j->latest(), lease_token)) {
    *refusal = lease_mismatch(*j);
    return nullptr;
  }
  return j;
}

bool resolve_lease_s(const std::optional<int64_t>& requested, int64_t fallback_s,
                     const Policy& policy, int64_t* lease_s, Decision* refusal) {
  *lease_s = requested.value_or(fallback_s);
  if (*lease_s >= policy.lease_min_s && *lease_s <= policy.lease_max_s) return true;
  *refusal = invalid_field("lease_s", fmt::format("lease_s must be between {} and {} seconds",
                                                  policy.lease_min_s, policy.lease_max_s));
  return false;
}

const Step* find_step(const Attempt& a, std::string_view name) {
  for (const Step& st : a.steps) {
    if (st.name == name) return &st;
  }
  return nullptr;
}

const Step* first_in_state(const Attempt& a, StepState state) {
  for (const Step& st : a.steps) {
    if (st.state == state) return &st;
  }
  return nullptr;
}

Decision step_not_found(const Job& j, const std::string& step) {
  return Decision::reject(RejectionCode::kStepNotFound,
                          fmt::format("job {} has no step {} in its plan", j.id, step),
                          {{"step", step}});
}

int counted_attempts(const Job& j) {
  return static_cast<int>(std::count_if(j.attempts.begin(), j.attempts.end(), [](const Attempt& a) {
    return a.state != AttemptState::kYielded;
  }));
}

std::optional<fb::RetryScheduledT> retry_after_failure(const Job& j, bool retryable,
                                                       const Context& ctx,
                                                       std::string_view worker) {
  const Attempt& a = j.latest();
  // A pending cancel outranks a retry: the operator asked for the work to stop.
  const bool retry = retryable && !a.cancel_requested && counted_attempts(j) < j.max_attempts &&
                     a.number < kAttemptsMax;
  if (!retry) return std::nullopt;
  fb::RetryScheduledT next;
  next.attempt = a.number + 1;
  next.previous_attempt = a.number;
  // Yielded attempts cost no backoff: the delay grows with the failures.
  next.not_before_ms = ctx.now_ms + retry_backoff_ms(*ctx.policy, counted_attempts(j));
  next.reused_steps = completed_steps(a);
  next.worker = worker;
  return next;
}

std::string last_completed_step(const Attempt& a) {
  std::string last;
  for (const Step& st : a.steps) {
    if (st.state == StepState::kDone || st.state == StepState::kReused) last = st.name;
  }
  return last;
}

std::vector<std::string> completed_steps(const Attempt& a) {
  std::vector<std::string> out;
  for (const Step& st : a.steps) {
    if (st.state == StepState::kDone || st.state == StepState::kReused) out.push_back(st.name);
  }
  return out;
}

bool any_step_started(const Attempt& a) {
  for (const Step& st : a.steps) {
    switch (st.state) {
      case StepState::kRunning:
      case StepState::kDone:
      case StepState::kFailed:
        return true;
      case StepState::kPending:
      case StepState::kReused:
        break;
    }
  }
  return false;
}

fb::AttemptCancelledT cancellation(const Job& j, std::string_view cause, std::string_view worker) {
  const Attempt& a = j.latest();
  fb::AttemptCancelledT ev;
  ev.attempt = a.number;
  ev.reason = a.cancel_reason;
  ev.cause = cause;
  ev.last_completed_step = last_completed_step(a);
  ev.cleanup_needed = any_step_started(a);
  ev.worker = worker;
  return ev;
}

std::string cut_utf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) so the cut lands on a character start.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

const std::string* blocking_hold_id(const State& s, const std::string& target) {
  auto it = s.holds.blocking_by_target.find(target);
  if (it == s.holds.blocking_by_target.end() || it->second.empty()) return nullptr;
  return &*it->second.begin();
}

bool hold_open(const State& s, const std::string& hold_id) {
  if (hold_id.empty()) return false;
  auto it = s.holds.by_id.find(hold_id);
  return it != s.holds.by_id.end() && !it->second.released;
}

void emit_stale(Decision& d, const Job& j, const Context& ctx, std::string_view cause,
                std::string_view hold_kind, std::string_view detail, std::string_view worker) {
  const Attempt& a = j.latest();
  std::string hold_id = ctx.ids->next_id("hold");
  fb::AttemptStaleT stale;
  stale.attempt = a.number;
  stale.cause = cause;
  stale.hold_id = hold_id;
  stale.hold_kind = hold_kind;
  stale.detail = detail;
  stale.worker = worker;
  d.emit(job_stream(j.id), std::move(stale));

  fb::HoldPlacedT hold;
  hold.target = j.target;
  hold.kind = hold_kind;
  hold.job = j.id;
  hold.attempt = a.number;
  hold.reason =
      cut_utf8(fmt::format("job {} attempt {} is STALE ({}): {}", j.id, a.number, cause, detail),
               holds::kReasonBytesMax);
  hold.worker = worker;
  d.emit(hold_stream(hold_id), std::move(hold));
}

}  // namespace runledger::jobs::detail
