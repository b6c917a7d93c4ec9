// RocksDbStore: the embedded EventStore, one RocksDB database in the data
// folder with the column families of events/keys.h.
//
// Durability: every append is one WriteBatch written with sync=true, so an
// acknowledged batch survives a crash whole, and an unacknowledged one is
// either whole or absent. The WAL is recovered with
// kTolerateCorruptedTailRecords: a torn record at the very end of the WAL (a
// batch whose fsync never returned) is dropped; corruption anywhere else fails
// the open instead of silently losing what follows it.
//
// The stream index: an append writes no index entry per event. Its events
// are indexed in memory once durable, and every kIndexCheckpointEvents
// events an append's WriteBatch also carries a run per stream of what memory
// holds (keys.h, open_stream_index.h). Every open indexes the events after
// the last checkpoint from the log, so a crash loses no index entry; a clean
// close writes a checkpoint, so the next open has nothing to read back.
//
// Concurrency: one thread appends (the sequencer); reads, last_seq() and
// last_hash() are safe from any thread at the same time. RocksDB's LOCK file
// keeps a second process from opening the folder for writing.
//
// Write errors: a failed append answers kIoError. Before returning, the store
// resumes RocksDB (or reopens the database when it cannot resume, read-only if
// the disk still refuses, so that reads go on) and reloads the tail from
// disk; the next append retries whatever is still needed. When the disk
// failed after the batch's bytes reached the WAL (a failed fsync), the batch
// is in the log after all: after kIoError, callers take last_seq() and the log
// as the truth (the engine rebuilds from them) rather than assume the batch
// is absent.
//
// Modes: writable (default), read_only (OpenForReadOnly: a frozen view of the
// folder as it was when opened), secondary (OpenAsSecondary: follows a
// running primary through refresh()). append() and purge_idempotency() answer
// kUnavailable in both read modes. A writable open refuses a log whose last
// event does not verify, or whose events after the last index checkpoint do
// not read back (kCorruption); the read modes open it anyway, taking
// last_seq from the keys and indexing the events up to the damage, so that
// verify_log() can walk to it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "events/event_store.h"
#include "events/open_stream_index.h"

namespace runledger {

// Most events one append() takes; the sequencer's batches are far smaller.
inline constexpr size_t kAppendBatchEventsMax = 100'000;
// Events indexed in memory before an append writes their runs to the
// stream_index family (open_stream_index.h). Bounds that memory and what
// an open after a crash reads back from the log to rebuild it (about 50 ms
// here); a larger interval would mean fewer, longer runs per stream.
inline constexpr size_t kIndexCheckpointEvents = 65'536;

class RocksDbStore final : public EventStore {
 public:
  ~RocksDbStore() override;
  RocksDbStore(const RocksDbStore&) = delete;
  RocksDbStore& operator=(const RocksDbStore&) = delete;

  Status append(const AppendBatch& batch) override;
  uint64_t last_seq() const override;
  Hash last_hash() const override;
  Status read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const override;
  Status read_event(uint64_t seq, std::string* bytes) const override;
  Status read_stream(std::string_view stream, uint64_t until_seq,
                     const EventVisitor& visit) const override;
  Status read_stream_from(std::string_view stream, uint32_t after_version, uint64_t after_seq,
                          const EventVisitor& visit) const override;
  Status stream_version(std::string_view stream, uint32_t* version) const override;
  Status scan_stream_index(const StreamIndexVisitor& visit) const override;
  Status get_idempotency(std::string_view key, std::string* value) const override;
  Status purge_idempotency(int64_t before_ms) override;
  Status get_view(std::string_view key, std::string* value) const override;
  Status scan_views(std::string_view prefix, std::string_view after_key,
                    const std::function<bool(std::string_view key, std::string_view value)>& visit)
      const override;
  Status put_snapshot(const std::string& snapshot) override;
  Status get_snapshot(std::string* value) const override;
  Status refresh() override;
  Status verify_log_checksums() const override;
  Status flush_to_tables() override;
  Status open_damage() const override { return open_damage_; }
  Status index_damage() const override;
  // table_readers.FAMILY (index and filter blocks held beside the block
  // cache for each table file), memtables, block_cache.
  std::vector<MemoryPart> memory_parts() const override;

 private:
  friend Status open_rocksdb_store(const std::string& dir, const StoreOptions& options,
                                   rocksdb::Env* env, std::unique_ptr<EventStore>* out);

  // Column family handles, in the order handles_ holds them.
  enum Family : size_t { kDefault, kLog, kStreamIndex, kIdempotency, kViews, kSnapshot, kCount };

  RocksDbStore(std::string dir, StoreOptions options, rocksdb::Env* env);
  Status open();
  // REQUIRES: db_mu_ held exclusively (or no other thread can see the store).
  // read_stream and read_stream_from: the events of `stream` with version
  // above after_version, seq above after_seq and, unless 0, at most until_seq.
  Status read_stream_span(std::string_view stream, uint32_t after_version, uint64_t after_seq,
                          uint64_t until_seq, const EventVisitor& visit) const;
  Status open_db(bool writable);
  void close_db();
  Status resume_after_write_error();
  // REQUIRES for the rest: db_mu_ held (shared is enough) and db_ open.
  Status write(const AppendBatch& batch);
  Status check_format();
  Status upgrade_first_format();
  Status load_tail();
  // The stream index (rocksdb_store_index.cc).
  Status rebuild_open_index();
  Status read_index_covers(uint64_t* seq) const;
  Status absent_from_family(std::string_view stream, bool* absent) const;
  Status absent_from_memory_and_family(std::string_view stream, bool* absent) const;
  Status stored_stream_version(std::string_view stream, uint32_t* version) const;
  void stage_index_checkpoint(uint64_t covers);
  Status write_index_checkpoint();
  void publish_index();
  Status last_seq_without_reading_events(uint64_t* seq) const;
  // An iterator over the log's events in memtables only.
  std::unique_ptr<rocksdb::Iterator> memtable_log_iterator() const;
  static Status verify_unflushed_log(const std::vector<rocksdb::LiveFileMetaData>& files,
                                     rocksdb::Iterator& memtables);
  Status stage_event(const EncodedEvent& event, uint64_t* seq, Hash* hash);
  Status stage_side_records(const AppendBatch& batch);
  Status open_stream(const std::string& stream, OpenStream** out);
  void roll_back_versions();
  Status read_stream_version(std::string_view stream, uint32_t* version) const;
  Status get(Family family, std::string_view key, std::string* value) const;
  rocksdb::ColumnFamilyHandle* cf(Family f) const { return handles_[f]; }
  bool writable() const { return !options_.read_only && !options_.secondary; }
  Status closed() const;

  const std::string dir_;
  const StoreOptions options_;
  const size_t index_checkpoint_events_;
  rocksdb::Env* const env_;  // nullptr: RocksDB's default
  // Shared by every use of the database, exclusive while it is reopened
  // after a write error (the only time db_ and handles_ change).
  mutable std::shared_mutex db_mu_;
  std::unique_ptr<rocksdb::DB> db_;                    // GUARDED_BY(db_mu_)
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // GUARDED_BY(db_mu_)
  bool db_writable_ = false;  // false while reopened read-only after a write error
  Status open_damage_;        // set once by open()

  // The tail of the log as readers see it: changed only after a batch is durable.
  mutable std::mutex tail_mu_;
  uint64_t last_seq_ = 0;  // GUARDED_BY(tail_mu_)
  Hash last_hash_{};       // GUARDED_BY(tail_mu_)

  // The stream index entries of the events after the last index checkpoint
  // ("index_covers" in the default family), which the stream_index family
  // does not hold yet, and the latest version of every active stream.
  // Readers copy what they need under index_mu_; only the appender changes
  // it (see open_stream_index.h).
  mutable std::mutex index_mu_;
  OpenStreamIndex open_index_;  // GUARDED_BY(index_mu_)
  Status index_damage_;         // GUARDED_BY(index_mu_): see index_damage()
  bool first_format_ = false;   // opened in keys::kFirstStoreFormat

  // Appender-only state (append() is not re-entrant): reused buffers, and
  // what the batch in progress staged in open_index_.
  rocksdb::WriteBatch batch_;
  std::string index_key_;
  std::string index_value_;
  // The index entries of the batch being written, for open_index_ once it
  // is durable; and whether the batch holds an index checkpoint.
  struct StagedIndexEntry {
    OpenStream* stream;
    uint64_t seq;
  };
  std::vector<StagedIndexEntry> staged_index_;
  bool checkpoint_staged_ = false;
  // The staged versions the batch changed, with their values before it.
  std::vector<std::pair<OpenStream*, uint32_t>> version_undo_;
  // A failed write leaves RocksDB refusing writes until it is resumed or
  // reopened.
  bool resume_needed_ = false;
};

// open_rocksdb_store() on the file system behind `env` (nullptr: the default
// one). Fault tests pass an Env whose files fail on command. `env` must
// outlive the store.
Status open_rocksdb_store(const std::string& dir, const StoreOptions& options, rocksdb::Env* env,
                          std::unique_ptr<EventStore>* out);

}  // namespace runledger
