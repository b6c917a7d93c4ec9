// replay --compare: the state a replay of the log alone rebuilds, against
// the state the server serves from the same folder (its snapshot plus the
// tail of the log for live entities, the `views` column family for finished
// ones), listing every difference.
#pragma once

#include <string>
#include <vector>

#include "events/event_store.h"
#include "tools/cli_state.h"

namespace runledger::cli {

// What the server would serve: live entities from load_state() (snapshot +
// tail, finished ones evicted), finished jobs and released holds from the
// views column family (a live entity wins over a stored view, as in the
// HTTP reads). *seq is the seq the server's state covers.
Status server_views(const EventStore& store, ViewMap* out, uint64_t* seq);

// One line per difference, e.g.
//   job/j1 steps[2].state: replay "DONE", server "RUNNING"
//   hold/h1: only in the server's state
// Empty when the two are equal.
std::vector<std::string> differences(const ViewMap& replay, const ViewMap& server);

}  // namespace runledger::cli
