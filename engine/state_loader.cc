#include "engine/state_loader.h"

#include <chrono>
#include <set>
#include <string>

#include "engine/entities.h"
#include "projections/snapshot.h"

namespace runledger {
namespace {

// Checks the envelope continues the chain; the store already verified the
// buffer and that the key's seq matches.
Status check_continuity(const State& s, const fb::Event& e) {
  if (e.seq() != s.last_seq + 1) {
    return Status::Corruption("gap in sequence: expected " + std::to_string(s.last_seq + 1) +
                                  ", found " + std::to_string(e.seq()),
                              s.last_seq + 1);
  }
  const auto* prev = e.prev_hash();
  if (prev->size() != s.last_hash.size() ||
      !std::equal(prev->begin(), prev->end(), s.last_hash.begin())) {
    return Status::Corruption("hash chain broken: prev_hash does not match the previous event",
                              e.seq());
  }
  return Status::Ok();
}

}  // namespace

Status load_state(const EventStore& store, const LoadOptions& options, State* out,
                  LoadReport* report) {
  auto start = std::chrono::steady_clock::now();
  State s;
  *report = LoadReport{};
  if (options.use_snapshot) {
    std::string snap;
    Status st = store.get_snapshot(&snap);
    if (st.ok()) {
      State from_snapshot;
      st = decode_snapshot(snap, &from_snapshot);
      if (!st.ok()) return st;
      if (options.until_seq == 0 || from_snapshot.last_seq <= options.until_seq) {
        s = std::move(from_snapshot);
        report->snapshot_seq = s.last_seq;
      }
    } else if (st.code() != Status::Code::kNotFound) {
      return st;
    }
  }
  std::set<std::string> touched;
  Status inner;
  Status st = store.read_range(
      s.last_seq, options.until_seq, [&](const fb::Event& e, std::string_view bytes) {
        inner = check_continuity(s, e);
        if (!inner.ok()) return false;
        std::string stream = e.stream()->str();
        // The snapshot holds live entities only: an event of one that had
        // finished before it needs that entity's earlier history first.
        if (e.stream_version() > 1 && !in_memory(s, stream)) {
          inner = hydrate(store, s, stream, e.seq() - 1);
          if (!inner.ok()) return false;
        }
        evolve(s, e);
        s.last_hash = sha256(bytes);
        touched.insert(std::move(stream));
        ++report->replayed;
        if (options.progress && report->replayed % 100000 == 0) options.progress(report->replayed);
        return true;
      });
  if (st.ok()) st = inner;
  if (!st.ok()) {
    if (!options.tolerate_damage || st.code() != Status::Code::kCorruption) return st;
    report->damage = st;
  }
  if (options.evict_finished) {
    for (const auto& stream : touched) evict_if_finished(s, stream);
  }
  report->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace runledger
