// EventStore: the durable, append-only event log and the few records that
// must commit atomically with it (idempotency replies, finished-entity views,
// the projection snapshot).
//
// Contract of every backend:
//  - append() is all or nothing and durable (fsynced) when it returns OK;
//  - global seqs are gapless from 1; each stream's versions are contiguous
//    from 1; an append that would break either is refused with kConflict and
//    writes nothing;
//  - every read verifies what it reads (FlatBuffers verifier; the key's seq
//    equals the envelope's) and reports kCorruption with the seq;
//  - reads are safe from any thread, concurrently with one appending thread.
// Only one thread appends (the sequencer); append() is not re-entrant.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "events/event_codec.h"

namespace runledger {

struct EncodedEvent {
  uint64_t seq = 0;
  std::string stream;
  uint32_t stream_version = 0;
  std::string bytes;  // encode_event() output
};

// One group commit: the events of many commands plus their side records.
struct AppendBatch {
  std::vector<EncodedEvent> events;  // ascending seq, contiguous
  // Idempotency key -> the first reply (opaque to the store).
  std::vector<std::pair<std::string, std::string>> idempotency;
  // View key -> value; nullopt deletes the view.
  std::vector<std::pair<std::string, std::optional<std::string>>> views;
  // The projection snapshot covering every event up to and including the
  // last event of this batch (opaque to the store); written atomically.
  std::optional<std::string> snapshot;
  bool empty() const { return events.empty() && idempotency.empty() && views.empty() && !snapshot; }
};

// Called per event in order; the pointer is valid only during the call.
// Return false to stop early.
using EventVisitor = std::function<bool(const fb::Event& event, std::string_view bytes)>;
// One entry of the stream index as stored. `well_formed` is false when its key
// or value cannot be parsed (stream, version and seq are then empty or 0).
struct StreamIndexEntry {
  std::string_view stream;
  uint32_t version = 0;
  uint64_t seq = 0;
  bool well_formed = true;
};
using StreamIndexVisitor = std::function<bool(const StreamIndexEntry& entry)>;

struct StoreOptions {
  bool read_only = false;  // open without write access (CLI, forensics)
  bool create_if_missing = true;
  // Open as a RocksDB secondary instance: reads a folder that a running
  // server has open (CLI while the server runs). Implies read_only.
  bool secondary = false;
  std::string secondary_path;  // scratch folder for the secondary instance
  // Events a store indexes in memory before an append writes their stream
  // index runs (see rocksdb_store.h); 0: the store's default. Tests set it
  // low to cross many checkpoints.
  size_t index_checkpoint_events = 0;
};

class EventStore {
 public:
  virtual ~EventStore() = default;

  // Durable when OK. kConflict when seq/versions do not continue the log,
  // kIoError when the disk refuses; nothing is written in either case.
  virtual Status append(const AppendBatch& batch) = 0;

  // The last seq in the log (0 when empty) and its event's hash (zeros when empty).
  virtual uint64_t last_seq() const = 0;
  virtual Hash last_hash() const = 0;

  // Events with after < seq <= until (until 0 = to the end), in order.
  virtual Status read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const = 0;
  // One event by seq; kNotFound when absent.
  virtual Status read_event(uint64_t seq, std::string* bytes) const = 0;
  // A stream's events in version order, only those with seq <= until_seq
  // (0 = all). OK with no calls when the stream does not exist.
  virtual Status read_stream(std::string_view stream, uint64_t until_seq,
                             const EventVisitor& visit) const = 0;
  // A stream's events in version order from the first whose version is
  // above `after_version` and seq above `after_seq`; the events before it
  // are not read, so a page costs what it returns. OK with no calls when
  // the stream does not exist.
  virtual Status read_stream_from(std::string_view stream, uint32_t after_version,
                                  uint64_t after_seq, const EventVisitor& visit) const {
    return read_stream(stream, 0, [&](const fb::Event& e, std::string_view bytes) {
      if (e.stream_version() <= after_version || e.seq() <= after_seq) return true;
      return visit(e, bytes);
    });
  }
  // The stream's latest version, 0 when the stream does not exist.
  virtual Status stream_version(std::string_view stream, uint32_t* version) const = 0;
  // Every entry of the stream index in key order (a stream's entries are
  // together, by version), as stored, without reading the events.
  virtual Status scan_stream_index(const StreamIndexVisitor& visit) const = 0;

  virtual Status get_idempotency(std::string_view key, std::string* value) const = 0;
  // Deletes idempotency records older than `before_ms` (recorded_at is the
  // first 8 bytes of the value, big-endian ms; see engine/idempotency.h).
  virtual Status purge_idempotency(int64_t before_ms) = 0;

  virtual Status get_view(std::string_view key, std::string* value) const = 0;
  // Views whose key starts with prefix, in key order, starting after
  // `after_key` (exclusive; empty = from the start).
  virtual Status scan_views(
      std::string_view prefix, std::string_view after_key,
      const std::function<bool(std::string_view key, std::string_view value)>& visit) const = 0;

  // Stores `snapshot` (see AppendBatch::snapshot) as covering every event
  // appended so far, which must be durable already. It may reach the disk
  // after this returns, or never if the process dies first: then the one
  // before it stays, which is as good (a snapshot only saves folding; the log
  // holds everything). By default it is appended alone, synced.
  virtual Status put_snapshot(const std::string& snapshot) {
    AppendBatch b;
    b.snapshot = snapshot;
    return append(b);
  }
  // The latest snapshot, kNotFound when none was written.
  virtual Status get_snapshot(std::string* value) const = 0;

  // Writes out to table files what the store holds only in memory and its
  // write-ahead log, so that a start needs nothing from that log: the last
  // step of a clean stop, after which a write-ahead log cut short loses no
  // acknowledged event. A store with no such log has nothing to do.
  virtual Status flush_to_tables() { return Status::Ok(); }

  // For secondary instances: catch up with the primary's latest writes.
  virtual Status refresh() = 0;

  // Reads every table file of the log and checks its block checksums, as a
  // fold of the snapshot and the tail would not: the events before the
  // snapshot are read only when asked for. kCorruption naming the file (and
  // the seqs it holds) at the first bad block. Also checks that the events
  // not yet in a table file (recovered from the write-ahead log) follow the
  // last one that is, with no seq missing: kCorruption naming the first
  // missing seq.
  virtual Status verify_log_checksums() const = 0;

  // OK unless the store could only be opened by leaving damage behind: a
  // reading store opens past a damaged record in the middle of RocksDB's
  // write-ahead log, and the events of that record and of any after it in
  // its block are missing. Then the kCorruption that a writable open met.
  virtual Status open_damage() const { return Status::Ok(); }
  // OK unless a reading store opened past a damaged index checkpoint record
  // (index_covers malformed, or past the end of the log), which a writable
  // open refuses: then that kCorruption. Its stream reads stay whole: they
  // index from the log in memory what the record no longer says is in the
  // family (all of it when the record is malformed).
  virtual Status index_damage() const { return Status::Ok(); }

  // What the store holds in memory, by part, in bytes (for benchmarks and
  // /metrics); empty when the store cannot tell.
  struct MemoryPart {
    std::string name;
    uint64_t bytes = 0;
  };
  virtual std::vector<MemoryPart> memory_parts() const { return {}; }
};

// Opens (or creates) the embedded RocksDB store in `dir`.
Status open_rocksdb_store(const std::string& dir, const StoreOptions& options,
                          std::unique_ptr<EventStore>* out);

}  // namespace runledger
