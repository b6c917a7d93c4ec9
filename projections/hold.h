// Holds and the start gate (spec: docs/domain.md section 3).
//
// A hold stops automatic re-execution where an earlier execution's fate is
// unknown. EXECUTION_STATE_UNKNOWN blocks its target (no claim hands out a
// job for it, the gate says no); RESULT_UNKNOWN does not block and is listed
// as needing recovery until released. Release needs evidence.
// Thread-compatible: only the sequencer touches a State.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "events/event_generated.h"
#include "projections/decision.h"

namespace runledger {
struct State;
}

namespace runledger::holds {

inline constexpr const char* kExecutionStateUnknown = "EXECUTION_STATE_UNKNOWN";
inline constexpr const char* kResultUnknown = "RESULT_UNKNOWN";
inline constexpr size_t kReasonBytesMax = 4096;
inline constexpr size_t kNoteBytesMax = 4096;
// How a hold release resolves a STALE attempt (AttemptResolved.evidence).
inline constexpr const char* kEvidenceHoldRelease = "hold_release";

// A hold has one exit: open -> released (HoldReleased, with evidence;
// hold_commands.h), after which it never changes.
struct Hold {
  std::string id;
  std::string target;
  std::string kind;
  std::string job;  // empty: none
  int attempt = 0;  // 0: none
  std::string reason;
  std::string placed_by;
  int64_t placed_at_ms = 0;
  bool released = false;
  std::string released_by;
  int64_t released_at_ms = 0;
  std::string release_note;
  bool execution_stopped = false;
  std::string outcome;  // SUCCEEDED | FAILED | empty
  uint32_t version = 0;

  friend bool operator==(const Hold&, const Hold&) = default;
};

struct HoldsState {
  std::map<std::string, Hold, std::less<>> by_id;
  // target -> open EXECUTION_STATE_UNKNOWN holds (ids), the blocking ones.
  std::map<std::string, std::set<std::string>> blocking_by_target;
  // target -> open RESULT_UNKNOWN holds (ids): they do not block, but the
  // gate lists them as needing recovery.
  std::map<std::string, std::set<std::string>> recovery_by_target;
  // kind -> number of open holds, for metrics. A kind with none has no entry,
  // so the index equals one rebuilt from by_id.
  std::map<std::string, size_t> open_by_kind;

  friend bool operator==(const HoldsState&, const HoldsState&) = default;
};

struct Place {
  std::string id;  // fresh, made by the facade
  std::string target;
  std::string kind;
  std::string reason;
  std::string job;  // optional
};
struct ReleaseHold {
  std::string id;
  std::string note;
  std::optional<bool> execution_stopped;
  std::optional<std::string> outcome;  // SUCCEEDED | FAILED
};

// Place: 422 for a bad kind, a missing or oversized reason, a missing
// target, or a job on another target; 409 duplicate_id; 404 for an unknown
// job. The hold records the job's latest attempt.
Decision decide(const State& s, const Place& c, const Context& ctx);
// Release: 404 unknown, 409 already released, 422 for missing evidence
// (note; execution_stopped for EXECUTION_STATE_UNKNOWN; outcome when the
// hold is the one placed with a STALE attempt, whose resolution it then
// records on the job stream). A refusal emits nothing.
Decision decide(const State& s, const ReleaseHold& c, const Context& ctx);

// Folds HoldPlaced / HoldReleased (stream hold/<id>), keeping every index exact.
void evolve(State& s, const fb::Event& e);
// Released: the hold may leave memory.
bool finished(const Hold& h);

// The first open blocking hold on `target`, or nullptr.
const Hold* blocking_hold(const State& s, const std::string& target);
// {"target", "may_start", "reasons": [...], "recovery_needed": [...]}
// (docs/api.md, the gate). Reasons: one {"code": "hold"} per open blocking
// hold, {"code": "attempt_active"} when an attempt holds the target.
nlohmann::json gate(const State& s, const std::string& target);

// The hold as the HTTP API shows it (docs/api.md "A hold in JSON").
nlohmann::json view(const Hold& h);
// Every field, for comparing states.
nlohmann::json to_json(const Hold& h);
// Inserts (or replaces) a hold and rebuilds its index entries.
void adopt(State& s, Hold h);
// Removes a hold from memory and from every index.
void evict(State& s, const std::string& id);

}  // namespace runledger::holds
