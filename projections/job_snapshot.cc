// The lossless JSON of a job: unlike view(), it holds every field (the
// lease token hash included), so two jobs with equal JSON are equal. The
// tests compare states by it.
#include "projections/job.h"

namespace runledger::jobs {

namespace {

using nlohmann::json;

json step_json(const Step& st) {
  return {{"name", st.name},
          {"state", to_string(st.state)},
          {"started_at_ms", st.started_at_ms},
          {"finished_at_ms", st.finished_at_ms},
          {"output", st.output},
          {"error", st.error},
          {"reused_from", st.reused_from}};
}

json attempt_json(const Attempt& a) {
  json steps = json::array();
  for (const Step& st : a.steps) steps.push_back(step_json(st));
  return {{"number", a.number},
          {"state", to_string(a.state)},
          {"created_at_ms", a.created_at_ms},
          {"started_at_ms", a.started_at_ms},
          {"finished_at_ms", a.finished_at_ms},
          {"not_before_ms", a.not_before_ms},
          {"error", a.error},
          {"steps", std::move(steps)},
          {"worker", a.worker},
          {"lease_token_sha256", a.lease_token_sha256},
          {"lease_s", a.lease_s},
          {"lease_expires_at_ms", a.lease_expires_at_ms},
          {"execution_handle", a.execution_handle},
          {"cancel_requested", a.cancel_requested},
          {"cancel_reason", a.cancel_reason},
          {"cancel_requested_by", a.cancel_requested_by},
          {"last_completed_step", a.last_completed_step},
          {"cleanup_needed", a.cleanup_needed},
          {"stale_hold_id", a.stale_hold_id}};
}

}  // namespace

json to_json(const Job& j) {
  json attempts = json::array();
  for (const Attempt& a : j.attempts) attempts.push_back(attempt_json(a));
  return {{"id", j.id},
          {"kind", j.kind},
          {"target", j.target},
          {"input", j.input},
          {"plan", j.plan},
          {"reuse_on_rerun", j.reuse_on_rerun},
          {"max_attempts", j.max_attempts},
          {"priority", j.priority},
          {"not_before_ms", j.not_before_ms},
          {"attempts", std::move(attempts)},
          {"enqueue_seq", j.enqueue_seq},
          {"created_at_ms", j.created_at_ms},
          {"updated_at_ms", j.updated_at_ms},
          {"version", j.version}};
}

}  // namespace runledger::jobs
