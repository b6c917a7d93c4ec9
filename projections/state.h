// State: everything the deciders decide against, folded from the log.
// Owned by one thread at a time (the engine's sequencer, or a replay).
#pragma once

#include <cstdint>

#include "base/sha256.h"
#include "events/event_generated.h"
#include "projections/connector.h"
#include "projections/hold.h"
#include "projections/job.h"

namespace runledger {

struct State {
  uint64_t last_seq = 0;  // seq of the last event folded
  Hash last_hash{};       // its SHA-256 (the next event's prev_hash)
  jobs::JobsState jobs;
  connectors::ConnectorsState connectors;
  holds::HoldsState holds;
};

// Folds one event into the state: dispatches on the payload type to the
// job, connector or hold fold and advances last_seq. Does not touch
// last_hash (the caller knows the bytes).
void evolve(State& s, const fb::Event& e);

}  // namespace runledger
