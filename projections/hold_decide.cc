// The hold deciders: placing a hold, and releasing one with evidence
// (docs/domain.md section 3). Pure: they read the state and the command only.
//
// A release is the operator's word that the earlier execution's fate is now
// known. It is refused (and nothing changes) unless it carries the evidence
// the hold's kind needs: always a note; for EXECUTION_STATE_UNKNOWN an
// explicit confirmation that the execution has stopped; and, when the hold
// is the one placed with a STALE attempt, how that attempt ended, which the
// release records as the attempt's resolution.
#include <optional>
#include <string>

#include "projections/hold_commands.h"
#include "projections/state.h"

namespace runledger::holds {

namespace {

constexpr const char* kSucceeded = "SUCCEEDED";
constexpr const char* kFailed = "FAILED";

nlohmann::json field(const char* name) { return {{"field", name}}; }

bool known_kind(const std::string& kind) {
  return kind == kExecutionStateUnknown || kind == kResultUnknown;
}

bool known_outcome(const std::string& outcome) {
  return outcome == kSucceeded || outcome == kFailed;
}

// Refusals of a Place that need nothing but the command.
std::optional<Decision> check_place_input(const Place& c) {
  if (!known_kind(c.kind)) {
    return Decision::reject(RejectionCode::kInvalidField,
                            "kind must be EXECUTION_STATE_UNKNOWN or RESULT_UNKNOWN",
                            field("kind"));
  }
  if (c.target.empty()) {
    return Decision::reject(RejectionCode::kMissingField, "target is required", field("target"));
  }
  if (c.reason.empty()) {
    return Decision::reject(RejectionCode::kMissingField,
                            "reason is required: say why the target is held", field("reason"));
  }
  if (c.reason.size() > kReasonBytesMax) {
    return Decision::reject(RejectionCode::kInvalidField,
                            "reason is longer than " + std::to_string(kReasonBytesMax) + " bytes",
                            field("reason"));
  }
  return std::nullopt;
}

// The attempt this hold concerns if that attempt is STALE now, or nullptr:
// the one the engine placed the hold with, or the one an operator's hold
// named. Either hold's release must say how the attempt ended, and resolves
// it (a hold placed while the attempt ran concerns it all the same). A job
// absent from memory is finished, so not STALE.
const jobs::Attempt* stale_attempt_of(const State& s, const Hold& h) {
  if (h.job.empty() || h.attempt <= 0) return nullptr;
  auto it = s.jobs.by_id.find(h.job);
  if (it == s.jobs.by_id.end()) return nullptr;
  const auto& attempts = it->second.attempts;
  if (static_cast<size_t>(h.attempt) > attempts.size()) return nullptr;
  const jobs::Attempt& a = attempts[h.attempt - 1];
  if (a.state != jobs::AttemptState::kStale) return nullptr;
  return &a;
}

std::optional<Decision> check_note(const ReleaseHold& c) {
  if (c.note.empty()) {
    return Decision::reject(RejectionCode::kMissingField,
                            "note is required: say what was checked before the release",
                            field("note"));
  }
  if (c.note.size() > kNoteBytesMax) {
    return Decision::reject(RejectionCode::kInvalidField,
                            "note is longer than " + std::to_string(kNoteBytesMax) + " bytes",
                            field("note"));
  }
  return std::nullopt;
}

std::optional<Decision> check_execution_stopped(const Hold& h, const ReleaseHold& c) {
  if (h.kind != kExecutionStateUnknown || c.execution_stopped.value_or(false)) return std::nullopt;
  return Decision::reject(
      RejectionCode::kInvalidField,
      "execution_stopped must be true to release an EXECUTION_STATE_UNKNOWN hold: confirm that "
      "the earlier execution has stopped (a stop request is not a stop; a lookup that finds "
      "nothing is not proof that it never ran)",
      field("execution_stopped"));
}

std::optional<Decision> check_outcome(const Hold& h, const jobs::Attempt* stale,
                                      const ReleaseHold& c) {
  if (c.outcome && !known_outcome(*c.outcome)) {
    return Decision::reject(RejectionCode::kInvalidField, "outcome must be SUCCEEDED or FAILED",
                            field("outcome"));
  }
  const std::string where = "attempt " + std::to_string(h.attempt) + " of job " + h.job;
  if (stale != nullptr && !c.outcome) {
    return Decision::reject(
        RejectionCode::kMissingField,
        "outcome is required: " + where + " is STALE; say how it ended (SUCCEEDED or FAILED)",
        field("outcome"));
  }
  if (stale == nullptr && c.outcome) {
    // Accepting it would record a resolution that resolves nothing.
    return Decision::reject(RejectionCode::kInvalidField,
                            "outcome resolves a STALE attempt, and hold " + h.id +
                                " concerns no attempt that is still STALE",
                            field("outcome"));
  }
  return std::nullopt;
}

std::optional<Decision> check_release_evidence(const Hold& h, const jobs::Attempt* stale,
                                               const ReleaseHold& c) {
  if (auto r = check_note(c)) return r;
  if (auto r = check_execution_stopped(h, c)) return r;
  return check_outcome(h, stale, c);
}

}  // namespace

Decision decide(const State& s, const Place& c, const Context& /*ctx*/) {
  if (auto r = check_place_input(c)) return std::move(*r);
  if (s.holds.by_id.count(c.id) != 0) {
    return Decision::reject(RejectionCode::kDuplicateId, "hold " + c.id + " already exists",
                            {{"hold", c.id}});
  }
  int attempt = 0;
  if (!c.job.empty()) {
    auto it = s.jobs.by_id.find(c.job);
    if (it == s.jobs.by_id.end()) {
      return Decision::reject(RejectionCode::kNotFound, "job " + c.job + " not found",
                              {{"job", c.job}});
    }
    const jobs::Job& job = it->second;
    if (job.target != c.target) {
      return Decision::reject(
          RejectionCode::kInvalidField,
          "job " + c.job + " changes target " + job.target + ", not " + c.target, field("job"));
    }
    attempt = job.attempts.empty() ? 0 : job.latest().number;
  }
  fb::HoldPlacedT placed;
  placed.target = c.target;
  placed.kind = c.kind;
  placed.job = c.job;
  placed.attempt = attempt;
  placed.reason = c.reason;
  Decision d;
  d.emit(hold_stream(c.id), std::move(placed));
  return d;
}

Decision decide(const State& s, const ReleaseHold& c, const Context& /*ctx*/) {
  auto it = s.holds.by_id.find(c.id);
  if (it == s.holds.by_id.end()) {
    return Decision::reject(RejectionCode::kNotFound, "hold " + c.id + " not found",
                            {{"hold", c.id}});
  }
  const Hold& h = it->second;
  if (!accepts(h, kCmdRelease)) {
    nlohmann::json allowed = nlohmann::json::array();
    for (std::string_view command : allowed_commands(h)) allowed.push_back(command);
    return Decision::reject(RejectionCode::kInvalidTransition,
                            "hold " + c.id + " is already released",
                            {{"state", state_name(h)}, {"allowed", std::move(allowed)}});
  }
  const jobs::Attempt* stale = stale_attempt_of(s, h);
  if (auto r = check_release_evidence(h, stale, c)) return std::move(*r);

  fb::HoldReleasedT released;
  released.note = c.note;
  released.execution_stopped = c.execution_stopped.value_or(false);
  released.outcome = c.outcome.value_or("");
  Decision d;
  d.emit(hold_stream(c.id), std::move(released));
  if (stale != nullptr) {
    fb::AttemptResolvedT resolved;
    resolved.attempt = h.attempt;
    resolved.outcome = *c.outcome;
    resolved.evidence = kEvidenceHoldRelease;
    resolved.hold_id = h.id;
    d.emit(job_stream(h.job), std::move(resolved));
  }
  return d;
}

}  // namespace runledger::holds
