// RocksDbStore writes. append() checks that a batch continues the log (seq,
// stream versions, hash chain), stages it into one WriteBatch and writes it
// with sync=true; nothing in memory changes unless the write succeeded.
// purge_idempotency() drops old idempotency records.
#include <string>

#include "events/keys.h"
#include "events/rocksdb_store.h"
#include "events/rocksdb_store_internal.h"

namespace runledger {

using rocksdb_store::from_rocksdb;
using rocksdb_store::slice;

namespace {

// Deletes per write while purging: bounds the memory of one WriteBatch.
constexpr size_t kPurgeDeletesPerWrite = 1'000;

bool same_hash(const flatbuffers::Vector<uint8_t>* stored, const Hash& expected) {
  return stored != nullptr && stored->size() == expected.size() &&
         std::equal(expected.begin(), expected.end(), stored->data());
}

}  // namespace

Status RocksDbStore::append(const AppendBatch& batch) {
  if (!writable()) return Status::Unavailable("the store is open read-only");
  if (batch.empty()) return Status::Ok();
  if (batch.events.size() > kAppendBatchEventsMax) {
    return Status::Invalid("a batch holds at most " + std::to_string(kAppendBatchEventsMax) +
                           " events");
  }
  if (resume_needed_) {
    if (Status s = resume_after_write_error(); !s.ok()) return s;
  }
  Status s = write(batch);
  if (s.code() == Status::Code::kIoError) {
    // Recover at once, so that last_seq() and every read tell what the disk
    // holds now; if the disk still refuses, the next append tries again.
    resume_needed_ = true;
    resume_after_write_error().IgnoreError();
  }
  return s;
}

Status RocksDbStore::write(const AppendBatch& batch) {
  std::shared_lock lock(db_mu_);
  if (!db_ || !db_writable_) return closed();
  uint64_t seq;
  Hash hash;
  {
    std::lock_guard tail_lock(tail_mu_);
    seq = last_seq_;
    hash = last_hash_;
  }
  batch_.Clear();
  version_undo_.clear();
  staged_index_.clear();
  checkpoint_staged_ = false;
  // Only the appender changes open_index_, so it reads it without the lock.
  if (!batch.events.empty() && open_index_.events() >= index_checkpoint_events_) {
    stage_index_checkpoint(seq);
  }
  Status staged;
  for (const EncodedEvent& e : batch.events) {
    staged = stage_event(e, &seq, &hash);
    if (!staged.ok()) break;
  }
  if (staged.ok()) staged = stage_side_records(batch);
  if (!staged.ok()) {
    roll_back_versions();
    return staged;
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status ws = db_->Write(wo, &batch_);
  if (!ws.ok()) {
    roll_back_versions();
    return Status::IoError("appending up to seq " + std::to_string(seq) + ": " + ws.ToString());
  }
  publish_index();
  std::lock_guard tail_lock(tail_mu_);
  last_seq_ = seq;
  last_hash_ = hash;
  return Status::Ok();
}

// Without the WAL and without a sync: a snapshot of many live entities is
// tens of MB, and writing it through the WAL held every batch behind it for
// a third of a second here. Its flush is asked for at once, so it reaches the
// disk within moments; a crash before that keeps the previous one (RocksDB
// recovers it from its table file or from the WAL it was written with).
Status RocksDbStore::put_snapshot(const std::string& snapshot) {
  std::shared_lock lock(db_mu_);
  if (!db_ || !db_writable_) return closed();
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  rocksdb::Status s = db_->Put(wo, cf(kSnapshot), slice(keys::kSnapshotKey), slice(snapshot));
  if (s.ok()) {
    rocksdb::FlushOptions fo;
    fo.wait = false;
    fo.allow_write_stall = true;
    s = db_->Flush(fo, cf(kSnapshot));
  }
  return from_rocksdb(s, "storing the snapshot");
}

// Checks that `event` continues the log after (*seq, *hash), adds its log
// record to the batch and its index entry to those published once the batch
// is durable, and advances *seq and *hash.
Status RocksDbStore::stage_event(const EncodedEvent& event, uint64_t* seq, Hash* hash) {
  const uint64_t next = *seq + 1;
  if (event.seq != next) {
    return Status::Conflict("event seq " + std::to_string(event.seq) +
                            " does not continue the log (next seq is " + std::to_string(next) +
                            ")");
  }
  if (!keys::valid_stream_name(event.stream)) {
    return Status::Invalid("seq " + std::to_string(next) + ": invalid stream name");
  }
  const fb::Event* e = nullptr;
  if (Status s = decode_event(event.bytes, &e); !s.ok()) {
    return Status::Invalid("seq " + std::to_string(next) + ": " + s.message());
  }
  if (e->seq() != event.seq || e->stream_version() != event.stream_version ||
      e->stream()->string_view() != event.stream) {
    return Status::Invalid("seq " + std::to_string(next) +
                           ": the event bytes disagree with the seq, stream or version given");
  }
  if (!same_hash(e->prev_hash(), *hash)) {
    return Status::Conflict("seq " + std::to_string(next) +
                            ": prev_hash is not the hash of the previous event");
  }
  OpenStream* open = nullptr;
  if (Status s = open_stream(event.stream, &open); !s.ok()) return s;
  if (event.stream_version != open->staged_version + 1) {
    return Status::Conflict("seq " + std::to_string(next) + ": stream " + event.stream +
                            " is at version " + std::to_string(open->staged_version) +
                            ", the event has version " + std::to_string(event.stream_version));
  }
  version_undo_.emplace_back(open, open->staged_version);
  open->staged_version = event.stream_version;

  char log_key[keys::kSeqBytes];
  keys::log_key(next, log_key);
  rocksdb::Status s = batch_.Put(cf(kLog), slice({log_key, sizeof log_key}), slice(event.bytes));
  if (!s.ok()) return from_rocksdb(s, "staging seq " + std::to_string(next));
  staged_index_.push_back({open, next});
  *hash = sha256(event.bytes);
  *seq = next;
  return Status::Ok();
}

Status RocksDbStore::stage_side_records(const AppendBatch& batch) {
  rocksdb::Status s;
  for (const auto& [key, value] : batch.idempotency) {
    if (value.size() < keys::kRecordedAtBytes) {
      return Status::Invalid("an idempotency record must start with its 8-byte recorded_at");
    }
    if (s.ok()) s = batch_.Put(cf(kIdempotency), slice(key), slice(value));
  }
  for (const auto& [key, value] : batch.views) {
    if (!s.ok()) break;
    s = value ? batch_.Put(cf(kViews), slice(key), slice(*value))
              : batch_.Delete(cf(kViews), slice(key));
  }
  if (s.ok() && batch.snapshot) {
    s = batch_.Put(cf(kSnapshot), slice(keys::kSnapshotKey), slice(*batch.snapshot));
  }
  return from_rocksdb(s, "staging the side records");
}

// The stream's entry in open_index_, made from the family when it has none.
// What that reads is true of the disk whatever happens to the batch, so
// only the staged versions need undoing.
Status RocksDbStore::open_stream(const std::string& stream, OpenStream** out) {
  *out = open_index_.find_open(stream);
  if (*out != nullptr) return Status::Ok();
  uint32_t stored = 0;
  if (Status s = stored_stream_version(stream, &stored); !s.ok()) return s;
  std::lock_guard lock(index_mu_);
  *out = open_index_.insert(stream, stored);
  return Status::Ok();
}

void RocksDbStore::roll_back_versions() {
  // Newest first, so a stream touched twice ends at its first old value.
  for (auto it = version_undo_.rbegin(); it != version_undo_.rend(); ++it) {
    it->first->staged_version = it->second;
  }
  version_undo_.clear();
}

// After a failed write RocksDB refuses writes. Resume() clears what it can;
// anything else takes reopening the database, which replays its WAL. When
// even that fails (the disk still refuses), the database is opened read-only
// so that reads go on, and the next append tries again. Either way, what
// reached the disk is only known by reading it back: the tail is reloaded (it
// holds the failed batch if its bytes reached the WAL before the failure) and
// the index of the events after the last index checkpoint on disk is read
// back from the log, with every stream's latest version.
Status RocksDbStore::resume_after_write_error() {
  Status reopened;
  {
    std::shared_lock lock(db_mu_);
    if (db_ && db_writable_ && db_->Resume().ok()) {
      Status s = load_tail();
      if (s.ok()) s = rebuild_open_index();
      resume_needed_ = !s.ok();
      return s;
    }
  }
  std::unique_lock lock(db_mu_);
  close_db();
  reopened = open_db(/*writable=*/true);
  if (!reopened.ok() && open_db(/*writable=*/false).ok() && load_tail().ok()) {
    rebuild_open_index().IgnoreError();  // reads go on with what it could index
  }
  if (!reopened.ok()) {
    return Status::IoError("the store cannot reopen after a write error: " + reopened.ToString());
  }
  if (Status s = load_tail(); !s.ok()) return s;
  if (Status s = rebuild_open_index(); !s.ok()) return s;
  resume_needed_ = false;
  return Status::Ok();
}

// Purged records coming back after a crash are harmless (they only expire
// again), so the deletes are not synced on their own: the next append's sync
// makes them durable with it.
Status RocksDbStore::purge_idempotency(int64_t before_ms) {
  if (!writable()) return Status::Unavailable("the store is open read-only");
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kIdempotency)));
  rocksdb::WriteBatch deletes;
  rocksdb::Status rs;
  for (it->SeekToFirst(); it->Valid() && rs.ok(); it->Next()) {
    int64_t recorded_at_ms = 0;
    if (!keys::idempotency_recorded_at_ms(rocksdb_store::view(it->value()), &recorded_at_ms)) {
      return Status::Corruption("an idempotency record is shorter than its recorded_at");
    }
    if (recorded_at_ms >= before_ms) continue;
    rs = deletes.Delete(cf(kIdempotency), it->key());
    if (rs.ok() && static_cast<size_t>(deletes.Count()) >= kPurgeDeletesPerWrite) {
      rs = db_->Write(rocksdb::WriteOptions(), &deletes);
      deletes.Clear();
    }
  }
  if (rs.ok()) rs = it->status();
  if (rs.ok() && deletes.Count() > 0) rs = db_->Write(rocksdb::WriteOptions(), &deletes);
  return from_rocksdb(rs, "purging idempotency records");
}

}  // namespace runledger
