// RocksDbStore: what a healthy store does, and every append it must refuse
// without writing anything.
#include "events/rocksdb_store.h"

#include <gtest/gtest.h>

#include "events/keys.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

using Code = Status::Code;

class RocksDbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store = open_store(dir.path()); }
  void reopen(StoreOptions options = {}) {
    store.reset();
    store = open_store(dir.path(), options);
  }

  TempDir dir;
  std::unique_ptr<EventStore> store;
  LogBuilder log;
};

TEST_F(RocksDbStoreTest, EmptyStoreStartsAtSeqZeroWithZeroHash) {
  EXPECT_EQ(store->last_seq(), 0u);
  EXPECT_EQ(store->last_hash(), Hash{});
  EXPECT_TRUE(all_events(*store).empty());
  std::string bytes;
  EXPECT_EQ(store->read_event(1, &bytes).code(), Code::kNotFound);
  uint32_t version = 7;
  ASSERT_TRUE(store->stream_version("job/a", &version).ok());
  EXPECT_EQ(version, 0u);
}

TEST_F(RocksDbStoreTest, AppendedBatchesReadBackInOrderAndSurviveReopen) {
  AppendBatch b1 = log.batch({"job/a", "job/b"}, 5);
  AppendBatch b2 = log.batch({"job/b", "job/c"}, 4);
  ASSERT_TRUE(store->append(b1).ok());
  ASSERT_TRUE(store->append(b2).ok());
  EXPECT_EQ(store->last_seq(), 9u);
  EXPECT_EQ(store->last_hash(), sha256(b2.events.back().bytes));

  reopen();
  EXPECT_EQ(store->last_seq(), 9u);
  EXPECT_EQ(store->last_hash(), log.hash());
  std::vector<std::string> expected;
  for (const auto* b : {&b1, &b2}) {
    for (const auto& e : b->events) expected.push_back(e.bytes);
  }
  EXPECT_EQ(all_events(*store), expected);
  std::string bytes;
  ASSERT_TRUE(store->read_event(6, &bytes).ok());
  EXPECT_EQ(bytes, b2.events[0].bytes);
}

TEST_F(RocksDbStoreTest, ReadRangeHonoursAfterUntilAndEarlyStop) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 10)).ok());
  std::vector<uint64_t> seqs;
  auto collect = [&](const fb::Event& e, std::string_view) {
    seqs.push_back(e.seq());
    return true;
  };
  ASSERT_TRUE(store->read_range(3, 6, collect).ok());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{4, 5, 6}));

  seqs.clear();
  ASSERT_TRUE(store->read_range(8, 0, collect).ok());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{9, 10}));

  seqs.clear();
  ASSERT_TRUE(store
                  ->read_range(0, 0,
                               [&](const fb::Event& e, std::string_view) {
                                 seqs.push_back(e.seq());
                                 return e.seq() < 2;
                               })
                  .ok());
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2}));

  seqs.clear();
  ASSERT_TRUE(store->read_range(10, 0, collect).ok());
  ASSERT_TRUE(store->read_range(5, 5, collect).ok());
  EXPECT_TRUE(seqs.empty());
}

TEST_F(RocksDbStoreTest, ReadStreamGivesOneStreamInVersionOrderUpToASeq) {
  ASSERT_TRUE(store->append(log.batch({"job/a", "job/ab", "job/b"}, 9)).ok());
  std::vector<std::pair<uint64_t, uint32_t>> seen;
  auto collect = [&](const fb::Event& e, std::string_view) {
    seen.emplace_back(e.seq(), e.stream_version());
    return true;
  };
  // "job/a" must not pick up "job/ab", whose name it prefixes.
  ASSERT_TRUE(store->read_stream("job/a", 0, collect).ok());
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, uint32_t>>{{1, 1}, {4, 2}, {7, 3}}));

  seen.clear();
  ASSERT_TRUE(store->read_stream("job/ab", 5, collect).ok());
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, uint32_t>>{{2, 1}, {5, 2}}));

  seen.clear();
  ASSERT_TRUE(store->read_stream("job/none", 0, collect).ok());
  EXPECT_TRUE(seen.empty());

  uint32_t version = 0;
  ASSERT_TRUE(store->stream_version("job/b", &version).ok());
  EXPECT_EQ(version, 3u);
}

TEST_F(RocksDbStoreTest, GapInSeqIsRefusedAndNothingIsWritten) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 3)).ok());
  LogBuilder ahead = log;
  ahead.next("job/a");  // seq 4 is skipped
  AppendBatch gap;
  gap.events.push_back(ahead.next("job/a"));
  gap.snapshot = "must not be written";
  gap.idempotency.emplace_back("key", idempotency_value(1, "reply"));
  Status s = store->append(gap);
  EXPECT_EQ(s.code(), Code::kConflict) << s.ToString();

  // Within one batch too: seq 4 then seq 6.
  LogBuilder within = log;
  AppendBatch holed;
  holed.events.push_back(within.next("job/a"));
  within.next("job/a");
  holed.events.push_back(within.next("job/a"));
  EXPECT_EQ(store->append(holed).code(), Code::kConflict);

  EXPECT_EQ(store->last_seq(), 3u);
  std::string value;
  EXPECT_EQ(store->read_event(4, &value).code(), Code::kNotFound);
  EXPECT_EQ(store->get_snapshot(&value).code(), Code::kNotFound);
  EXPECT_EQ(store->get_idempotency("key", &value).code(), Code::kNotFound);
  // The log still continues where it was.
  EXPECT_TRUE(store->append(log.batch({"job/a"}, 1)).ok());
}

TEST_F(RocksDbStoreTest, VersionConflictIsRefusedWithWarmAndColdCache) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 2)).ok());
  auto forged = [&](uint32_t version) {
    AppendBatch b;
    EncodedEvent e;
    e.seq = log.seq() + 1;
    e.stream = "job/a";
    e.stream_version = version;
    e.bytes = LogBuilder::encode(e.seq, e.stream, version, log.hash());
    b.events.push_back(std::move(e));
    return b;
  };
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass == 0 ? "versions cached by the appender" : "versions read from the index");
    EXPECT_EQ(store->append(forged(2)).code(), Code::kConflict);  // already there
    EXPECT_EQ(store->append(forged(4)).code(), Code::kConflict);  // skips 3
    EXPECT_EQ(store->last_seq(), 2u);
    reopen();
  }
  EXPECT_TRUE(store->append(forged(3)).ok());
}

TEST_F(RocksDbStoreTest, RefusedBatchLeavesNoVersionBehind) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 1)).ok());
  // job/a v2 is fine, then job/a v2 again is not: the whole batch goes.
  LogBuilder bad = log;
  AppendBatch b;
  b.events.push_back(bad.next("job/a"));
  EncodedEvent dup;
  dup.seq = 3;
  dup.stream = "job/a";
  dup.stream_version = 2;
  dup.bytes = LogBuilder::encode(3, "job/a", 2, bad.hash());
  b.events.push_back(std::move(dup));
  EXPECT_EQ(store->append(b).code(), Code::kConflict);
  uint32_t version = 0;
  ASSERT_TRUE(store->stream_version("job/a", &version).ok());
  EXPECT_EQ(version, 1u);
  // Had the refused batch left v2 in the appender's memory, this would fail.
  EXPECT_TRUE(store->append(log.batch({"job/a", "job/a"}, 2)).ok());
  EXPECT_EQ(store->last_seq(), 3u);
}

TEST_F(RocksDbStoreTest, HashChainBrokenByAnAppendIsRefused) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 2)).ok());
  AppendBatch b;
  EncodedEvent e;
  e.seq = 3;
  e.stream = "job/a";
  e.stream_version = 3;
  Hash wrong = log.hash();
  wrong[0] ^= 1;
  e.bytes = LogBuilder::encode(3, "job/a", 3, wrong);
  b.events.push_back(std::move(e));
  Status s = store->append(b);
  EXPECT_EQ(s.code(), Code::kConflict) << s.ToString();
  EXPECT_EQ(store->last_seq(), 2u);
  EXPECT_EQ(store->last_hash(), log.hash());
}

TEST_F(RocksDbStoreTest, BytesThatDisagreeWithTheirEnvelopeAreInvalid) {
  AppendBatch b = log.batch({"job/a"}, 1);
  b.events[0].stream = "job/b";  // the bytes say job/a
  EXPECT_EQ(store->append(b).code(), Code::kInvalid);
  b = AppendBatch{};
  EncodedEvent garbage;
  garbage.seq = 1;
  garbage.stream = "job/a";
  garbage.stream_version = 1;
  garbage.bytes = "not an event";
  b.events.push_back(garbage);
  EXPECT_EQ(store->append(b).code(), Code::kInvalid);
  EXPECT_EQ(store->last_seq(), 0u);
}

TEST_F(RocksDbStoreTest, StreamNamesWithTheKeySeparatorAreInvalid) {
  LogBuilder l;
  AppendBatch b = l.batch({std::string("job/a\0b", 7)}, 1);
  EXPECT_EQ(store->append(b).code(), Code::kInvalid);
  uint32_t version = 0;
  EXPECT_EQ(store->stream_version(std::string("a\0b", 3), &version).code(), Code::kInvalid);
}

TEST_F(RocksDbStoreTest, IdempotencyRecordsAreKeptThenPurgedByAge) {
  AppendBatch b = log.batch({"job/a"}, 1);
  b.idempotency = {{"k-old", idempotency_value(1000, "r1")},
                   {"k-edge", idempotency_value(2000, "r2")},
                   {"k-new", idempotency_value(3000, "r3")}};
  ASSERT_TRUE(store->append(b).ok());
  std::string value;
  ASSERT_TRUE(store->get_idempotency("k-edge", &value).ok());
  EXPECT_EQ(value, idempotency_value(2000, "r2"));

  ASSERT_TRUE(store->purge_idempotency(2001).ok());
  EXPECT_EQ(store->get_idempotency("k-old", &value).code(), Code::kNotFound);
  EXPECT_EQ(store->get_idempotency("k-edge", &value).code(), Code::kNotFound);
  ASSERT_TRUE(store->get_idempotency("k-new", &value).ok());
  EXPECT_EQ(value, idempotency_value(3000, "r3"));
  reopen();
  EXPECT_EQ(store->get_idempotency("k-old", &value).code(), Code::kNotFound);
  EXPECT_TRUE(store->get_idempotency("k-new", &value).ok());
}

TEST_F(RocksDbStoreTest, PurgeCoversMoreRecordsThanOneDeleteWrite) {
  AppendBatch b;
  const int records = 2'500;  // more than one purge write holds
  for (int i = 0; i < records; ++i) {
    b.idempotency.emplace_back("k" + std::to_string(i), idempotency_value(i, "r"));
  }
  ASSERT_TRUE(store->append(b).ok());
  ASSERT_TRUE(store->purge_idempotency(records - 1).ok());
  int left = 0;
  std::string value;
  for (int i = 0; i < records; ++i) {
    left += store->get_idempotency("k" + std::to_string(i), &value).ok() ? 1 : 0;
  }
  EXPECT_EQ(left, 1);
}

TEST_F(RocksDbStoreTest, IdempotencyValueWithoutItsTimestampIsInvalid) {
  AppendBatch b = log.batch({"job/a"}, 1);
  b.idempotency = {{"k", "short"}};
  EXPECT_EQ(store->append(b).code(), Code::kInvalid);
  EXPECT_EQ(store->last_seq(), 0u);
}

TEST_F(RocksDbStoreTest, ViewsScanByPrefixAfterAKeyAndDelete) {
  AppendBatch b;
  b.views = {{"job/a", "A"}, {"job/b", "B"}, {"job/c", "C"}, {"conn/x", "X"}, {"jobz", "Z"}};
  ASSERT_TRUE(store->append(b).ok());
  auto scan = [&](std::string_view prefix, std::string_view after, size_t limit = 100) {
    std::vector<std::string> keys;
    Status s = store->scan_views(prefix, after, [&](std::string_view k, std::string_view v) {
      keys.push_back(std::string(k) + "=" + std::string(v));
      return keys.size() < limit;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return keys;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(scan("job/", ""), (V{"job/a=A", "job/b=B", "job/c=C"}));
  EXPECT_EQ(scan("job/", "job/a"), (V{"job/b=B", "job/c=C"}));
  EXPECT_EQ(scan("job/", "job/bb"), (V{"job/c=C"}));
  EXPECT_EQ(scan("job/", "a"), (V{"job/a=A", "job/b=B", "job/c=C"}));  // before the prefix
  EXPECT_EQ(scan("job/", "", 1), (V{"job/a=A"}));
  EXPECT_EQ(scan("", "job/c"), (V{"jobz=Z"}));

  AppendBatch del;
  del.views = {{"job/b", std::nullopt}};
  ASSERT_TRUE(store->append(del).ok());
  std::string value;
  EXPECT_EQ(store->get_view("job/b", &value).code(), Code::kNotFound);
  ASSERT_TRUE(store->get_view("job/c", &value).ok());
  EXPECT_EQ(value, "C");
  EXPECT_EQ(scan("job/", ""), (V{"job/a=A", "job/c=C"}));
}

TEST_F(RocksDbStoreTest, SnapshotIsWrittenWithTheEventsItCovers) {
  std::string value;
  EXPECT_EQ(store->get_snapshot(&value).code(), Code::kNotFound);
  AppendBatch b = log.batch({"job/a"}, 3);
  b.snapshot = "state up to seq 3";
  ASSERT_TRUE(store->append(b).ok());
  reopen();
  ASSERT_TRUE(store->get_snapshot(&value).ok());
  EXPECT_EQ(value, "state up to seq 3");
  EXPECT_EQ(store->last_seq(), 3u);

  // A refused batch takes its snapshot down with it.
  AppendBatch refused = log.batch({"job/a"}, 1);
  refused.events[0].seq = 9;
  refused.snapshot = "state up to seq 9";
  EXPECT_EQ(store->append(refused).code(), Code::kConflict);
  ASSERT_TRUE(store->get_snapshot(&value).ok());
  EXPECT_EQ(value, "state up to seq 3");
}

TEST_F(RocksDbStoreTest, APutSnapshotOutlivesACloseRightAfterIt) {
  // put_snapshot only asks for its flush; a close must not drop it.
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 3)).ok());
  for (int i = 0; i < 5; ++i) {
    const std::string snapshot = "snapshot " + std::to_string(i);
    ASSERT_TRUE(store->put_snapshot(snapshot).ok());
    reopen();
    std::string value;
    ASSERT_TRUE(store->get_snapshot(&value).ok());
    EXPECT_EQ(value, snapshot);
  }
}

TEST_F(RocksDbStoreTest, APutSnapshotReplacesTheLastOneAndOutlivesAReopen) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 3)).ok());
  ASSERT_TRUE(store->put_snapshot("state up to seq 3").ok());
  std::string value;
  ASSERT_TRUE(store->get_snapshot(&value).ok());
  EXPECT_EQ(value, "state up to seq 3");
  AppendBatch b = log.batch({"job/a"}, 2);
  b.snapshot = "state up to seq 5, with the events";
  ASSERT_TRUE(store->append(b).ok());
  ASSERT_TRUE(store->append(log.batch({"job/b"}, 1)).ok());
  ASSERT_TRUE(store->put_snapshot("state up to seq 6").ok());
  reopen();
  ASSERT_TRUE(store->get_snapshot(&value).ok());
  EXPECT_EQ(value, "state up to seq 6");
  EXPECT_EQ(store->last_seq(), 6u);
  reopen(read_only_mode());
  EXPECT_EQ(store->put_snapshot("refused").code(), Code::kUnavailable);
  ASSERT_TRUE(store->get_snapshot(&value).ok());
  EXPECT_EQ(value, "state up to seq 6");
}

TEST_F(RocksDbStoreTest, ReadOnlyOpenRefusesAppend) {
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 5)).ok());
  reopen(read_only_mode());
  EXPECT_EQ(store->last_seq(), 5u);
  EXPECT_EQ(all_events(*store).size(), 5u);
  Status s = store->append(log.batch({"job/a"}, 1));
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_EQ(store->purge_idempotency(1).code(), Code::kUnavailable);
  EXPECT_TRUE(store->refresh().ok());
  EXPECT_EQ(store->last_seq(), 5u);
}

TEST(RocksDbStoreOpen, ReadOnlyOpenOfAnEmptyFolderIsNotFound) {
  TempDir dir;
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir.path() + "/nothing", read_only_mode(), &store);
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  StoreOptions existing_only;
  existing_only.create_if_missing = false;
  s = open_rocksdb_store(dir.path() + "/nothing", existing_only, &store);
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  EXPECT_EQ(store, nullptr);
}

TEST(RocksDbStoreOpen, SecondaryInstanceSeesNewEvents) {
  TempDir dir, scratch;
  auto primary = open_store(dir.path());
  LogBuilder log;
  ASSERT_TRUE(primary->append(log.batch({"job/a"}, 3)).ok());
  auto secondary = open_store(dir.path(), secondary_mode(scratch.path() + "/s"));
  EXPECT_EQ(secondary->last_seq(), 3u);

  ASSERT_TRUE(primary->append(log.batch({"job/a", "job/b"}, 4)).ok());
  ASSERT_TRUE(secondary->refresh().ok());
  EXPECT_EQ(secondary->last_seq(), 7u);
  EXPECT_EQ(secondary->last_hash(), log.hash());
  EXPECT_EQ(all_events(*secondary), all_events(*primary));
  uint32_t version = 0;
  ASSERT_TRUE(secondary->stream_version("job/b", &version).ok());
  EXPECT_EQ(version, 2u);
  EXPECT_EQ(secondary->append(log.batch({"job/a"}, 1)).code(), Code::kUnavailable);
}

TEST(RocksDbStoreOpen, SecondaryWithoutAScratchFolderIsInvalid) {
  TempDir dir;
  open_store(dir.path()).reset();
  std::unique_ptr<EventStore> store;
  EXPECT_EQ(open_rocksdb_store(dir.path(), secondary_mode(""), &store).code(), Code::kInvalid);
}

TEST(RocksDbStoreOpen, AFolderOfAnotherLogFormatIsRefused) {
  TempDir dir;
  open_store(dir.path()).reset();
  {
    RawDb raw(dir.path());
    raw.put(keys::kDefaultFamily, keys::kFormatKey, "runledger-log-99");
  }
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir.path(), {}, &store);
  EXPECT_EQ(s.code(), Code::kInvalid) << s.ToString();
  EXPECT_NE(s.message().find("runledger-log-99"), std::string::npos);
}

}  // namespace
}  // namespace runledger::testing
