// Projection snapshot: the live part of a State (unfinished jobs, connectors,
// open holds) with the seq and hash it covers, so a restart folds only the
// tail of the log. Written by the engine in the same WriteBatch as the events
// up to `seq`; finished entities are not in it (they are read from the log).
//
// Format 3 is written: FlatBuffers tables in hashed records
// (projections/snapshot_format3.h, projections/snapshot.fbs). Writing or
// reading 100,000 live jobs as JSON took seconds of the sequencer; as tables
// it builds no tree and parses no text.
//
// Formats 1 and 2 (JSON, before format 3) are not read: a start on such a
// snapshot folds the log, as it does for any snapshot it cannot use.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "projections/state.h"

namespace runledger {

inline constexpr int kSnapshotFormat = 3;

// Live entities only: a finished one still in memory is left out.
std::string encode_snapshot(const State& s);
// The same into *out, replacing its contents and reusing its capacity.
void encode_snapshot(const State& s, std::string* out);
// Replaces *out with the snapshot's state (indexes rebuilt). Corruption when
// the bytes are not a snapshot of a known format.
Status decode_snapshot(std::string_view bytes, State* out);
// The seq and hash a snapshot covers, without reading its entities (it
// verifies the head record only).
Status decode_snapshot_head(std::string_view bytes, uint64_t* seq, Hash* last_hash);

}  // namespace runledger
