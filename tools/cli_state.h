// The state the CLI rebuilds from a data folder, and that state as the HTTP
// API shows it: the fold of the log alone (no snapshot, finished entities
// kept) that replay and timeline use, and the views of its entities.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "events/event_store.h"
#include "projections/state.h"
#include "tools/cli_common.h"

namespace runledger::cli {

struct FoldLimits {
  uint64_t until_seq = 0;           // 0: to the end
  std::optional<int64_t> until_ms;  // stop before the first event recorded after this
};

// Folds the log from seq 1 into *out, keeping finished entities, checking
// that seqs run without a gap and that the hash chain holds (a damaged log
// is an error here: `verify` says where). Events are recorded in commit
// order with the engine's clock, so `until_ms` ends the fold at the first
// event recorded after it.
Status fold_log(const EventStore& store, const FoldLimits& limits, State* out, Progress* progress);

// Stream name -> the entity as the HTTP API shows it.
using ViewMap = std::map<std::string, nlohmann::json>;

// Every entity in memory.
ViewMap views_of(const State& s);
// The entity behind `stream`, nullopt when it is not in `s`.
std::optional<nlohmann::json> view_of(const State& s, std::string_view stream);

}  // namespace runledger::cli
