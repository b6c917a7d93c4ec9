// Holds and the start gate (spec: domain.md section 3).
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

struct Hold {
  std::string id;
  std::string target;
  std::string kind;
  std::string job;          // empty: none
  int attempt = 0;          // 0: none
  std::string reason;
  std::string placed_by;
  int64_t placed_at_ms = 0;
  bool released = false;
  std::string released_by;
  int64_t released_at_ms = 0;
  std::string release_note;
  bool execution_stopped = false;
  std::string outcome;      // SUCCEEDED | FAILED | empty
  uint32_t version = 0;
};

struct HoldsState {
  std::map<std::string, Hold> by_id;
  // target -> open EXECUTION_STATE_UNKNOWN holds (ids), the blocking ones.
  std::map<std::string, std::set<std::string>> blocking_by_target;
  std::map<std::string, size_t> open_by_kind;   // for metrics
};

struct Place {
  std::string id;           // fresh, made by the facade
  std::string target;
  std::string kind;
  std::string reason;
  std::string job;          // optional
};
struct ReleaseHold {
  std::string id;
  std::string note;
  std::optional<bool> execution_stopped;
  std::optional<std::string> outcome;   // SUCCEEDED | FAILED
};

Decision decide(const State& s, const Place& c, const Context& ctx);
Decision decide(const State& s, const ReleaseHold& c, const Context& ctx);

void evolve(State& s, const fb::Event& e);
bool finished(const Hold& h);

// The first open blocking hold on `target`, or nullptr.
const Hold* blocking_hold(const State& s, const std::string& target);
// {"target", "may_start", "reasons": [...]} (http-api.md, the gate).
nlohmann::json gate(const State& s, const std::string& target);

nlohmann::json view(const Hold& h);
nlohmann::json to_json(const Hold& h);
Hold from_json(const nlohmann::json& j);
void adopt(State& s, Hold h);
void evict(State& s, const std::string& id);

}  // namespace runledger::holds
