// Helpers shared by the files of RocksDbStore (not part of any public API):
// turning RocksDB statuses into ours, and the check every stored event gets
// when it is read back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>

#include "base/status.h"
#include "events/event_codec.h"

namespace runledger::rocksdb_store {

inline std::string_view view(const rocksdb::Slice& s) { return {s.data(), s.size()}; }
inline rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

// Releases a RocksDB snapshot when the read that took it ends.
class SnapshotGuard {
 public:
  // Only a writable instance changes under a read; read-only and secondary
  // instances do not support snapshots (and need none).
  SnapshotGuard(rocksdb::DB* db, bool take)
      : db_(db), snapshot_(take ? db->GetSnapshot() : nullptr) {}
  ~SnapshotGuard() {
    if (snapshot_ != nullptr) db_->ReleaseSnapshot(snapshot_);
  }
  SnapshotGuard(const SnapshotGuard&) = delete;
  SnapshotGuard& operator=(const SnapshotGuard&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

// Reads that verify RocksDB's block checksums on the way.
inline rocksdb::ReadOptions checked_reads() {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  return ro;
}

// `what` says what was being done ("reading seq 12"); `seq` names the seq
// concerned when the status is a corruption.
Status from_rocksdb(const rocksdb::Status& s, std::string_view what, uint64_t seq = 0);

// An aligned home for event bytes. FlatBuffers reads scalars through typed
// pointers, so a buffer must start at an address aligned for its widest
// scalar; RocksDB hands out values at any offset. Aligned values are used
// in place (zero-copy); a misaligned one is copied here first.
class AlignedEventBytes {
 public:
  // `bytes` itself when aligned, else a copy valid until the next call.
  std::string_view hold(std::string_view bytes);

 private:
  std::vector<uint64_t> words_;
};

// Verifies the bytes stored under log key `key_seq`: they decode, and the
// envelope's seq is the key's. Corruption names `key_seq`. `*bytes` becomes
// the aligned bytes that `*event` points into.
Status check_stored_event(uint64_t key_seq, std::string_view* bytes, AlignedEventBytes& scratch,
                          const fb::Event** event);

}  // namespace runledger::rocksdb_store
