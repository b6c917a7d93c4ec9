// RocksDbStore reads. Every event read back is verified (FlatBuffers verifier,
// key seq == envelope seq) and handed to the visitor over the iterator's own
// bytes: a scan allocates nothing per event. RocksDB's block checksums are
// checked on every read.
#include <string>

#include "events/keys.h"
#include "events/rocksdb_store.h"
#include "events/rocksdb_store_internal.h"

namespace runledger {

using rocksdb_store::check_stored_event;
using rocksdb_store::from_rocksdb;
using rocksdb_store::slice;
using rocksdb_store::view;

namespace {

// Ranges longer than this are scans (replay, verify, export): they would only
// evict hotter blocks from the cache.
constexpr uint64_t kCachedRangeEventsMax = 10'000;

rocksdb::ReadOptions checked_reads() {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  return ro;
}

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

}  // namespace

Status RocksDbStore::read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const {
  if (until != 0 && until <= after) return Status::Ok();
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  if (until != 0 && until <= after) return Status::Ok();
  rocksdb::ReadOptions ro = checked_reads();
  char lower_key[keys::kSeqBytes];
  char upper_key[keys::kSeqBytes];
  rocksdb::Slice lower = slice(keys::log_key(after + 1, lower_key));
  rocksdb::Slice upper;
  ro.iterate_lower_bound = &lower;
  if (until != 0 && until != UINT64_MAX) {
    upper = slice(keys::log_key(until + 1, upper_key));
    ro.iterate_upper_bound = &upper;
  }
  ro.fill_cache = until != 0 && until - after <= kCachedRangeEventsMax;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kLog)));
  rocksdb_store::AlignedEventBytes scratch;
  uint64_t expected = after + 1;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    uint64_t seq = 0;
    if (!keys::parse_log_key(view(it->key()), &seq)) {
      return Status::Corruption("malformed log key after seq " + std::to_string(expected - 1),
                                expected);
    }
    if (seq != expected) {
      return Status::Corruption("seq " + std::to_string(expected) +
                                    " is missing from the log (the next stored seq is " +
                                    std::to_string(seq) + ")",
                                expected);
    }
    std::string_view bytes = view(it->value());
    const fb::Event* e = nullptr;
    if (Status s = check_stored_event(seq, &bytes, scratch, &e); !s.ok()) return s;
    if (!visit(*e, bytes)) return Status::Ok();
    ++expected;
  }
  return from_rocksdb(it->status(), "reading the log at seq " + std::to_string(expected), expected);
}

Status RocksDbStore::read_event(uint64_t seq, std::string* bytes) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  char key[keys::kSeqBytes];
  rocksdb::PinnableSlice value;
  rocksdb::Status rs = db_->Get(checked_reads(), cf(kLog), slice(keys::log_key(seq, key)), &value);
  if (rs.IsNotFound()) return Status::NotFound("seq " + std::to_string(seq) + " is not in the log");
  if (!rs.ok()) return from_rocksdb(rs, "reading seq " + std::to_string(seq), seq);
  const fb::Event* e = nullptr;
  rocksdb_store::AlignedEventBytes scratch;
  std::string_view stored = view(value);
  if (Status s = check_stored_event(seq, &stored, scratch, &e); !s.ok()) return s;
  bytes->assign(stored.data(), stored.size());
  return Status::Ok();
}

Status RocksDbStore::read_stream(std::string_view stream, uint64_t until_seq,
                                 const EventVisitor& visit) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  if (!keys::valid_stream_name(stream)) return Status::Invalid("invalid stream name");
  // One snapshot for the index and the log: an append in between cannot show
  // an index entry without its event.
  SnapshotGuard snapshot(db_.get(), db_writable_);
  rocksdb::ReadOptions ro = checked_reads();
  ro.snapshot = snapshot.get();
  std::string lower_key, upper_key;
  keys::stream_index_bounds(stream, &lower_key, &upper_key);
  rocksdb::Slice lower = slice(lower_key), upper = slice(upper_key);
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kStreamIndex)));
  rocksdb::PinnableSlice value;
  rocksdb_store::AlignedEventBytes scratch;
  uint32_t expected = 1;
  for (it->Seek(lower); it->Valid(); it->Next(), ++expected) {
    std::string_view key_stream;
    uint32_t version = 0;
    const bool well_formed = keys::parse_stream_index_key(view(it->key()), &key_stream, &version) &&
                             it->value().size() == keys::kSeqBytes;
    const uint64_t seq = well_formed ? keys::get_be64(it->value().data()) : 0;
    auto where = [&] { return std::string(stream) + " version " + std::to_string(expected); };
    if (!well_formed) return Status::Corruption("malformed stream index entry for " + where());
    if (version != expected) {
      return Status::Corruption("the stream index has no entry for " + where(), seq);
    }
    if (until_seq != 0 && seq > until_seq) break;
    char log_key[keys::kSeqBytes];
    value.Reset();
    rocksdb::Status rs = db_->Get(ro, cf(kLog), slice(keys::log_key(seq, log_key)), &value);
    if (rs.IsNotFound()) {
      return Status::Corruption("the stream index points " + where() + " at a missing seq", seq);
    }
    if (!rs.ok()) return from_rocksdb(rs, "reading seq " + std::to_string(seq), seq);
    const fb::Event* e = nullptr;
    std::string_view bytes = view(value);
    if (Status s = check_stored_event(seq, &bytes, scratch, &e); !s.ok()) return s;
    if (e->stream()->string_view() != stream || e->stream_version() != version) {
      return Status::Corruption(
          "the stream index points " + where() + " at an event of another stream or version", seq);
    }
    if (!visit(*e, bytes)) return Status::Ok();
  }
  return from_rocksdb(it->status(), "reading the stream index of " + std::string(stream));
}

Status RocksDbStore::stream_version(std::string_view stream, uint32_t* version) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  return read_stream_version(stream, version);
}

Status RocksDbStore::read_stream_version(std::string_view stream, uint32_t* version) const {
  if (!keys::valid_stream_name(stream)) return Status::Invalid("invalid stream name");
  rocksdb::ReadOptions ro = checked_reads();
  std::string lower_key, upper_key;
  keys::stream_index_bounds(stream, &lower_key, &upper_key);
  rocksdb::Slice lower = slice(lower_key), upper = slice(upper_key);
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kStreamIndex)));
  it->SeekToLast();
  *version = 0;
  if (it->Valid()) {
    std::string_view key_stream;
    if (!keys::parse_stream_index_key(view(it->key()), &key_stream, version)) {
      return Status::Corruption("malformed stream index entry for " + std::string(stream));
    }
    return Status::Ok();
  }
  return from_rocksdb(it->status(), "reading the stream index of " + std::string(stream));
}

Status RocksDbStore::scan_stream_index(const StreamIndexVisitor& visit) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  rocksdb::ReadOptions ro = checked_reads();
  // One pass over the whole family: blocks read once, not kept in the cache.
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kStreamIndex)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    StreamIndexEntry entry;
    entry.well_formed =
        keys::parse_stream_index_key(view(it->key()), &entry.stream, &entry.version) &&
        it->value().size() == keys::kSeqBytes;
    if (entry.well_formed) {
      entry.seq = keys::get_be64(it->value().data());
    } else {
      entry = StreamIndexEntry{{}, 0, 0, false};
    }
    if (!visit(entry)) return Status::Ok();
  }
  return from_rocksdb(it->status(), "scanning the stream index");
}

Status RocksDbStore::get(Family family, std::string_view key, std::string* value) const {
  rocksdb::Status rs = db_->Get(checked_reads(), cf(family), slice(key), value);
  if (rs.IsNotFound()) return Status::NotFound("no record under this key");
  return from_rocksdb(rs, "reading a record");
}

Status RocksDbStore::get_idempotency(std::string_view key, std::string* value) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  return get(kIdempotency, key, value);
}

Status RocksDbStore::get_view(std::string_view key, std::string* value) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  return get(kViews, key, value);
}

Status RocksDbStore::get_snapshot(std::string* value) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  return get(kSnapshot, keys::kSnapshotKey, value);
}

Status RocksDbStore::scan_views(
    std::string_view prefix, std::string_view after_key,
    const std::function<bool(std::string_view key, std::string_view value)>& visit) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(checked_reads(), cf(kViews)));
  const bool resume = !after_key.empty() && after_key >= prefix;
  it->Seek(slice(resume ? after_key : prefix));
  if (resume && it->Valid() && view(it->key()) == after_key) it->Next();
  for (; it->Valid(); it->Next()) {
    const std::string_view key = view(it->key());
    if (key.substr(0, prefix.size()) != prefix) break;
    if (!visit(key, view(it->value()))) return Status::Ok();
  }
  return from_rocksdb(it->status(), "scanning the views");
}

}  // namespace runledger
