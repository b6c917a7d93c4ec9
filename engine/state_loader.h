// Rebuilds the engine's live State from the store: the latest projection
// snapshot plus the tail of the log after it, verifying every event it reads
// (decodes, gapless seq, hash chain from the snapshot's hash). A snapshot
// that is damaged or disagrees with the log is set aside for a fold from the
// first event: the log is the truth. Finished entities are dropped from
// memory while folding and at the end (LoadOptions::evict_finished).
#pragma once

#include <cstdint>
#include <functional>

#include "events/event_store.h"
#include "projections/state.h"

namespace runledger {

struct LoadReport {
  uint64_t snapshot_seq = 0;  // 0: no snapshot, folded from the first event
  uint64_t replayed = 0;      // tail events folded
  double seconds = 0;
  Status damage;  // first problem found; ok() when the log is clean
  // Why the snapshot was set aside and the state folded from the first event
  // (it could not be read, or the log does not bear it out); ok() otherwise.
  Status snapshot_problem;
};

struct LoadOptions {
  // Stop at the first damaged event and return OK with the state before it
  // (report.damage says where); otherwise the damage is the returned error.
  bool tolerate_damage = false;
  uint64_t until_seq = 0;  // 0: to the end
  bool use_snapshot = true;
  // Drop finished entities from memory as the fold goes (after every
  // evict_every_events events) and at the end, as the engine does, so that
  // folding a long history holds about the live entities, not all of them;
  // an event of one that was dropped loads it back from its stream first. A
  // replay that shows the whole history keeps them.
  bool evict_finished = true;
  uint64_t evict_every_events = uint64_t{1} << 16;
  // Called with the state just before each such eviction (a caller that
  // counts finished entities sees them there).
  std::function<void(const State&)> before_eviction;
  // Progress callback (events folded so far), called now and then.
  std::function<void(uint64_t)> progress;
};

Status load_state(const EventStore& store, const LoadOptions& options, State* out,
                  LoadReport* report);

// Replaces *out with the store's snapshot, and sets *snapshot_seq to the seq
// it covers, if the log bears it out: the log holds that seq and the event
// there hashes to the snapshot's hash. *snapshot_seq 0 and *out untouched
// when there is none, or it lies past until_seq (0: no limit). Corruption
// says why a snapshot is not to be used; any other error is the store's.
Status restore_snapshot(const EventStore& store, uint64_t until_seq, State* out,
                        uint64_t* snapshot_seq);

// Whether `e` continues the log folded into `s`: its seq is the next one and
// its prev_hash is s.last_hash. Corruption naming the seq otherwise. (The
// store has verified the buffer and that the key's seq matches.)
Status check_continuity(const State& s, const fb::Event& e);

}  // namespace runledger
