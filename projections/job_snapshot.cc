// The lossless internal JSON of a job, for projection snapshots and for the
// views of finished jobs kept in the store. Unlike view(), it holds every
// field (the lease token hash included), so from_json(to_json(j)) == j.
// A field missing on read takes its default, so snapshots written before a
// field was added still load; a state name that is unknown is an error.
#include <stdexcept>

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

Step step_from(const json& j) {
  Step st;
  st.name = j.value("name", "");
  std::optional<StepState> state = step_state_from(j.value("state", ""));
  if (!state) throw std::invalid_argument("job snapshot: unknown step state");
  st.state = *state;
  st.started_at_ms = j.value("started_at_ms", int64_t{0});
  st.finished_at_ms = j.value("finished_at_ms", int64_t{0});
  st.output = j.value("output", "");
  st.error = j.value("error", "");
  st.reused_from = j.value("reused_from", 0);
  return st;
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

Attempt attempt_from(const json& j) {
  Attempt a;
  a.number = j.value("number", 0);
  std::optional<AttemptState> state = attempt_state_from(j.value("state", ""));
  if (!state) throw std::invalid_argument("job snapshot: unknown attempt state");
  a.state = *state;
  a.created_at_ms = j.value("created_at_ms", int64_t{0});
  a.started_at_ms = j.value("started_at_ms", int64_t{0});
  a.finished_at_ms = j.value("finished_at_ms", int64_t{0});
  a.not_before_ms = j.value("not_before_ms", int64_t{0});
  a.error = j.value("error", "");
  for (const json& st : j.value("steps", json::array())) a.steps.push_back(step_from(st));
  a.worker = j.value("worker", "");
  a.lease_token_sha256 = j.value("lease_token_sha256", "");
  a.lease_s = j.value("lease_s", int64_t{0});
  a.lease_expires_at_ms = j.value("lease_expires_at_ms", int64_t{0});
  a.execution_handle = j.value("execution_handle", "");
  a.cancel_requested = j.value("cancel_requested", false);
  a.cancel_reason = j.value("cancel_reason", "");
  a.cancel_requested_by = j.value("cancel_requested_by", "");
  a.last_completed_step = j.value("last_completed_step", "");
  a.cleanup_needed = j.value("cleanup_needed", false);
  a.stale_hold_id = j.value("stale_hold_id", "");
  return a;
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

Job from_json(const json& in) {
  Job j;
  j.id = in.value("id", "");
  j.kind = in.value("kind", "");
  j.target = in.value("target", "");
  j.input = in.value("input", "null");
  j.plan = in.value("plan", std::vector<std::string>{});
  j.reuse_on_rerun = in.value("reuse_on_rerun", std::vector<std::string>{});
  j.max_attempts = in.value("max_attempts", 3);
  j.priority = in.value("priority", 0);
  j.not_before_ms = in.value("not_before_ms", int64_t{0});
  for (const json& a : in.value("attempts", json::array())) j.attempts.push_back(attempt_from(a));
  if (j.id.empty() || j.attempts.empty()) {
    throw std::invalid_argument("job snapshot: a job needs an id and an attempt");
  }
  j.enqueue_seq = in.value("enqueue_seq", uint64_t{0});
  j.created_at_ms = in.value("created_at_ms", int64_t{0});
  j.updated_at_ms = in.value("updated_at_ms", int64_t{0});
  j.version = in.value("version", uint32_t{0});
  return j;
}

}  // namespace runledger::jobs
