// The stream index of RocksDbStore: its runs in the stream_index family and
// in memory (open_stream_index.h), the checkpoint that moves the second into
// the first, rebuilding the memory part from the log, and the reads by
// stream. The grammar is in keys.h.
//
// Why reads see every version once: an append publishes its index entries
// to memory only after its batch is durable, and a checkpoint writes its
// runs to the family (in the WriteBatch of an append) before it empties
// memory. A reader copies what memory holds for its stream and takes its
// RocksDB snapshot under the index mutex, so the two together hold every
// durable version at least once; a version in both (between a checkpoint's
// write and the emptying) is read from the family and skipped in memory.
#include <optional>
#include <string>

#include "events/keys.h"
#include "events/rocksdb_store.h"
#include "events/rocksdb_store_internal.h"

namespace runledger {

using rocksdb_store::check_stored_event;
using rocksdb_store::checked_reads;
using rocksdb_store::from_rocksdb;
using rocksdb_store::slice;
using rocksdb_store::SnapshotGuard;
using rocksdb_store::view;

namespace {

std::string where(std::string_view stream, uint32_t version) {
  return std::string(stream) + " version " + std::to_string(version);
}

// Bounds an iterator to one stream's runs: [stream 0x00, stream 0x01).
// Lives as long as the iterator, whose options point into it.
class StreamBounds {
 public:
  StreamBounds(std::string_view stream, rocksdb::ReadOptions* ro) {
    keys::stream_index_bounds(stream, &lower_key_, &upper_key_);
    lower = slice(lower_key_);
    upper_ = slice(upper_key_);
    ro->iterate_lower_bound = &lower;
    ro->iterate_upper_bound = &upper_;
  }
  StreamBounds(const StreamBounds&) = delete;
  StreamBounds& operator=(const StreamBounds&) = delete;

  rocksdb::Slice lower;  // where the stream's first run is, or would be

 private:
  std::string lower_key_, upper_key_;
  rocksdb::Slice upper_;
};

// One stored run of the stream index, split; well_formed is false when its
// key or value cannot be parsed.
struct StoredRun {
  bool well_formed = false;
  std::string_view stream;
  uint32_t first_version = 0;
  size_t versions = 0;
  std::string_view value;
  uint64_t seq(size_t i) const { return keys::stream_index_run_seq(value, i); }
};

StoredRun parse_run(const rocksdb::Iterator& it) {
  StoredRun r;
  r.value = view(it.value());
  r.well_formed = keys::parse_stream_index_key(view(it.key()), &r.stream, &r.first_version) &&
                  keys::parse_stream_index_run(r.value, &r.versions) && r.first_version != 0;
  return r;
}

// Reads the event a stream index entry points at, checks that it is that
// version of that stream, and visits it. *more becomes the visitor's answer.
Status visit_indexed(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* log,
                     const rocksdb::ReadOptions& ro, std::string_view stream, uint32_t version,
                     uint64_t seq, rocksdb::PinnableSlice& value,
                     rocksdb_store::AlignedEventBytes& scratch, const EventVisitor& visit,
                     bool* more) {
  char log_key[keys::kSeqBytes];
  value.Reset();
  rocksdb::Status rs = db->Get(ro, log, slice(keys::log_key(seq, log_key)), &value);
  if (rs.IsNotFound()) {
    return Status::Corruption(
        "the stream index points " + where(stream, version) + " at a missing seq", seq);
  }
  if (!rs.ok()) return from_rocksdb(rs, "reading seq " + std::to_string(seq), seq);
  const fb::Event* e = nullptr;
  std::string_view bytes = view(value);
  if (Status s = check_stored_event(seq, &bytes, scratch, &e); !s.ok()) return s;
  if (e->stream()->string_view() != stream || e->stream_version() != version) {
    return Status::Corruption("the stream index points " + where(stream, version) +
                                  " at an event of another stream or version",
                              seq);
  }
  *more = visit(*e, bytes);
  return Status::Ok();
}

}  // namespace

// ---- The index checkpoint and the memory part ----------------------------

// REQUIRES: db_mu_ held. The seq the stream_index family covers up to.
Status RocksDbStore::read_index_covers(uint64_t* seq) const {
  std::string value;
  Status s = get(kDefault, keys::kIndexCoversKey, &value);
  if (s.code() == Status::Code::kNotFound) {
    // The first format indexed every event in its own batch; a store of
    // this format with no checkpoint yet has all of its index in memory.
    *seq = first_format_ ? last_seq() : 0;
    return Status::Ok();
  }
  if (!s.ok()) return s;
  if (value.size() != keys::kSeqBytes) {
    return Status::Corruption("the stream index's index_covers record is malformed");
  }
  *seq = keys::get_be64(value.data());
  return Status::Ok();
}

// REQUIRES: db_mu_ held, the tail loaded. Indexes the events after
// index_covers in memory, from the log. A writable store refuses a log
// whose events there do not read back in order; a reading one keeps what
// it indexed before the damage, which verify then names.
Status RocksDbStore::rebuild_open_index() {
  uint64_t covers = 0;
  // What a writable open refuses in index_covers: a reading one goes on, and
  // keeps the finding for verify (index_damage()).
  Status damage;
  Status s = read_index_covers(&covers);
  if (!s.ok()) {
    if (writable() || s.code() != Status::Code::kCorruption) return s;
    damage = s;
    covers = 0;  // read everything from the log instead
  }
  const uint64_t last = last_seq();
  if (covers > last) {
    damage = Status::Corruption("the stream index covers up to seq " + std::to_string(covers) +
                                    ", past the end of the log at seq " + std::to_string(last),
                                last + 1);
    if (writable()) return damage;
    covers = last;  // take the family for what it holds
  }
  OpenStreamIndex rebuilt;
  rocksdb::ReadOptions ro = checked_reads();
  ro.fill_cache = false;
  char lower_key[keys::kSeqBytes];
  rocksdb::Slice lower = slice(keys::log_key(covers + 1, lower_key));
  ro.iterate_lower_bound = &lower;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kLog)));
  rocksdb_store::AlignedEventBytes scratch;
  Status problem;
  uint64_t expected = covers + 1;
  for (it->Seek(lower); it->Valid() && expected <= last; it->Next(), ++expected) {
    uint64_t seq = 0;
    if (!keys::parse_log_key(view(it->key()), &seq) || seq != expected) {
      problem = Status::Corruption(
          "seq " + std::to_string(expected) + " is missing from the log's tail", expected);
      break;
    }
    std::string_view bytes = view(it->value());
    const fb::Event* e = nullptr;
    if (problem = check_stored_event(seq, &bytes, scratch, &e); !problem.ok()) break;
    if (!rebuilt.add(e->stream()->string_view(), e->stream_version(), seq)) {
      problem = Status::Corruption("seq " + std::to_string(seq) + ": stream " +
                                       std::string(e->stream()->string_view()) +
                                       " skips or repeats a version",
                                   seq);
      break;
    }
  }
  if (problem.ok()) problem = from_rocksdb(it->status(), "indexing the log's tail", expected);
  if (problem.ok() && expected <= last) {
    problem =
        Status::Corruption("the log ends before its last seq " + std::to_string(last), expected);
  }
  if (!problem.ok() && writable()) return problem;
  std::lock_guard lock(index_mu_);
  open_index_ = std::move(rebuilt);
  index_damage_ = std::move(damage);
  return Status::Ok();
}

Status RocksDbStore::index_damage() const {
  std::lock_guard lock(index_mu_);
  return index_damage_;
}

// Appender only. Adds to batch_ a run per stream of the memory part and
// index_covers = `covers`, the last seq before the batch's own events.
void RocksDbStore::stage_index_checkpoint(uint64_t covers) {
  {
    // Whatever becomes of the batch: an idle entry's versions are all in
    // the family already.
    std::lock_guard lock(index_mu_);
    open_index_.evict_idle();
  }
  rocksdb::Status s;
  open_index_.for_each_run([&](std::string_view stream, const StreamRun& run) {
    if (!s.ok()) return;
    keys::stream_index_key(stream, run.first_version, &index_key_);
    index_value_.clear();
    keys::append_stream_index_run(run.seqs.data(), run.seqs.size(), &index_value_);
    s = batch_.Put(cf(kStreamIndex), slice(index_key_), slice(index_value_));
  });
  char covers_value[keys::kSeqBytes];
  keys::put_be64(covers, covers_value);
  if (s.ok()) {
    s = batch_.Put(cf(kDefault), slice(keys::kIndexCoversKey),
                   slice({covers_value, sizeof covers_value}));
  }
  // Put fails only beyond WriteBatch's 4 GiB; a batch without its
  // checkpoint is still whole, and the next append tries again.
  checkpoint_staged_ = s.ok();
  if (!s.ok()) batch_.Clear();
}

// Appender only, once the batch is durable: when the batch held a
// checkpoint, the runs start over after what it wrote; then the batch's own
// versions are added (stage_event() checked that each continues its stream).
void RocksDbStore::publish_index() {
  std::lock_guard lock(index_mu_);
  if (checkpoint_staged_) open_index_.checkpointed();
  for (const StagedIndexEntry& e : staged_index_) open_index_.publish(e.stream, e.seq);
  staged_index_.clear();
  checkpoint_staged_ = false;
}

// Writes the memory part to the family on its own, synced: a clean close
// leaves nothing for the next open to read back from the log.
Status RocksDbStore::write_index_checkpoint() {
  batch_.Clear();
  staged_index_.clear();
  stage_index_checkpoint(last_seq());
  if (!checkpoint_staged_) return Status::Invalid("the index checkpoint does not fit a batch");
  rocksdb::WriteOptions wo;
  wo.sync = true;
  rocksdb::Status ws = db_->Write(wo, &batch_);
  if (!ws.ok()) {
    checkpoint_staged_ = false;
    return from_rocksdb(ws, "writing the stream index checkpoint");
  }
  publish_index();
  return Status::Ok();
}

// ---- Reads by stream ------------------------------------------------------

// REQUIRES: db_mu_ held. Whether the family has no run of `stream`, known by
// a point lookup of its first run (a stream's runs start at version 1),
// which the family's bloom filter answers for most absent streams without
// reading a block; an iterator would look at every level. A damaged index
// whose first run of a stream is gone reads as if the stream had none:
// verify then names the stream by its last seq.
Status RocksDbStore::absent_from_family(std::string_view stream, bool* absent) const {
  std::string key;
  keys::stream_index_key(stream, 1, &key);
  rocksdb::PinnableSlice value;
  rocksdb::Status rs = db_->Get(checked_reads(), cf(kStreamIndex), slice(key), &value);
  *absent = rs.IsNotFound();
  if (*absent) return Status::Ok();
  return from_rocksdb(rs, "reading the stream index of " + std::string(stream));
}

// REQUIRES: db_mu_ held. True when neither memory nor the family has a
// version of `stream`.
Status RocksDbStore::absent_from_memory_and_family(std::string_view stream, bool* absent) const {
  {
    std::lock_guard index_lock(index_mu_);
    *absent = open_index_.find(stream) == nullptr;
  }
  if (!*absent) return Status::Ok();
  return absent_from_family(stream, absent);
}

Status RocksDbStore::read_stream(std::string_view stream, uint64_t until_seq,
                                 const EventVisitor& visit) const {
  return read_stream_span(stream, 0, 0, until_seq, visit);
}

Status RocksDbStore::read_stream_from(std::string_view stream, uint32_t after_version,
                                      uint64_t after_seq, const EventVisitor& visit) const {
  return read_stream_span(stream, after_version, after_seq, 0, visit);
}

Status RocksDbStore::read_stream_span(std::string_view stream, uint32_t after_version,
                                      uint64_t after_seq, uint64_t until_seq,
                                      const EventVisitor& visit) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  if (!keys::valid_stream_name(stream)) return Status::Invalid("invalid stream name");
  // One snapshot for the index and the log: an append in between cannot show
  // an index entry without its event. Taken with the copy of the memory
  // part (see the top of this file).
  // Most streams read this way do not exist yet (the engine asks for the
  // stream of every job it is told to enqueue): settled without a snapshot
  // or an iterator.
  bool absent = false;
  if (Status s = absent_from_memory_and_family(stream, &absent); !s.ok() || absent) return s;
  StreamRun open;
  std::optional<SnapshotGuard> snapshot;
  {
    std::lock_guard index_lock(index_mu_);
    if (const StreamRun* run = open_index_.find(stream)) open = *run;
    snapshot.emplace(db_.get(), db_writable_);
  }
  rocksdb::ReadOptions ro = checked_reads();
  ro.snapshot = snapshot->get();
  StreamBounds bounds(stream, &ro);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kStreamIndex)));
  rocksdb::PinnableSlice value;
  rocksdb_store::AlignedEventBytes scratch;
  uint32_t expected = 1;
  bool more = true;
  auto read = [&](uint32_t version, uint64_t seq) -> Status {
    if (until_seq != 0 && seq > until_seq) {
      more = false;
      return Status::Ok();
    }
    if (version <= after_version || seq <= after_seq) {  // before the page: not read
      ++expected;
      return Status::Ok();
    }
    Status s =
        visit_indexed(db_.get(), cf(kLog), ro, stream, version, seq, value, scratch, visit, &more);
    ++expected;
    return s;
  };
  for (it->Seek(bounds.lower); it->Valid() && more; it->Next()) {
    const StoredRun run = parse_run(*it);
    if (!run.well_formed) {
      return Status::Corruption("malformed stream index entry for " + where(stream, expected));
    }
    if (run.first_version != expected) {
      return Status::Corruption("the stream index has no entry for " + where(stream, expected),
                                run.seq(0));
    }
    for (size_t i = 0; i < run.versions && more; ++i) {
      if (Status s = read(expected, run.seq(i)); !s.ok()) return s;
    }
  }
  if (Status s = from_rocksdb(it->status(), "reading the stream index of " + std::string(stream));
      !s.ok() || !more) {
    return s;
  }
  for (size_t i = 0; i < open.seqs.size() && more; ++i) {
    const uint32_t version = open.first_version + static_cast<uint32_t>(i);
    if (version < expected) continue;  // read from the family already
    if (version > expected) {
      return Status::Corruption("the stream index has no entry for " + where(stream, expected),
                                open.seqs[i]);
    }
    if (Status s = read(version, open.seqs[i]); !s.ok()) return s;
  }
  return Status::Ok();
}

Status RocksDbStore::stream_version(std::string_view stream, uint32_t* version) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  return read_stream_version(stream, version);
}

// REQUIRES: db_mu_ held. A miss in memory means that the family holds what
// there is: a checkpoint writes the family before it empties memory.
Status RocksDbStore::read_stream_version(std::string_view stream, uint32_t* version) const {
  if (!keys::valid_stream_name(stream)) return Status::Invalid("invalid stream name");
  {
    std::lock_guard index_lock(index_mu_);
    if (const StreamRun* run = open_index_.find(stream)) {
      *version = run->last_version();
      return Status::Ok();
    }
  }
  return stored_stream_version(stream, version);
}

// REQUIRES: db_mu_ held. The latest version the family holds of `stream`.
Status RocksDbStore::stored_stream_version(std::string_view stream, uint32_t* version) const {
  *version = 0;
  bool absent = false;
  if (Status s = absent_from_family(stream, &absent); !s.ok() || absent) return s;
  rocksdb::ReadOptions ro = checked_reads();
  StreamBounds bounds(stream, &ro);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kStreamIndex)));
  it->SeekToLast();
  if (it->Valid()) {
    const StoredRun run = parse_run(*it);
    if (!run.well_formed) {
      return Status::Corruption("malformed stream index entry for " + std::string(stream));
    }
    *version = run.first_version + static_cast<uint32_t>(run.versions) - 1;
    return Status::Ok();
  }
  return from_rocksdb(it->status(), "reading the stream index of " + std::string(stream));
}

// The family's runs in key order, each stream's followed by what memory
// holds after them, and the streams only memory holds in their place in
// that order.
Status RocksDbStore::scan_stream_index(const StreamIndexVisitor& visit) const {
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  OpenStreamIndex open;
  std::optional<SnapshotGuard> snapshot;
  {
    std::lock_guard index_lock(index_mu_);
    open = open_index_.copy_runs();
    snapshot.emplace(db_.get(), db_writable_);
  }
  const auto open_runs = open.sorted_runs();
  size_t next_open = 0;
  bool more = true;
  // Visits the open run's versions after `after`.
  auto visit_open = [&](std::string_view stream, const StreamRun& run, uint32_t after) {
    for (size_t i = 0; i < run.seqs.size() && more; ++i) {
      const uint32_t version = run.first_version + static_cast<uint32_t>(i);
      if (version > after) more = visit(StreamIndexEntry{stream, version, run.seqs[i], true});
    }
  };
  // The streams only memory holds, up to (not including) `stream`.
  auto visit_open_before = [&](std::optional<std::string_view> stream) {
    while (more && next_open < open_runs.size() &&
           (!stream || open_runs[next_open].first < *stream)) {
      visit_open(open_runs[next_open].first, *open_runs[next_open].second, 0);
      ++next_open;
    }
  };
  // The rest of `stream`'s versions, from memory, once its runs in the
  // family ended at `last_version`.
  auto finish_stream = [&](std::string_view stream, uint32_t last_version) {
    if (more && next_open < open_runs.size() && open_runs[next_open].first == stream) {
      visit_open(stream, *open_runs[next_open].second, last_version);
      ++next_open;
    }
  };

  rocksdb::ReadOptions ro = checked_reads();
  ro.snapshot = snapshot->get();
  // One pass over the whole family: blocks read once, not kept in the cache.
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kStreamIndex)));
  std::string current;
  bool in_stream = false;
  uint32_t current_last = 0;
  for (it->SeekToFirst(); it->Valid() && more; it->Next()) {
    const StoredRun run = parse_run(*it);
    if (!run.well_formed) {
      more = visit(StreamIndexEntry{{}, 0, 0, false});
      continue;
    }
    if (!in_stream || run.stream != current) {
      if (in_stream) finish_stream(current, current_last);
      visit_open_before(run.stream);
      current.assign(run.stream);
      in_stream = true;
      current_last = 0;
    }
    for (size_t i = 0; i < run.versions && more; ++i) {
      const uint32_t version = run.first_version + static_cast<uint32_t>(i);
      more = visit(StreamIndexEntry{run.stream, version, run.seq(i), true});
      current_last = std::max(current_last, version);
    }
  }
  if (Status s = from_rocksdb(it->status(), "scanning the stream index"); !s.ok()) return s;
  if (in_stream) finish_stream(current, current_last);
  visit_open_before(std::nullopt);
  return Status::Ok();
}

}  // namespace runledger
