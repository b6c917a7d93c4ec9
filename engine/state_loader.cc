#include "engine/state_loader.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "base/sha256.h"
#include "engine/entities.h"
#include "events/read_ahead.h"
#include "projections/snapshot.h"

namespace runledger {
Status check_continuity(const State& s, const fb::Event& e) {
  if (e.seq() != s.last_seq + 1) {
    return Status::Corruption("gap in sequence: expected seq " + std::to_string(s.last_seq + 1) +
                                  ", found " + std::to_string(e.seq()),
                              s.last_seq + 1);
  }
  const auto* prev = e.prev_hash();
  if (prev->size() != s.last_hash.size() ||
      !std::equal(prev->begin(), prev->end(), s.last_hash.begin())) {
    return Status::Corruption("hash chain broken: prev_hash is not the hash of the event before",
                              e.seq());
  }
  return Status::Ok();
}

// The head is checked first, so an unusable snapshot is not decoded.
Status restore_snapshot(const EventStore& store, uint64_t until_seq, State* out,
                        uint64_t* snapshot_seq) {
  *snapshot_seq = 0;
  std::string bytes;
  Status st = store.get_snapshot(&bytes);
  if (st.code() == Status::Code::kNotFound) return Status::Ok();
  if (!st.ok()) return st;
  uint64_t seq = 0;
  Hash hash{};
  if (st = decode_snapshot_head(bytes, &seq, &hash); !st.ok()) return st;
  if (seq == 0 || (until_seq != 0 && seq > until_seq)) return Status::Ok();
  std::string event;
  st = store.read_event(seq, &event);
  if (st.code() == Status::Code::kNotFound) {
    return Status::Corruption(
        "the snapshot covers seq " + std::to_string(seq) + " but the log ends before it", seq);
  }
  if (!st.ok()) return st;
  if (sha256(event) != hash) {
    return Status::Corruption(
        "the snapshot's hash is not the hash of the event at its seq " + std::to_string(seq), seq);
  }
  State from_snapshot;
  if (st = decode_snapshot(bytes, &from_snapshot); !st.ok()) return st;
  *out = std::move(from_snapshot);
  *snapshot_seq = seq;
  return Status::Ok();
}

Status load_state(const EventStore& store, const LoadOptions& options, State* out,
                  LoadReport* report) {
  auto start = std::chrono::steady_clock::now();
  State s;
  *report = LoadReport{};
  if (options.use_snapshot) {
    // A snapshot is a cache of the log: a damaged one, or one the log does
    // not bear out, is set aside and the whole log folded instead.
    Status st = restore_snapshot(store, options.until_seq, &s, &report->snapshot_seq);
    if (st.code() == Status::Code::kCorruption) {
      report->snapshot_problem = st;
    } else if (!st.ok()) {
      return st;
    }
  }
  // Folding from the first event and keeping every entity, each history
  // comes in order; after a snapshot, which holds live entities only, or once
  // finished entities leave memory during the fold, an event of one that had
  // finished needs that entity's earlier history first.
  const bool may_have_left = report->snapshot_seq != 0 || options.evict_finished;
  const uint64_t evict_every = std::max<uint64_t>(options.evict_every_events, 1);
  auto evict = [&] {
    if (options.before_eviction) options.before_eviction(s);
    evict_all_finished(s);
  };
  Status inner;
  Status st =
      read_range_ahead(store, s.last_seq, options.until_seq,
                       [&](const fb::Event& e, std::string_view, const Hash& hash) {
                         inner = check_continuity(s, e);
                         if (!inner.ok()) return false;
                         std::string_view stream = e.stream()->string_view();
                         if (may_have_left && e.stream_version() > 1 && !in_memory(s, stream)) {
                           inner = hydrate(store, s, stream, e.seq() - 1);
                           if (!inner.ok()) return false;
                         }
                         evolve(s, e);
                         s.last_hash = hash;
                         ++report->replayed;
                         if (options.progress && report->replayed % 100000 == 0)
                           options.progress(report->replayed);
                         if (options.evict_finished && report->replayed % evict_every == 0) evict();
                         return true;
                       });
  if (st.ok()) st = inner;
  if (!st.ok()) {
    if (!options.tolerate_damage || st.code() != Status::Code::kCorruption) return st;
    report->damage = st;
  }
  if (options.evict_finished) evict();
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace runledger
