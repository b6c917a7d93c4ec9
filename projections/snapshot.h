// Projection snapshot: the live part of a State (unfinished jobs, connectors,
// open holds) with the seq and hash it covers, so a restart folds only the
// tail of the log. Written by the engine in the same WriteBatch as the events
// up to `seq`; finished entities are not in it (they are read from the log).
//
// Format (JSON, versioned by "format"):
//   {"format": 1, "seq": N, "last_hash": "<64 hex>",
//    "jobs": [jobs::to_json...], "connectors": [...], "holds": [...]}
#pragma once

#include <string>
#include <string_view>

#include "events/status.h"
#include "projections/state.h"

namespace runledger {

inline constexpr int kSnapshotFormat = 1;

std::string encode_snapshot(const State& s);
// Replaces *out with the snapshot's state (indexes rebuilt). Corruption when
// the bytes are not a snapshot of a known format.
Status decode_snapshot(std::string_view bytes, State* out);

}  // namespace runledger
