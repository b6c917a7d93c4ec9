// read_range_ahead: EventStore::read_range with the reading, and the SHA-256
// of each event that the hash chain needs, on a thread of its own. A fold of
// the whole log (replay, start-up) spends about half its time in the store
// (reading blocks, decompressing them, verifying each event) and hashing, and
// half in the fold; with the two on different cores a replay takes about as
// long as the slower half.
//
// The reader copies verified events into chunks (8-byte aligned, as
// FlatBuffers needs) and hands them over through a short queue, so memory
// stays bounded whatever the range. Same contract as read_range: events in
// order, `visit` on the calling thread, the pointer valid only during the
// call; events before a damaged one are visited, then its status returned;
// `visit` returning false stops the reader too.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "events/event_store.h"

namespace runledger {

// An EventVisitor that also gets sha256(bytes).
using HashedEventVisitor =
    std::function<bool(const fb::Event& event, std::string_view bytes, const Hash& sha256)>;

Status read_range_ahead(const EventStore& store, uint64_t after, uint64_t until,
                        const HashedEventVisitor& visit);

}  // namespace runledger
