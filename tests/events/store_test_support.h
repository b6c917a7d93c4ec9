// Helpers for the store tests: building valid chains of encoded events,
// opening stores, and reaching under the store into RocksDB and its files to
// damage what it wrote.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>

#include "events/event_store.h"

namespace runledger::testing {

// Builds events that continue a log the way the engine's sequencer does:
// gapless seqs, per-stream versions, the hash chain.
class LogBuilder {
 public:
  // The next event of the log, on `stream`.
  EncodedEvent next(const std::string& stream);
  // `count` events, the i-th on streams[i % streams.size()].
  AppendBatch batch(const std::vector<std::string>& streams, size_t count);
  // Encodes an event with every envelope field given: to forge damage.
  static std::string encode(uint64_t seq, const std::string& stream, uint32_t version,
                            const Hash& prev_hash);

  uint64_t seq() const { return seq_; }
  const Hash& hash() const { return hash_; }

 private:
  uint64_t seq_ = 0;
  Hash hash_{};
  std::map<std::string, uint32_t> versions_;
};

StoreOptions read_only_mode();
StoreOptions secondary_mode(const std::string& scratch_dir);

// Opens a store, throwing when it does not open (the test then fails).
std::unique_ptr<EventStore> open_store(const std::string& dir, StoreOptions options = {});

// Every event of the store, as stored, in seq order (throws on a bad read).
std::vector<std::string> all_events(const EventStore& store);

// An idempotency value: the 8-byte big-endian recorded_at, then `reply`.
std::string idempotency_value(int64_t recorded_at_ms, std::string_view reply);

// The same RocksDB database opened directly, with no store on top: what a
// disk fault or a careless hand could do to it. Only while no store has the
// folder open.
class RawDb {
 public:
  explicit RawDb(const std::string& dir);
  ~RawDb();
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void put(const std::string& family, std::string_view key, std::string_view value);
  void remove(const std::string& family, std::string_view key);
  std::string get(const std::string& family, std::string_view key);
  // Writes every memtable to table files, so damage can be done to them.
  void flush();
  // The table files of a column family (full paths).
  std::vector<std::string> table_files(const std::string& family);

  static std::string log_key(uint64_t seq);

 private:
  rocksdb::ColumnFamilyHandle* family(const std::string& name);

  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// Flips the bits of one byte of a file at `offset`.
void flip_byte(const std::string& path, uint64_t offset);
// The write-ahead log file with the highest number in `dir`.
std::string newest_wal(const std::string& dir);
uint64_t file_size(const std::string& path);

}  // namespace runledger::testing
