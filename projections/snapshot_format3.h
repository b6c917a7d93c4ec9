// Snapshot format 3: the live entities as FlatBuffers tables, in records.
//
//   "RLSNAP3\n"                      8 bytes (a JSON snapshot starts with '{')
//   then records, each:
//     length      8 bytes, little endian: the FlatBuffer's size
//     sha256     32 bytes of the FlatBuffer
//     FlatBuffer  then zero bytes up to a multiple of 8
//   record 1 is a snap::Head (seq, last_hash, entity counts), every later one
//   a snap::Chunk of a few MiB of entities (projections/snapshot.fbs).
//
// Every record is hashed and verified before a table of it is read, so a
// damaged snapshot is Corruption, never a state that differs from the one
// written. Internal to projections/snapshot.cc.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "projections/state.h"

namespace runledger::snapshot_format3 {

// Replaces *out's contents (its capacity is reused).
void encode(const State& s, std::string* out);
bool is_format3(std::string_view bytes);
// Fills *out (expected empty); Corruption when the bytes are not a whole,
// undamaged snapshot of this format. May throw std::exception on a table
// whose values no fold makes.
Status decode(std::string_view bytes, State* out);
// Only the head record (verified): sets out->last_seq and out->last_hash.
Status decode_head(std::string_view bytes, State* out);

}  // namespace runledger::snapshot_format3
