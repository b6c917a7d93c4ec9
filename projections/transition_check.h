// check_transition(): is one logged event a transition the rules of
// docs/domain.md allow from the state folded before it? The deciders only ever
// emit allowed transitions, so a log that holds a forbidden one was written
// by something else (a bug, a hand, a forged import). `runledger verify`
// calls it on every event before folding it.
//
// It judges the event against `before` alone: the entity the event's stream
// names (and, for a hold placed for a job, that job) must be in `before` when
// it exists, finished or not. Callers that keep finished entities out of
// memory load them first (engine/entities.h hydrate()).
//
// Thread-compatible: pure, reads `before` and the event only.
#pragma once

#include "base/status.h"
#include "events/event_generated.h"
#include "projections/state.h"

namespace runledger {

// OK when allowed; otherwise kCorruption carrying the event's seq, whose
// message says which rule the event breaks, e.g.
// "JobStarted on job/j1: attempt 1 is QUEUED, JobStarted needs LEASED".
Status check_transition(const State& before, const fb::Event& e);

}  // namespace runledger
