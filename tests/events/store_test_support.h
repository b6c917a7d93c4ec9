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
#include "tests/support/raw_db.h"

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

}  // namespace runledger::testing
