// Deciders that create attempts on an operator's request: enqueue (attempt 1)
// and rerun (a new attempt after a terminal one, docs/domain.md 1.7).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "projections/job_decide_common.h"

namespace runledger::jobs {

namespace {

using detail::invalid_field;

std::optional<Decision> check_plan(const Enqueue& c) {
  if (c.plan.empty()) return invalid_field("plan", "plan must name at least one step");
  if (c.plan.size() > kPlanStepsMax) {
    return invalid_field("plan", fmt::format("plan has more than {} steps", kPlanStepsMax));
  }
  std::set<std::string_view> seen;
  for (const std::string& name : c.plan) {
    if (name.empty() || name.size() > kStepNameBytesMax) {
      return invalid_field(
          "plan", fmt::format("step names in plan must be 1 to {} bytes", kStepNameBytesMax));
    }
    if (!seen.insert(name).second) {
      return invalid_field("plan", fmt::format("step {} appears twice in plan", name));
    }
  }
  for (const std::string& name : c.reuse_on_rerun) {
    if (!seen.count(name)) {
      return invalid_field("reuse_on_rerun",
                           fmt::format("reuse_on_rerun names step {}, which is not in plan", name));
    }
  }
  return std::nullopt;
}

std::optional<Decision> check_enqueue(const Enqueue& c) {
  if (c.id.empty()) return invalid_field("id", "id must not be empty");
  if (c.kind.empty()) return invalid_field("kind", "kind must not be empty");
  if (c.target.empty()) return invalid_field("target", "target must not be empty");
  if (c.input.size() > kInputBytesMax) {
    return invalid_field("input", fmt::format("input is larger than {} bytes", kInputBytesMax));
  }
  if (c.max_attempts < 1 || c.max_attempts > kMaxAttemptsMax) {
    return invalid_field("max_attempts",
                         fmt::format("max_attempts must be between 1 and {}", kMaxAttemptsMax));
  }
  if (c.not_before_ms < 0) return invalid_field("not_before", "not_before is before 1970");
  return check_plan(c);
}

// Compares what the command asks for with what the job was enqueued with.
bool same_body(const Job& j, const Enqueue& c) {
  return j.kind == c.kind && j.target == c.target && j.input == c.input && j.plan == c.plan &&
         j.reuse_on_rerun == c.reuse_on_rerun && j.max_attempts == c.max_attempts &&
         j.priority == c.priority && j.not_before_ms == c.not_before_ms;
}

// Steps of `prev` complete there and listed in the job's reuse_on_rerun.
std::vector<std::string> reusable_on_rerun(const Job& j, const Attempt& prev) {
  std::vector<std::string> out;
  for (const std::string& name : detail::completed_steps(prev)) {
    auto& listed = j.reuse_on_rerun;
    if (std::find(listed.begin(), listed.end(), name) != listed.end()) out.push_back(name);
  }
  return out;
}

}  // namespace

Decision decide(const State& s, const Enqueue& c, const Context& /*ctx*/) {
  if (auto bad = check_enqueue(c)) return std::move(*bad);
  if (const Job* j = detail::find_job(s, c.id)) {
    if (!same_body(*j, c)) {
      return Decision::reject(RejectionCode::kDuplicateId,
                              fmt::format("job {} already exists with a different body", c.id));
    }
    Decision d;
    d.body = {{"existing", true}};
    return d;
  }
  fb::JobEnqueuedT ev;
  ev.kind = c.kind;
  ev.target = c.target;
  ev.input = c.input;
  ev.plan = c.plan;
  ev.reuse_on_rerun = c.reuse_on_rerun;
  ev.max_attempts = c.max_attempts;
  ev.priority = c.priority;
  ev.not_before_ms = c.not_before_ms;
  ev.attempt = 1;
  Decision d;
  d.emit(job_stream(c.id), std::move(ev));
  return d;
}

Decision decide(const State& s, const Rerun& c, const Context& /*ctx*/) {
  const Job* j = detail::find_job(s, c.job_id);
  if (j == nullptr) return detail::not_found(c.job_id);
  if (c.reason.size() > kReasonBytesMax) {
    return invalid_field("reason", fmt::format("reason is longer than {} bytes", kReasonBytesMax));
  }
  const Attempt& prev = j->latest();
  if (!detail::state_accepts(prev.state, detail::kCmdRerun)) {
    return detail::refused(*j, detail::kCmdRerun, "its work may still be running");
  }
  if (prev.number >= kAttemptsMax) {
    return Decision::reject(
        RejectionCode::kAttemptsExhausted,
        fmt::format("job {} has {} attempts, the most a job may have", j->id, kAttemptsMax));
  }
  fb::RerunRequestedT ev;
  ev.attempt = prev.number + 1;
  ev.previous_attempt = prev.number;
  ev.reason = c.reason;
  ev.reused_steps = reusable_on_rerun(*j, prev);
  Decision d;
  d.emit(job_stream(j->id), std::move(ev));
  return d;
}

}  // namespace runledger::jobs
