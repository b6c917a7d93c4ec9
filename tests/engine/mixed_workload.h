// A fixed workload that leaves the engine holding one of nearly everything:
// jobs QUEUED, LEASED, RUNNING, STALE (with its hold), blocked, cancel
// requested, waiting for a retry, rerun, and finished ones that left memory;
// connectors idle, syncing with documents, paused, scheduled, deleted; holds
// open and released. Restart and replay tests compare states after it.
#pragma once

#include <string>

#include "engine/clock.h"
#include "engine/engine.h"

namespace runledger::testing {

// Runs the workload with ids starting with `prefix`. Returns an empty string
// when every command got the reply it should, else the first that did not.
std::string run_mixed_workload(Engine& e, ManualClock& clock, const std::string& prefix);

}  // namespace runledger::testing
