// Live entities to and from the FlatBuffers tables of snapshot format 3
// (projections/snapshot.fbs). Lossless: read(write(x)) == x for every job,
// connector and hold a fold can make. Internal to projections/snapshot*.cc.
#pragma once

#include <stdexcept>

#include <flatbuffers/flatbuffers.h>

#include "projections/connector.h"
#include "projections/hold.h"
#include "projections/job.h"
#include "projections/snapshot_generated.h"

namespace runledger::snapshot_tables {

flatbuffers::Offset<snap::Job> write(flatbuffers::FlatBufferBuilder& b, const jobs::Job& j);
flatbuffers::Offset<snap::Connector> write(flatbuffers::FlatBufferBuilder& b,
                                           const connectors::Connector& c);
flatbuffers::Offset<snap::Hold> write(flatbuffers::FlatBufferBuilder& b, const holds::Hold& h);

// The tables must have passed the FlatBuffers verifier. A value no fold
// makes (a state out of range, a job without attempts, attempts out of
// order) throws std::invalid_argument.
jobs::Job read(const snap::Job& t);
connectors::Connector read(const snap::Connector& t);
holds::Hold read(const snap::Hold& t);

}  // namespace runledger::snapshot_tables
