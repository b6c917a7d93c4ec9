// Stream-keyed operations on a State that the engine needs independently of
// the entity type: is it in memory, its stream version, load it from the log
// (hydrate), drop it when finished (evict), and the view kept in the store
// for finished entities.
//
// Streams are named and parsed by projections/stream_name.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "events/event_store.h"
#include "projections/state.h"
#include "projections/stream_name.h"

namespace runledger {

bool in_memory(const State& s, std::string_view stream);
// The entity's stream version, 0 when it is not in memory.
uint32_t version_in_memory(const State& s, std::string_view stream);
// Both that and is_finished() with one lookup.
struct EntityStatus {
  uint32_t version = 0;  // 0: not in memory
  bool finished = false;
  // In memory and finished: what eviction and a finished entity's stored
  // view are about.
  bool finished_in_memory() const { return version != 0 && finished; }
};
EntityStatus entity_status(const State& s, std::string_view stream);

// Loads an entity that left memory (or, at start-up, that the snapshot did
// not hold) by folding its stream's events with seq <= until_seq (0 = all)
// into a scratch state and adopting the result. No-op when already in memory
// or when the stream has no events; `*stored_none` (when given) tells the
// latter: the store was read and holds no event of the stream.
Status hydrate(const EventStore& store, State& s, std::string_view stream, uint64_t until_seq,
               bool* stored_none = nullptr);

// True when the entity behind the stream is finished (terminal job, released
// hold) or gone (deleted connector).
bool is_finished(const State& s, std::string_view stream);
// Removes the finished entity from memory; no-op for live ones.
void evict_if_finished(State& s, std::string_view stream);
// Removes every finished entity from memory (after a fold of the log).
void evict_all_finished(State& s);

// The API view of a finished entity, as stored in the `views` column family
// under its stream name; nullopt when the entity is not in memory or is live.
std::optional<std::string> finished_view(const State& s, std::string_view stream);

}  // namespace runledger
