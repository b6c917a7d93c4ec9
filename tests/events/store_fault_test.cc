// Damage to the write-ahead log and disks that refuse writes. With sync=true
// every acknowledged batch is whole in the WAL, so after a cut only the
// batches the cut reaches into may go; corruption before the tail must stop
// the open rather than quietly drop what follows it.
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include "events/log_verifier.h"
#include "events/rocksdb_store.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

using Code = Status::Code;

constexpr size_t kFaultBatches = 5;
constexpr size_t kFaultBatchEvents = 10;

// kFaultBatches acknowledged batches, with the WAL size after each, in a closed
// store that kept them all in its WAL (followed by the stream index
// checkpoint of the close, which every cut below removes too).
class WalFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = open_store(dir.path());
    for (size_t i = 0; i < kFaultBatches; ++i) {
      ASSERT_TRUE(store->append(log.batch({"job/a", "job/b"}, kFaultBatchEvents)).ok());
      builders.push_back(log);
      batch_ends.push_back(file_size(newest_wal(dir.path())));
    }
    store.reset();
    wal = newest_wal(dir.path());
    ASSERT_GT(file_size(wal), batch_ends.back()) << "the WAL was not left as written";
  }

  // The batches whose WAL records end at or before `size`.
  size_t batches_within(uint64_t size) const {
    size_t n = 0;
    while (n < batch_ends.size() && batch_ends[n] <= size) ++n;
    return n;
  }

  TempDir dir;
  LogBuilder log;
  std::vector<LogBuilder> builders;  // the log as of each batch
  std::vector<uint64_t> batch_ends;
  std::string wal;
};

TEST_F(WalFaultTest, TruncatedTailKeepsEveryBatchBeforeTheCut) {
  const uint64_t cuts[] = {
      batch_ends[4] - 1,                    // one byte of the last batch
      (batch_ends[3] + batch_ends[4]) / 2,  // half of the last batch
      batch_ends[3],                        // exactly after batch 4
      (batch_ends[1] + batch_ends[2]) / 2,  // into batch 3: 3, 4, 5 go
  };
  for (uint64_t cut : cuts) {
    SCOPED_TRACE("WAL cut to " + std::to_string(cut) + " bytes");
    TempDir copy;
    std::filesystem::copy(dir.path(), copy.path(), std::filesystem::copy_options::recursive);
    const std::string copied_wal =
        copy.path() + "/" + std::filesystem::path(wal).filename().string();
    ASSERT_EQ(::truncate(copied_wal.c_str(), static_cast<off_t>(cut)), 0);

    const size_t kept = batches_within(cut);
    auto store = open_store(copy.path());
    EXPECT_EQ(store->last_seq(), kept * kFaultBatchEvents);
    VerifyReport report;
    Status s = verify_log(*store, &report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    // The log goes on from where it now ends.
    ASSERT_GE(kept, 1u);
    LogBuilder next = builders[kept - 1];
    EXPECT_TRUE(store->append(next.batch({"job/a"}, 1)).ok());
  }
}

TEST_F(WalFaultTest, CorruptWalRecordBeforeTheTailFailsTheOpen) {
  // A byte in the middle of batch 2; batches 3 to 5 are intact after it.
  flip_byte(wal, (batch_ends[0] + batch_ends[1]) / 2);
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir.path(), {}, &store);
  EXPECT_FALSE(s.ok()) << "the open dropped acknowledged batches silently";
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
}

TEST_F(WalFaultTest, ACorruptWalRecordIsReadPastForForensicsAndVerifyNamesTheFirstLostSeq) {
  // A byte in the middle of batch 2, as above
  flip_byte(wal, (batch_ends[0] + batch_ends[1]) / 2);
  // When the folder is opened to read it (runledger verify, --read-only)
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir.path(), read_only_mode(), &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Then it opens, says what the writable open met, and holds batch 1
  EXPECT_EQ(store->open_damage().code(), Code::kCorruption) << store->open_damage().ToString();
  EXPECT_EQ(store->last_seq(), kFaultBatchEvents);
  // and verify names the first event the damaged record lost
  VerifyReport report;
  Status v = verify_log(*store, &report);
  EXPECT_EQ(v.code(), Code::kCorruption) << v.ToString();
  EXPECT_EQ(v.seq(), kFaultBatchEvents + 1) << v.ToString();
}

TEST_F(WalFaultTest, ATornTailIsNoOpenDamage) {
  truncate(wal.c_str(), static_cast<off_t>(batch_ends.back() - 3));
  auto store = open_store(dir.path(), read_only_mode());
  EXPECT_TRUE(store->open_damage().ok()) << store->open_damage().ToString();
  VerifyReport report;
  EXPECT_TRUE(verify_log(*store, &report).ok());
}

// kSyncOnly: writes land in the file, the fsync that should make them
// durable fails.
enum class Fault { kNone, kIoError, kNoSpace, kSyncOnly };

// Files whose writes fail while a fault is set: a failing or a full disk.
class FailingFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  FailingFile(std::unique_ptr<rocksdb::FSWritableFile> file, const std::atomic<Fault>* fault)
      : FSWritableFileOwnerWrapper(std::move(file)), fault_(fault) {}
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           rocksdb::IODebugContext* dbg) override {
    if (fails_writes()) return injected();
    return FSWritableFileOwnerWrapper::Append(data, o, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& o,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (fails_writes()) return injected();
    return FSWritableFileOwnerWrapper::Append(data, o, info, dbg);
  }
  rocksdb::IOStatus Sync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (*fault_ != Fault::kNone) return injected();
    return FSWritableFileOwnerWrapper::Sync(o, dbg);
  }
  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& o, rocksdb::IODebugContext* dbg) override {
    if (*fault_ != Fault::kNone) return injected();
    return FSWritableFileOwnerWrapper::Fsync(o, dbg);
  }

 private:
  bool fails_writes() const { return *fault_ == Fault::kIoError || *fault_ == Fault::kNoSpace; }
  rocksdb::IOStatus injected() const {
    switch (fault_->load()) {
      case Fault::kNoSpace:
        return rocksdb::IOStatus::NoSpace("injected: no space left on device");
      case Fault::kIoError:
      case Fault::kSyncOnly:
      case Fault::kNone:
        break;
    }
    return rocksdb::IOStatus::IOError("injected: input/output error");
  }

  const std::atomic<Fault>* fault_;
};

class FailingFileSystem : public rocksdb::FileSystemWrapper {
 public:
  FailingFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "FailingFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& o,
                                    std::unique_ptr<rocksdb::FSWritableFile>* out,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->NewWritableFile(name, o, out, dbg);
    if (s.ok()) *out = std::make_unique<FailingFile>(std::move(*out), &fault);
    return s;
  }
  std::atomic<Fault> fault{Fault::kNone};
};

class StoreWriteError : public ::testing::TestWithParam<Fault> {};

// Every append after the first carries a stream index checkpoint, so the
// failing ones below do too.
StoreOptions checkpoint_every_batch() {
  StoreOptions o;
  o.index_checkpoint_events = 10;
  return o;
}

// How many versions of `stream` read back in order (0 on a failed read).
size_t stream_length(const EventStore& store, const std::string& stream) {
  size_t n = 0;
  Status s = store.read_stream(
      stream, 0, [&](const fb::Event& e, std::string_view) { return e.stream_version() == ++n; });
  return s.ok() ? n : 0;
}

INSTANTIATE_TEST_SUITE_P(FailingAndFullDisks, StoreWriteError,
                         ::testing::Values(Fault::kIoError, Fault::kNoSpace), [](const auto& info) {
                           return info.param == Fault::kNoSpace ? "NoSpace" : "IoError";
                         });

TEST(StoreSyncError, BatchWhoseFsyncFailedIsInTheLogIfItsBytesReachedTheWal) {
  TempDir dir;
  auto fs = std::make_shared<FailingFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  std::unique_ptr<EventStore> store;
  ASSERT_TRUE(open_rocksdb_store(dir.path(), checkpoint_every_batch(), env.get(), &store).ok());
  LogBuilder log;
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 10)).ok());

  // The batch also carries the stream index checkpoint of job/a.
  fs->fault = Fault::kSyncOnly;
  AppendBatch unsure = log.batch({"job/unsure"}, 10);
  EXPECT_EQ(store->append(unsure).code(), Code::kIoError);
  // The bytes were written, only their fsync failed: the store re-read its
  // tail and tells the caller the batch is there.
  EXPECT_EQ(store->last_seq(), 20u);
  EXPECT_EQ(store->last_hash(), log.hash());
  std::string bytes;
  ASSERT_TRUE(store->read_event(20, &bytes).ok());
  EXPECT_EQ(bytes, unsure.events.back().bytes);
  EXPECT_EQ(stream_length(*store, "job/unsure"), 10u);
  EXPECT_EQ(stream_length(*store, "job/a"), 10u);

  fs->fault = Fault::kNone;
  Status s = store->append(log.batch({"job/a"}, 5));
  ASSERT_TRUE(s.ok()) << s.ToString();
  store.reset();
  auto reopened = open_store(dir.path());
  EXPECT_EQ(reopened->last_seq(), 25u);
  VerifyReport report;
  Status v = verify_log(*reopened, &report);
  EXPECT_TRUE(v.ok()) << v.ToString();
}

TEST_P(StoreWriteError, FailedWriteIsRefusedThenTheStoreResumes) {
  TempDir dir;
  auto fs = std::make_shared<FailingFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
  std::unique_ptr<EventStore> store;
  ASSERT_TRUE(open_rocksdb_store(dir.path(), checkpoint_every_batch(), env.get(), &store).ok());
  LogBuilder log;
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 10)).ok());
  const LogBuilder before_failure = log;

  fs->fault = GetParam();
  AppendBatch lost = log.batch({"job/lost"}, 10);
  lost.snapshot = "lost";
  Status s = store->append(lost);
  EXPECT_EQ(s.code(), Code::kIoError) << s.ToString();
  EXPECT_EQ(store->last_seq(), 10u);
  EXPECT_EQ(store->last_hash(), before_failure.hash());

  // Reads go on while the disk refuses writes.
  EXPECT_EQ(all_events(*store).size(), 10u);

  // The disk is back: the same seqs, other events, go in.
  fs->fault = Fault::kNone;
  LogBuilder retry = before_failure;
  Status r = store->append(retry.batch({"job/kept"}, 10));
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(store->last_seq(), 20u);
  EXPECT_EQ(stream_length(*store, "job/a"), 10u);
  EXPECT_EQ(stream_length(*store, "job/kept"), 10u);
  EXPECT_EQ(stream_length(*store, "job/lost"), 0u);
  store.reset();

  auto reopened = open_store(dir.path());
  EXPECT_EQ(reopened->last_seq(), 20u);
  EXPECT_EQ(reopened->last_hash(), retry.hash());
  VerifyReport report;
  Status v = verify_log(*reopened, &report);
  EXPECT_TRUE(v.ok()) << v.ToString();
  uint32_t version = 99;
  ASSERT_TRUE(reopened->stream_version("job/lost", &version).ok());
  EXPECT_EQ(version, 0u);
  std::string snapshot;
  EXPECT_EQ(reopened->get_snapshot(&snapshot).code(), Code::kNotFound);
}

}  // namespace
}  // namespace runledger::testing
