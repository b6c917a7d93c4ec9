// Opening and closing the RocksDB store: the options that make it durable and
// checked, the modes (writable, read-only, secondary), and finding the tail of
// the log. Appends are in rocksdb_store_append.cc, reads in
// rocksdb_store_read.cc.
#include "events/rocksdb_store.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <thread>

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/table.h>

#include "events/keys.h"
#include "events/private_folder.h"
#include "events/rocksdb_store_internal.h"

namespace runledger {
namespace rocksdb_store {

Status from_rocksdb(const rocksdb::Status& s, std::string_view what, uint64_t seq) {
  if (s.ok()) return Status::Ok();
  std::string m = std::string(what) + ": " + s.ToString();
  if (s.IsCorruption()) return Status::Corruption(std::move(m), seq);
  if (s.IsNotFound()) return Status::NotFound(std::move(m));
  if (s.IsInvalidArgument() || s.IsNotSupported()) return Status::Invalid(std::move(m));
  return Status::IoError(std::move(m));
}

std::string_view AlignedEventBytes::hold(std::string_view bytes) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0) return bytes;
  words_.resize((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  if (!bytes.empty()) std::memcpy(words_.data(), bytes.data(), bytes.size());
  return {reinterpret_cast<const char*>(words_.data()), bytes.size()};
}

Status check_stored_event(uint64_t key_seq, std::string_view* bytes, AlignedEventBytes& scratch,
                          const fb::Event** event) {
  *bytes = scratch.hold(*bytes);
  Status s = decode_event(*bytes, event);
  if (!s.ok()) return Status::Corruption(s.message(), key_seq);
  if ((*event)->seq() != key_seq) {
    return Status::Corruption("log key seq " + std::to_string(key_seq) +
                                  " holds the event of seq " + std::to_string((*event)->seq()),
                              key_seq);
  }
  return Status::Ok();
}

}  // namespace rocksdb_store

using rocksdb_store::from_rocksdb;
using rocksdb_store::view;

namespace {

// Shared by every column family so memory stays bounded whatever the mix.
constexpr size_t kBlockCacheBytes = size_t{64} << 20;
// Bigger blocks compress better (disk per event) and scan faster.
constexpr size_t kBlockBytes = size_t{16} << 10;
// All memtables together; the WAL is cut (and old memtables flushed) beyond
// kWalBytesMax so that a restart replays little. Replaying is a new
// process filling fresh memory: at 128 MiB, 3 M events' restart took 1.3 s
// in a new process (0.95 s of it the WAL), at 32 MiB 0.49 s, and W1 ran no
// slower (docs/performance.md, "What changed the figures").
constexpr size_t kMemtablesBytesMax = size_t{128} << 20;
constexpr uint64_t kWalBytesMax = uint64_t{32} << 20;
constexpr int kBackgroundJobsMax = 2;
constexpr int kBloomBitsPerKey = 10;
constexpr uint64_t kBytesPerSync = uint64_t{1} << 20;
// Threads that check the log's table files at a start, beside the fold of
// the snapshot's tail. The check of 10 M events' files takes 0.2-0.45 s of
// one core, longer than the fold: once the fold is done, it has both.
constexpr size_t kChecksumThreads = 2;

rocksdb::CompressionType first_supported(std::initializer_list<rocksdb::CompressionType> wanted) {
  const auto supported = rocksdb::GetSupportedCompressions();
  for (auto c : wanted) {
    if (std::find(supported.begin(), supported.end(), c) != supported.end()) return c;
  }
  return rocksdb::kNoCompression;
}

// How a family is read, which decides what of its table files memory holds
// beside the block cache (index and filter blocks, for every file, for as
// long as the store is open: with 10 M finished jobs, 134 MB of them):
enum class Access : uint8_t {
  // By key, often for keys that are absent (a new stream's version): a
  // bloom filter answers those without reading a block.
  kPointLookups,
  // By key for keys that exist (a finished job's view), and by prefix (the
  // view index): the last level, which holds most keys, keeps no filter,
  // where a lookup would find its key anyway. A lookup of an absent key
  // reads one block of that level more.
  kLookupsOfWhatExists,
  // Scanned in order (the log: every replay, restart and verify decompresses
  // all of it, so its oldest level stays LZ4, which decompresses several
  // times faster than ZSTD for a little more disk). No filter; the index
  // is split in partitions read through the block cache, only its top level
  // held: 43 MB of index for 110 M events otherwise.
  kScans,
};

rocksdb::ColumnFamilyOptions family_options(const std::shared_ptr<rocksdb::Cache>& cache,
                                            Access access) {
  const bool scans = access == Access::kScans;
  rocksdb::ColumnFamilyOptions o;
  o.compression = first_supported({rocksdb::kLZ4Compression, rocksdb::kSnappyCompression});
  o.bottommost_compression =
      scans ? o.compression : first_supported({rocksdb::kZSTD, rocksdb::kLZ4Compression});
  o.level_compaction_dynamic_level_bytes = true;
  o.optimize_filters_for_hits = access == Access::kLookupsOfWhatExists;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  t.block_size = kBlockBytes;
  // Block checksums are what turns a flipped bit on disk into a Corruption
  // status instead of a wrong event. XXH3 rather than the default CRC32C:
  // Debian's RocksDB is built for any x86-64 and computes CRC32C in software,
  // several times slower; every flush, compaction, replay and start-up check
  // reads or writes these. (Each file records its own checksum type, so files
  // written before keep theirs.)
  t.checksum = rocksdb::kXXH3;
  if (scans) {
    // (Each file records its index type too: files written before keep a
    // whole index.)
    t.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    t.cache_index_and_filter_blocks = true;
    t.cache_index_and_filter_blocks_with_high_priority = true;
    t.pin_top_level_index_and_filter = true;
  } else {
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(kBloomBitsPerKey));
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

std::vector<rocksdb::ColumnFamilyDescriptor> family_descriptors() {
  auto cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  // Order matches RocksDbStore::Family.
  return {
      {keys::kDefaultFamily, family_options(cache, Access::kPointLookups)},
      {keys::kLogFamily, family_options(cache, Access::kScans)},
      {keys::kStreamIndexFamily, family_options(cache, Access::kPointLookups)},
      {keys::kIdempotencyFamily, family_options(cache, Access::kPointLookups)},
      {keys::kViewsFamily, family_options(cache, Access::kLookupsOfWhatExists)},
      {keys::kSnapshotFamily, family_options(cache, Access::kPointLookups)},
  };
}

rocksdb::DBOptions db_options(const StoreOptions& options, rocksdb::Env* env) {
  rocksdb::DBOptions o;
  if (env != nullptr) o.env = env;
  o.create_if_missing = options.create_if_missing;
  o.create_missing_column_families = options.create_if_missing;
  o.paranoid_checks = true;
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  o.max_background_jobs = kBackgroundJobsMax;
  o.db_write_buffer_size = kMemtablesBytesMax;
  o.max_total_wal_size = kWalBytesMax;
  o.bytes_per_sync = kBytesPerSync;
  // A restart replays the WAL into memtables; writing them out as table
  // files before the store answers took a third of that replay again. The
  // WAL stays until the background flushes them, so a second crash loses
  // nothing.
  o.avoid_flush_during_recovery = true;
  // A secondary instance must keep every table file it saw open.
  if (options.secondary) o.max_open_files = -1;
  return o;
}

bool mentions_lock(const rocksdb::Status& s) {
  std::string text = s.ToString();
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s.IsIOError() && text.find("lock") != std::string::npos;
}

StoreOptions normalized(StoreOptions options) {
  if (options.secondary) options.read_only = true;
  return options;
}

}  // namespace

RocksDbStore::RocksDbStore(std::string dir, StoreOptions options, rocksdb::Env* env)
    : dir_(std::move(dir)),
      options_(normalized(std::move(options))),
      index_checkpoint_events_(options_.index_checkpoint_events != 0
                                   ? options_.index_checkpoint_events
                                   : kIndexCheckpointEvents),
      env_(env) {}

RocksDbStore::~RocksDbStore() {
  if (db_ && db_writable_ && !resume_needed_) {
    // Whatever fails here, the log holds every event: the next open indexes
    // from the log what did not reach the family.
    if (!open_index_.empty()) write_index_checkpoint().IgnoreError();
    // put_snapshot() writes without the WAL and only asks for its flush.
    // Closing while that flush is still queued would drop the snapshot (the
    // shutdown cancels queued flush jobs), so this waits for it first. Not
    // after a write error: the flush could not succeed.
    rocksdb::FlushOptions fo;
    fo.wait = true;
    db_->Flush(fo, cf(kSnapshot)).PermitUncheckedError();
  }
  close_db();
}

Status RocksDbStore::open() {
  const bool exists = std::filesystem::exists(std::filesystem::path(dir_) / "CURRENT");
  if (!exists && (!options_.create_if_missing || options_.read_only)) {
    return Status::NotFound("data folder " + dir_ + " holds no runledger store");
  }
  if (options_.secondary && options_.secondary_path.empty()) {
    return Status::Invalid("a secondary store needs a secondary_path");
  }
  if (writable()) {
    // make_private() closes the folder (0700) and what is in it already.
    // RocksDB makes its files with the process's umask (Debian's 7.8 ignores
    // Env::SetAllowNonOwnerAccess); runledgerd's umask is 077, and whatever
    // it is, no other user can reach a file inside the closed folder.
    if (Status p = make_private(dir_); !p.ok()) return p;
  }
  std::unique_lock lock(db_mu_);
  if (Status s = open_db(writable()); !s.ok()) return s;
  if (Status f = check_format(); !f.ok()) return f;
  if (Status t = load_tail(); !t.ok()) return t;
  if (first_format_ && writable()) {
    if (Status u = upgrade_first_format(); !u.ok()) return u;
  }
  return rebuild_open_index();
}

Status RocksDbStore::open_db(bool writable) {
  rocksdb::DBOptions o = db_options(options_, env_);
  auto families = family_descriptors();
  rocksdb::DB* db = nullptr;
  rocksdb::Status s;
  if (options_.secondary) {
    std::error_code ec;
    std::filesystem::create_directories(options_.secondary_path, ec);
    s = rocksdb::DB::OpenAsSecondary(o, dir_, options_.secondary_path, families, &handles_, &db);
  } else if (!writable) {
    s = rocksdb::DB::OpenForReadOnly(o, dir_, families, &handles_, &db);
    if (s.IsCorruption()) {
      // A damaged record in the middle of the WAL stops a writable open (see
      // db_options). Reading for forensics goes on past it: the events it
      // held (and those after it in its block) are then missing, and verify
      // names the first of them.
      open_damage_ = from_rocksdb(s, "opening data folder " + dir_);
      o.wal_recovery_mode = rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
      handles_.clear();
      s = rocksdb::DB::OpenForReadOnly(o, dir_, families, &handles_, &db);
    }
  } else {
    s = rocksdb::DB::Open(o, dir_, families, &handles_, &db);
  }
  if (!s.ok()) {
    if (mentions_lock(s)) {
      return Status::Unavailable("data folder " + dir_ + " is in use by another runledgerd (" +
                                 s.ToString() + ")");
    }
    return from_rocksdb(s, "opening data folder " + dir_);
  }
  db_.reset(db);
  db_writable_ = writable;
  return Status::Ok();
}

void RocksDbStore::close_db() {
  if (!db_) return;
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  handles_.clear();
  // Every acknowledged batch is already synced; a failed close loses nothing.
  db_->Close().PermitUncheckedError();
  db_.reset();
}

Status RocksDbStore::closed() const {
  return Status::Unavailable("the store of " + dir_ + " has not recovered from a write error");
}

Status RocksDbStore::check_format() {
  std::string format;
  Status s = get(kDefault, keys::kFormatKey, &format);
  if (s.code() == Status::Code::kNotFound && writable()) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    return from_rocksdb(db_->Put(wo, cf(kDefault), rocksdb_store::slice(keys::kFormatKey),
                                 rocksdb_store::slice(keys::kStoreFormat)),
                        "recording the store format");
  }
  if (s.code() == Status::Code::kNotFound) return Status::Ok();  // never written to
  if (!s.ok()) return s;
  if (format == keys::kFirstStoreFormat) {
    first_format_ = true;
    return Status::Ok();
  }
  if (format != keys::kStoreFormat) {
    return Status::Invalid("data folder " + dir_ + " holds store format '" + format +
                           "', this build reads '" + std::string(keys::kStoreFormat) + "' and '" +
                           std::string(keys::kFirstStoreFormat) + "'");
  }
  return Status::Ok();
}

// A store of the first format has an index entry per event, all durable:
// the index covers the whole log. Recording that, with the new format name,
// is the whole upgrade (keys.h). REQUIRES: the tail loaded.
Status RocksDbStore::upgrade_first_format() {
  char covers[keys::kSeqBytes];
  keys::put_be64(last_seq(), covers);
  rocksdb::WriteBatch b;
  rocksdb::Status s = b.Put(cf(kDefault), rocksdb_store::slice(keys::kIndexCoversKey),
                            rocksdb_store::slice({covers, sizeof covers}));
  if (s.ok()) {
    s = b.Put(cf(kDefault), rocksdb_store::slice(keys::kFormatKey),
              rocksdb_store::slice(keys::kStoreFormat));
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  if (s.ok()) s = db_->Write(wo, &b);
  if (!s.ok()) return from_rocksdb(s, "upgrading the store format");
  first_format_ = false;
  return Status::Ok();
}

// Sets last_seq/last_hash from the last stored event. A writable store
// refuses to continue a log whose tail does not verify; a reading one opens
// anyway, so that verify can walk the log and name the first damage.
Status RocksDbStore::load_tail() {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kLog)));
  it->SeekToLast();
  uint64_t seq = 0;
  Hash hash{};
  Status problem;
  if (it->Valid()) {
    if (keys::parse_log_key(view(it->key()), &seq)) {
      hash = sha256(view(it->value()));
      const fb::Event* e = nullptr;
      rocksdb_store::AlignedEventBytes scratch;
      std::string_view bytes = view(it->value());
      problem = rocksdb_store::check_stored_event(seq, &bytes, scratch, &e);
      if (!problem.ok() && !writable()) problem = Status::Ok();  // seq and hash stand
    } else {
      problem = Status::Corruption("the last log key is malformed");
    }
  } else {
    problem = from_rocksdb(it->status(), "reading the last event");
  }
  if (!problem.ok()) {
    if (writable() || problem.code() != Status::Code::kCorruption) return problem;
    hash = Hash{};
    if (Status f = last_seq_without_reading_events(&seq); !f.ok()) return f;
  }
  std::lock_guard lock(tail_mu_);
  last_seq_ = seq;
  last_hash_ = hash;
  return Status::Ok();
}

namespace {

// The highest log key in a table file, from the key ranges RocksDB's manifest
// keeps of them: 0 when the log has none.
uint64_t last_seq_in_tables(const std::vector<rocksdb::LiveFileMetaData>& files) {
  uint64_t last = 0;
  for (const auto& f : files) {
    uint64_t largest = 0;
    if (f.column_family_name == keys::kLogFamily && keys::parse_log_key(f.largestkey, &largest)) {
      last = std::max(last, largest);
    }
  }
  return last;
}

}  // namespace

std::unique_ptr<rocksdb::Iterator> RocksDbStore::memtable_log_iterator() const {
  rocksdb::ReadOptions ro;
  ro.read_tier = rocksdb::kMemtableTier;
  return std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(ro, cf(kLog)));
}

// The highest well-formed log key, from RocksDB's manifest (the key range of
// each table file) and the memtable, without reading a table block: what a
// reading store uses when the block holding the last event is damaged.
Status RocksDbStore::last_seq_without_reading_events(uint64_t* seq) const {
  std::vector<rocksdb::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  *seq = last_seq_in_tables(files);
  std::unique_ptr<rocksdb::Iterator> it = memtable_log_iterator();
  uint64_t in_memory = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    if (keys::parse_log_key(view(it->key()), &in_memory)) {
      *seq = std::max(*seq, in_memory);
      break;
    }
  }
  return from_rocksdb(it->status(), "reading the memtable");
}

uint64_t RocksDbStore::last_seq() const {
  std::lock_guard lock(tail_mu_);
  return last_seq_;
}

Hash RocksDbStore::last_hash() const {
  std::lock_guard lock(tail_mu_);
  return last_hash_;
}

Status RocksDbStore::refresh() {
  if (!options_.secondary) return Status::Ok();  // nothing to catch up with
  std::shared_lock lock(db_mu_);
  if (!db_) return closed();
  Status s = from_rocksdb(db_->TryCatchUpWithPrimary(), "catching up with the primary");
  if (!s.ok()) return s;
  if (s = load_tail(); !s.ok()) return s;
  // The primary may have checkpointed its index since: index again from its
  // index_covers, at most kIndexCheckpointEvents and a batch of events.
  return rebuild_open_index();
}

// The events in memtables were replayed from the write-ahead log at open.
// RocksDB tolerates a record cut short at the end of any of its files, as a
// torn write leaves one at the end of the newest: cut short in an older file,
// the events after the cut and up to the next file are missing, and the seqs
// would jump where nothing else notices (a fold starts after the snapshot).
// `memtables` was made before `files` was listed: a flush that ends in
// between leaves its events in the pinned memtables as well as in a listed
// table file.
Status RocksDbStore::verify_unflushed_log(const std::vector<rocksdb::LiveFileMetaData>& files,
                                          rocksdb::Iterator& memtables) {
  uint64_t expected = last_seq_in_tables(files) + 1;
  for (memtables.SeekToFirst(); memtables.Valid(); memtables.Next()) {
    uint64_t seq = 0;
    if (!keys::parse_log_key(view(memtables.key()), &seq)) {
      return Status::Corruption("a log key in the memtable is malformed", expected);
    }
    if (seq < expected) continue;
    if (seq > expected) {
      return Status::Corruption(
          "seq " + std::to_string(expected) + " is missing from the log (the next stored seq is " +
              std::to_string(seq) + "): a write-ahead log file before the newest was cut short",
          expected);
    }
    ++expected;
  }
  return from_rocksdb(memtables.status(), "reading the memtable");
}

Status RocksDbStore::flush_to_tables() {
  std::shared_lock lock(db_mu_);
  if (!db_ || !db_writable_) return Status::Ok();
  rocksdb::FlushOptions fo;
  fo.wait = true;
  return from_rocksdb(db_->Flush(fo, handles_), "writing the memtables out to table files");
}

Status RocksDbStore::verify_log_checksums() const {
  std::vector<rocksdb::LiveFileMetaData> files;
  {
    std::shared_lock lock(db_mu_);
    if (!db_) return closed();
    std::unique_ptr<rocksdb::Iterator> memtables = memtable_log_iterator();
    db_->GetLiveFilesMetaData(&files);
    if (Status st = verify_unflushed_log(files, *memtables); !st.ok()) return st;
  }
  std::erase_if(files, [](const auto& f) { return f.column_family_name != keys::kLogFamily; });
  // In seq order, so that of two damaged files the earlier one is named.
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.smallestkey < b.smallestkey; });
  // A table file is never changed once written, and compaction deletes one
  // only after it is read: no lock is held while the files are read.
  const rocksdb::Options o(db_options(options_, env_),
                           family_options(rocksdb::NewLRUCache(kBlockBytes * 16), Access::kScans));
  std::vector<Status> results(files.size());
  std::atomic<size_t> next{0};
  auto check_files = [&] {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    for (size_t i = next++; i < files.size(); i = next++) {
      const auto& f = files[i];
      const std::string path = f.db_path + f.name;
      rocksdb::SstFileReader reader(o);
      rocksdb::Status s = reader.Open(path);
      if (s.ok()) s = reader.VerifyChecksum(ro);
      if (s.ok() || s.IsPathNotFound()) continue;  // not found: compacted away, its events moved on
      uint64_t first = 0;
      uint64_t last = 0;
      keys::parse_log_key(f.smallestkey, &first);
      keys::parse_log_key(f.largestkey, &last);
      results[i] =
          Status::Corruption("the table file " + path + " (seqs " + std::to_string(first) + " to " +
                             std::to_string(last) + ") fails its checksums: " + s.ToString());
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (size_t t = 1; t < kChecksumThreads && t < files.size(); ++t)
      helpers.emplace_back(check_files);
    check_files();
  }
  for (const Status& r : results) {
    if (!r.ok()) return r;
  }
  return Status::Ok();
}

std::vector<EventStore::MemoryPart> RocksDbStore::memory_parts() const {
  std::vector<MemoryPart> parts;
  std::shared_lock lock(db_mu_);
  if (!db_) return parts;
  uint64_t bytes = 0;
  for (auto* h : handles_) {
    if (db_->GetIntProperty(h, rocksdb::DB::Properties::kEstimateTableReadersMem, &bytes)) {
      parts.push_back({"table_readers." + h->GetName(), bytes});
    }
  }
  if (db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes)) {
    parts.push_back({"memtables", bytes});
  }
  // One cache serves every family: any family's figure is the whole cache's.
  if (db_->GetIntProperty(cf(kLog), rocksdb::DB::Properties::kBlockCacheUsage, &bytes)) {
    parts.push_back({"block_cache", bytes});
  }
  return parts;
}

Status open_rocksdb_store(const std::string& dir, const StoreOptions& options, rocksdb::Env* env,
                          std::unique_ptr<EventStore>* out) {
  std::unique_ptr<RocksDbStore> store(new RocksDbStore(dir, options, env));
  Status s = store->open();
  if (!s.ok()) return s;
  *out = std::move(store);
  return Status::Ok();
}

Status open_rocksdb_store(const std::string& dir, const StoreOptions& options,
                          std::unique_ptr<EventStore>* out) {
  return open_rocksdb_store(dir, options, nullptr, out);
}

}  // namespace runledger
