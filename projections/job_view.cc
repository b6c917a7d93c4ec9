// The job as the HTTP API shows it (docs/api.md, "A job in JSON"). Never
// shows a lease token, not even hashed: the view is read by operators.
#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/job_decide_common.h"
#include "projections/job_view_internal.h"

namespace runledger::jobs {

namespace {

using nlohmann::json;

json time_or_null(int64_t ms) { return ms == 0 ? json(nullptr) : json(format_time_ms(ms)); }
json text_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json step_view(const Step& st) {
  json out = {{"name", st.name},
              {"state", to_string(st.state)},
              {"started_at", time_or_null(st.started_at_ms)},
              {"finished_at", time_or_null(st.finished_at_ms)}};
  if (!st.output.empty()) out["output"] = detail::parse_or_text(st.output);
  if (!st.error.empty()) out["error"] = st.error;
  if (st.state == StepState::kReused) out["reused_from"] = st.reused_from;
  return out;
}

json attempt_summary(const Attempt& a) {
  json out = {{"attempt", a.number},
              {"state", to_string(a.state)},
              {"started_at", time_or_null(a.started_at_ms)},
              {"finished_at", time_or_null(a.finished_at_ms)}};
  if (!a.error.empty()) out["error"] = a.error;
  return out;
}

json lease_view(const Attempt& a) {
  if (a.state != AttemptState::kLeased && a.state != AttemptState::kRunning) return nullptr;
  return {{"worker", a.worker}, {"expires_at", time_or_null(a.lease_expires_at_ms)}};
}

json blocked_by(const State& s, const Job& j) {
  auto blocker = detail::blocked_by(s, j);
  if (!blocker) return nullptr;
  return {{std::string(blocker->kind), *blocker->id}};
}

}  // namespace

namespace detail {

// A blocking hold on the target first (it outlasts any lease), else the job
// holding the target.
std::optional<Blocker> blocked_by(const State& s, const Job& j) {
  if (j.latest().state != AttemptState::kQueued) return std::nullopt;
  if (const std::string* hold = blocking_hold_id(s, j.target)) return Blocker{"hold", hold};
  auto it = s.jobs.holder.find(j.target);
  if (it != s.jobs.holder.end() && it->second != j.id) return Blocker{"job", &it->second};
  return std::nullopt;
}

json parse_or_text(const std::string& text) {
  if (text.empty()) return nullptr;
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? json(text) : parsed;
}

}  // namespace detail

json view(const State& s, const Job& j) {
  const Attempt& a = j.latest();
  json steps = json::array();
  for (const Step& st : a.steps) steps.push_back(step_view(st));
  json attempts = json::array();
  for (const Attempt& each : j.attempts) attempts.push_back(attempt_summary(each));
  return {{"id", j.id},
          {"kind", j.kind},
          {"target", j.target},
          {"input", detail::parse_or_text(j.input)},
          {"plan", j.plan},
          {"reuse_on_rerun", j.reuse_on_rerun},
          {"max_attempts", j.max_attempts},
          {"priority", j.priority},
          {"state", to_string(a.state)},
          {"attempt", a.number},
          {"client_token", j.id + "-a" + std::to_string(a.number)},
          {"lease", lease_view(a)},
          {"cancel_requested", a.cancel_requested},
          {"cancel_reason", text_or_null(a.cancel_reason)},
          {"execution_handle", text_or_null(a.execution_handle)},
          {"steps", std::move(steps)},
          {"last_completed_step", text_or_null(a.last_completed_step)},
          {"cleanup_needed", a.cleanup_needed},
          {"error", text_or_null(a.error)},
          {"blocked_by", blocked_by(s, j)},
          {"attempts", std::move(attempts)},
          {"created_at", time_or_null(j.created_at_ms)},
          {"updated_at", time_or_null(j.updated_at_ms)},
          {"version", j.version}};
}

}  // namespace runledger::jobs
