// ShadowFold: fold(log), kept up to date step by step. It reads the events
// back from the store as they were written (not the engine's memory), folds
// them into a State of its own, and loads and drops finished entities the way
// the engine does, so after every step its State must equal the engine's
// (invariant 3) without replaying the whole log each time.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/event_store.h"
#include "projections/state.h"

namespace runledger::testing {

// The events a step added to the log.
struct LogTail {
  std::vector<std::string> types;
  std::set<std::string> streams;
  std::set<std::string> command_ids;
  std::string error;  // reading or folding failed
};

class ShadowFold {
 public:
  // Folds every event after the last one folded.
  LogTail catch_up(const EventStore& store);
  const State& state() const { return state_; }
  // Events folded so far, by type.
  const std::map<std::string, size_t>& types_seen() const { return types_seen_; }

 private:
  State state_;
  std::map<std::string, size_t> types_seen_;
};

// An entity's lossless form and view, by stream name; null when not in
// memory. What the short form of the fold check compares.
nlohmann::json entity_json(const State& s, const std::string& stream);

}  // namespace runledger::testing
