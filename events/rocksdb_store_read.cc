// RocksDbStore reads by seq and by key (the stream index is read in
// rocksdb_store_index.cc). Every event read back is verified (FlatBuffers
// verifier, key seq == envelope seq) and handed to the visitor over the iterator's own
// bytes: a scan allocates nothing per event. RocksDB's block checksums are
// checked on every read.
#include <string>

#include "events/keys.h"
#include "events/rocksdb_store.h"
#include "events/rocksdb_store_internal.h"

namespace runledger {

using rocksdb_store::check_stored_event;
using rocksdb_store::checked_reads;
using rocksdb_store::from_rocksdb;
using rocksdb_store::slice;
using rocksdb_store::view;

namespace {

// Ranges longer than this are scans (replay, verify, export): they would only
// evict hotter blocks from the cache.
constexpr uint64_t kCachedRangeEventsMax = 10'000;

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
