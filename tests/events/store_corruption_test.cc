// Damage done under the store, straight through RocksDB or to its files: every
// read that meets it and verify_log() must report kCorruption naming the
// first bad seq, never hand out a wrong event.
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "events/forwarding_store.h"
#include "events/keys.h"
#include "events/log_verifier.h"
#include "events/rocksdb_store.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

using Code = Status::Code;

constexpr uint64_t kLogEvents = 20;

// A clean log of kLogEvents events on three streams, closed so that the test can
// reach under it.
class StoreCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = open_store(dir.path());
    for (int i = 0; i < 4; ++i) {
      AppendBatch b = log.batch({"job/a", "job/b", "connector/c"}, kLogEvents / 4);
      for (const auto& e : b.events) events.push_back(e);
      ASSERT_TRUE(store->append(b).ok());
    }
  }
  const EncodedEvent& event(uint64_t seq) const { return events.at(seq - 1); }
  // Rewrites the stream index run of `stream` that starts at version 1 (the
  // close at the end of SetUp wrote each stream's versions as one run).
  void edit_run(const std::string& stream,
                const std::function<void(std::vector<uint64_t>&)>& edit) {
    std::string key;
    keys::stream_index_key(stream, 1, &key);
    RawDb raw(dir.path());
    const std::string value = raw.get(keys::kStreamIndexFamily, key);
    size_t versions = 0;
    ASSERT_TRUE(keys::parse_stream_index_run(value, &versions)) << stream;
    std::vector<uint64_t> seqs;
    for (size_t i = 0; i < versions; ++i) seqs.push_back(keys::stream_index_run_seq(value, i));
    edit(seqs);
    std::string edited;
    keys::append_stream_index_run(seqs.data(), seqs.size(), &edited);
    raw.put(keys::kStreamIndexFamily, key, edited);
  }
  std::unique_ptr<EventStore> reopen() { return open_store(dir.path(), read_only_mode()); }
  Status verify() {
    auto store = reopen();
    VerifyReport report;
    return verify_log(*store, &report);
  }

  TempDir dir;
  LogBuilder log;
  std::vector<EncodedEvent> events;
};

// Names the streams that verify reads back one by one through the index.
class StreamReadRecorder final : public ForwardingStore {
 public:
  explicit StreamReadRecorder(EventStore* inner) : ForwardingStore(inner) {}
  Status read_stream(std::string_view stream, uint64_t until_seq,
                     const EventVisitor& visit) const override {
    streams_read.emplace_back(stream);
    return ForwardingStore::read_stream(stream, until_seq, visit);
  }
  mutable std::vector<std::string> streams_read;
};

TEST_F(StoreCorruptionTest, CleanLogVerifies) {
  auto store = reopen();
  StreamReadRecorder recorder(store.get());
  VerifyReport report;
  Status s = verify_log(recorder, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // One pass over the index sufficed: no stream was read back.
  EXPECT_TRUE(recorder.streams_read.empty());
  EXPECT_EQ(report.events, kLogEvents);
  EXPECT_EQ(report.streams, 3u);
  EXPECT_EQ(report.last_seq, kLogEvents);
  EXPECT_EQ(report.last_hash, log.hash());
}

TEST_F(StoreCorruptionTest, ChecksumMismatchInAStoredValueIsNamedByVerify) {
  // A byte of seq 7's actor flipped: the buffer still verifies, the hash
  // chain does not.
  std::string bytes = event(7).bytes;
  const size_t at = bytes.find("tester");
  ASSERT_NE(at, std::string::npos);
  bytes[at] ^= 0x20;
  RawDb(dir.path()).put(keys::kLogFamily, RawDb::log_key(7), bytes);

  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 7u) << s.ToString();
}

TEST_F(StoreCorruptionTest, ChecksumMismatchOnDiskFailsTheReadThatMeetsIt) {
  const std::string table = flushed_log_table(dir.path());
  // The first bytes of a table file are its first data block.
  flip_byte(table, 10);

  auto store = reopen();
  VerifyReport report;
  Status s = verify_log(*store, &report);
  ASSERT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 1u) << s.ToString();
  std::string bytes;
  Status r = store->read_event(1, &bytes);
  EXPECT_EQ(r.code(), Code::kCorruption) << r.ToString();
  EXPECT_EQ(r.seq(), 1u);
}

TEST_F(StoreCorruptionTest, LogChecksumsReadEveryTableFileOfTheLog) {
  const std::string table = flushed_log_table(dir.path());
  {
    auto store = reopen();
    Status clean = store->verify_log_checksums();
    EXPECT_TRUE(clean.ok()) << clean.ToString();
  }
  flip_byte(table, 10);
  // Then the checksums of its blocks find the damage, and name the file
  auto store = reopen();
  Status s = store->verify_log_checksums();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find(std::filesystem::path(table).filename().string()), std::string::npos)
      << s.ToString();
}

TEST_F(StoreCorruptionTest, ChecksumMismatchInALaterBlockNamesItsFirstSeq) {
  // Enough events for several table blocks.
  {
    auto store = open_store(dir.path());
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(store->append(log.batch({"job/a", "job/b", "job/d"}, 100)).ok());
    }
  }
  const std::string table = flushed_log_table(dir.path());
  flip_byte(table, file_size(table) / 3);

  auto store = reopen();
  VerifyReport report;
  Status s = verify_log(*store, &report);
  ASSERT_EQ(s.code(), Code::kCorruption) << s.ToString();
  ASSERT_GT(s.seq(), 1u) << s.ToString();
  // Every event before the named seq reads back; the named seq does not.
  std::string bytes;
  for (uint64_t seq = 1; seq < s.seq(); ++seq) {
    Status r = store->read_event(seq, &bytes);
    ASSERT_TRUE(r.ok()) << r.ToString();
  }
  Status r = store->read_event(s.seq(), &bytes);
  EXPECT_EQ(r.code(), Code::kCorruption) << r.ToString();
  EXPECT_EQ(r.seq(), s.seq());
}

TEST_F(StoreCorruptionTest, HashChainBrokenByARewrittenEventNamesIt) {
  Hash wrong = sha256("something else");
  const EncodedEvent& e = event(9);
  RawDb(dir.path())
      .put(keys::kLogFamily, RawDb::log_key(9),
           LogBuilder::encode(9, e.stream, e.stream_version, wrong));
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 9u) << s.ToString();
}

TEST_F(StoreCorruptionTest, HashChainBrokenAtTheLastEventNamesTheSeqBefore) {
  // Nothing follows seq 20 to tell whether 19 or 20 changed: verify names
  // 19, the first seq the chain no longer vouches for.
  const EncodedEvent& e = event(kLogEvents);
  RawDb(dir.path())
      .put(keys::kLogFamily, RawDb::log_key(kLogEvents),
           LogBuilder::encode(kLogEvents, e.stream, e.stream_version, Hash{}));
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), kLogEvents - 1) << s.ToString();
}

TEST_F(StoreCorruptionTest, HashChainNotStartingFromZerosNamesSeqOne) {
  const EncodedEvent& e = event(1);
  RawDb(dir.path())
      .put(keys::kLogFamily, RawDb::log_key(1),
           LogBuilder::encode(1, e.stream, e.stream_version, sha256("x")));
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 1u);
}

TEST_F(StoreCorruptionTest, GapInSeqWrittenDirectlyIsCaughtByVerify) {
  // An event at seq 22 with nothing at 21: a hole at the end of the log.
  RawDb(dir.path())
      .put(keys::kLogFamily, RawDb::log_key(kLogEvents + 2),
           LogBuilder::encode(kLogEvents + 2, "job/a", 99, log.hash()));
  auto store = reopen();
  EXPECT_EQ(store->last_seq(), kLogEvents + 2);
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), kLogEvents + 1) << s.ToString();
  EXPECT_EQ(report.events, kLogEvents);
}

TEST_F(StoreCorruptionTest, MissingEventIsNamedByVerifyAndByEveryRead) {
  RawDb(dir.path()).remove(keys::kLogFamily, RawDb::log_key(7));
  auto store = reopen();
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 7u);

  Status r = store->read_range(0, 0, [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(r.code(), Code::kCorruption);
  EXPECT_EQ(r.seq(), 7u);
  Status rs = store->read_stream(event(7).stream, 0,
                                 [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(rs.code(), Code::kCorruption) << rs.ToString();
  EXPECT_EQ(rs.seq(), 7u);
  std::string bytes;
  EXPECT_EQ(store->read_event(7, &bytes).code(), Code::kNotFound);
}

TEST_F(StoreCorruptionTest, SwappedEventsNameTheFirstOfThem) {
  {
    RawDb raw(dir.path());
    raw.put(keys::kLogFamily, RawDb::log_key(5), event(6).bytes);
    raw.put(keys::kLogFamily, RawDb::log_key(6), event(5).bytes);
  }
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 5u);
  auto store = reopen();
  std::string bytes;
  Status r = store->read_event(6, &bytes);
  EXPECT_EQ(r.code(), Code::kCorruption);
  EXPECT_EQ(r.seq(), 6u);
}

TEST_F(StoreCorruptionTest, UndecodablePayloadIsNamedByReadAndVerify) {
  std::string cut = event(12).bytes.substr(0, event(12).bytes.size() / 2);
  RawDb(dir.path()).put(keys::kLogFamily, RawDb::log_key(12), cut);
  auto store = reopen();
  std::string bytes;
  Status r = store->read_event(12, &bytes);
  EXPECT_EQ(r.code(), Code::kCorruption) << r.ToString();
  EXPECT_EQ(r.seq(), 12u);
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.seq(), 12u);
}

TEST_F(StoreCorruptionTest, UndecodablePayloadOfAnUnknownTypeIsNamed) {
  // A well-formed buffer whose payload type no build of runledger knows.
  flatbuffers::FlatBufferBuilder fbb;
  const EncodedEvent& e = event(4);
  Hash prev = sha256(event(3).bytes);
  auto stream = fbb.CreateString(e.stream);
  auto prev_hash = fbb.CreateVector(prev.data(), prev.size());
  auto payload = fb::CreateAttemptSucceeded(fbb, 1).Union();
  fb::EventBuilder b(fbb);
  b.add_seq(4);
  b.add_stream(stream);
  b.add_stream_version(e.stream_version);
  b.add_prev_hash(prev_hash);
  b.add_payload_type(static_cast<fb::Payload>(200));
  b.add_payload(payload);
  fb::FinishEventBuffer(fbb, b.Finish());
  RawDb(dir.path())
      .put(keys::kLogFamily, RawDb::log_key(4),
           std::string_view(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()));
  auto store = reopen();
  std::string bytes;
  Status r = store->read_event(4, &bytes);
  EXPECT_EQ(r.code(), Code::kCorruption) << r.ToString();
  EXPECT_EQ(r.seq(), 4u);
  VerifyReport report;
  EXPECT_EQ(verify_log(*store, &report).seq(), 4u);
}

TEST_F(StoreCorruptionTest, MalformedLogKeyIsNamedByTheSeqItTakesThePlaceOf) {
  // Nine bytes: sorts between seq 7 and seq 8.
  RawDb(dir.path()).put(keys::kLogFamily, RawDb::log_key(7) + "x", event(8).bytes);
  auto store = reopen();
  Status r = store->read_range(0, 0, [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(r.code(), Code::kCorruption) << r.ToString();
  EXPECT_EQ(r.seq(), 8u);
  VerifyReport report;
  EXPECT_EQ(verify_log(*store, &report).seq(), 8u);
}

TEST_F(StoreCorruptionTest, MalformedLastLogKeyStillLetsVerifyRun) {
  RawDb(dir.path()).put(keys::kLogFamily, RawDb::log_key(kLogEvents) + "x", event(1).bytes);
  std::unique_ptr<EventStore> writable;
  EXPECT_EQ(open_rocksdb_store(dir.path(), {}, &writable).code(), Code::kCorruption);
  auto store = reopen();
  EXPECT_EQ(store->last_seq(), kLogEvents);
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), kLogEvents + 1);
}

TEST_F(StoreCorruptionTest, StreamIndexPointingElsewhereIsNamed) {
  // job/a version 2 (seq 4) pointed at seq 5 instead.
  ASSERT_EQ(event(4).stream, "job/a");
  edit_run("job/a", [](std::vector<uint64_t>& seqs) { seqs.at(1) = 5; });
  auto store = reopen();
  Status rs =
      store->read_stream("job/a", 0, [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(rs.code(), Code::kCorruption) << rs.ToString();
  EXPECT_EQ(rs.seq(), 5u);
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 5u);
}

TEST_F(StoreCorruptionTest, OnlyTheStreamsWhoseIndexDiffersAreReadBack) {
  // job/b version 3 pointed at seq 1: its entries no longer add up, while
  // those of job/a and connector/c still do.
  edit_run("job/b", [](std::vector<uint64_t>& seqs) { seqs.at(2) = 1; });
  auto store = reopen();
  StreamReadRecorder recorder(store.get());
  VerifyReport report;
  Status s = verify_log(recorder, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 1u) << s.ToString();
  EXPECT_EQ(recorder.streams_read, std::vector<std::string>{"job/b"});
}

TEST_F(StoreCorruptionTest, AnIndexEntryPastTheEndOfTheLogIsNamed) {
  // A run of one more job/a version, at a seq the log never reached. Nothing
  // can have appended it since verify began: the store is read-only.
  uint32_t last_of_a = 0;
  for (const auto& e : events) {
    if (e.stream == "job/a") last_of_a = e.stream_version;
  }
  std::string key;
  keys::stream_index_key("job/a", last_of_a + 1, &key);
  std::string run;
  const uint64_t past_the_end = kLogEvents + 3;
  keys::append_stream_index_run(&past_the_end, 1, &run);
  RawDb(dir.path()).put(keys::kStreamIndexFamily, key, run);
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), past_the_end) << s.ToString();
  EXPECT_NE(s.message().find("stream index of job/a points at seq 23, past the end of the log"),
            std::string::npos)
      << s.ToString();
}

TEST_F(StoreCorruptionTest, AStreamWhoseIndexIsSplitInTwoRunsIsReadBack) {
  // job/a's entries all match, then comes a key of a stream named
  // "job/a\0<its last version>Z" (pointing past the log's end, so the scan
  // leaves it out), then an extra job/a entry after it: the first run of
  // job/a matches, the second does not, and job/a must still be read back.
  // Reading it meets the odd key first and names the seq it points at.
  uint32_t last_of_a = 0;
  for (const auto& e : events) {
    if (e.stream == "job/a") last_of_a = e.stream_version;
  }
  std::string last_key, extra;
  keys::stream_index_key("job/a", last_of_a, &last_key);
  const std::string splitter = last_key + "Z" + std::string("\0\0\0\0\x01", 5);
  keys::stream_index_key("job/a", last_of_a + 1, &extra);
  const uint64_t past_the_end = kLogEvents + 1000;
  {
    RawDb raw(dir.path());
    raw.put(keys::kStreamIndexFamily, splitter, RawDb::log_key(past_the_end));
    raw.put(keys::kStreamIndexFamily, extra, RawDb::log_key(5));
  }
  auto store = reopen();
  StreamReadRecorder recorder(store.get());
  VerifyReport report;
  Status s = verify_log(recorder, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), past_the_end) << s.ToString();
  EXPECT_EQ(recorder.streams_read, std::vector<std::string>{"job/a"});
}

TEST_F(StoreCorruptionTest, StreamIndexMissingItsLatestEntryIsNamed) {
  uint64_t last_of_c = kLogEvents;
  while (event(last_of_c).stream != "connector/c") --last_of_c;
  edit_run("connector/c", [](std::vector<uint64_t>& seqs) { seqs.pop_back(); });
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), last_of_c);
}

TEST_F(StoreCorruptionTest, AStreamWhoseFirstRunIsGoneReadsEmptyAndIsNamedByItsLastSeq) {
  uint64_t last_of_b = kLogEvents;
  while (event(last_of_b).stream != "job/b") --last_of_b;
  std::string key;
  keys::stream_index_key("job/b", 1, &key);
  RawDb(dir.path()).remove(keys::kStreamIndexFamily, key);
  auto store = reopen();
  uint32_t version = 99;
  ASSERT_TRUE(store->stream_version("job/b", &version).ok());
  EXPECT_EQ(version, 0u);
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), last_of_b) << s.ToString();
  EXPECT_NE(s.message().find("job/b"), std::string::npos) << s.ToString();
}

TEST_F(StoreCorruptionTest, StreamIndexEntryOfAStreamTheLogLacksIsNamed) {
  // Reading the log's streams back never meets it; the pass over the whole
  // index does.
  std::string key;
  keys::stream_index_key("job/ghost", 1, &key);
  RawDb(dir.path()).put(keys::kStreamIndexFamily, key, RawDb::log_key(3));
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 3u);
  EXPECT_NE(s.message().find("job/ghost"), std::string::npos) << s.ToString();
}

TEST_F(StoreCorruptionTest, MalformedStreamIndexEntryOutsideEveryStreamIsReported) {
  RawDb(dir.path()).put(keys::kStreamIndexFamily, "no separator", RawDb::log_key(3));
  Status s = verify();
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("malformed"), std::string::npos) << s.ToString();
}

TEST_F(StoreCorruptionTest, AStreamIndexRunThatIsNotWholeSeqsIsMalformed) {
  std::string key;
  keys::stream_index_key("job/a", 1, &key);
  RawDb(dir.path()).put(keys::kStreamIndexFamily, key, RawDb::log_key(1) + "abcd");
  auto store = reopen();
  Status rs =
      store->read_stream("job/a", 0, [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(rs.code(), Code::kCorruption) << rs.ToString();
  EXPECT_NE(rs.message().find("malformed"), std::string::npos) << rs.ToString();
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
}

TEST_F(StoreCorruptionTest, OverlappingRunsOfAStreamAreNamed) {
  // A second run of job/b from its version 2 (seq 2 is job/b's version 1,
  // so it points at the wrong event as well as repeating versions).
  std::string key;
  keys::stream_index_key("job/b", 2, &key);
  RawDb(dir.path()).put(keys::kStreamIndexFamily, key, RawDb::log_key(2));
  auto store = reopen();
  Status rs =
      store->read_stream("job/b", 0, [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(rs.code(), Code::kCorruption) << rs.ToString();
  EXPECT_EQ(rs.seq(), 2u) << rs.ToString();
  VerifyReport report;
  Status s = verify_log(*store, &report);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), 2u) << s.ToString();
}

// Every stream of the fixture reads back whole, in version order.
void expect_streams_whole(const EventStore& store, const std::vector<EncodedEvent>& events) {
  for (const std::string stream : {"job/a", "job/b", "connector/c"}) {
    std::vector<uint64_t> want;
    for (const auto& e : events) {
      if (e.stream == stream) want.push_back(e.seq);
    }
    std::vector<uint64_t> got;
    Status s = store.read_stream(stream, 0, [&](const fb::Event& e, std::string_view) {
      got.push_back(e.seq());
      return true;
    });
    EXPECT_TRUE(s.ok()) << stream << ": " << s.ToString();
    EXPECT_EQ(got, want) << stream;
  }
}

TEST_F(StoreCorruptionTest, AnIndexCheckpointPastTheEndOfTheLogIsRefusedByAWritableOpen) {
  std::string covers(keys::kSeqBytes, '\0');
  keys::put_be64(kLogEvents + 5, covers.data());
  RawDb(dir.path()).put(keys::kDefaultFamily, keys::kIndexCoversKey, covers);
  std::unique_ptr<EventStore> writable;
  Status s = open_rocksdb_store(dir.path(), {}, &writable);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("index covers up to seq 25"), std::string::npos) << s.ToString();
  // Reading opens it, taking the family for what it holds,
  auto ro = reopen();
  EXPECT_EQ(ro->last_seq(), kLogEvents);
  expect_streams_whole(*ro, events);
  // and verify names what the server would refuse to start on.
  VerifyReport report;
  Status v = verify_log(*ro, &report);
  EXPECT_EQ(v.code(), Code::kCorruption) << v.ToString();
  EXPECT_EQ(v.seq(), kLogEvents + 1) << v.ToString();
  EXPECT_NE(v.message().find("index covers up to seq 25"), std::string::npos) << v.ToString();
}

TEST_F(StoreCorruptionTest, AMalformedIndexCheckpointIsNamedAndReadsIndexTheWholeLog) {
  RawDb(dir.path()).put(keys::kDefaultFamily, keys::kIndexCoversKey, "bad");
  std::unique_ptr<EventStore> writable;
  Status s = open_rocksdb_store(dir.path(), {}, &writable);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("index_covers record is malformed"), std::string::npos)
      << s.ToString();
  auto ro = reopen();
  expect_streams_whole(*ro, events);
  VerifyReport report;
  Status v = verify_log(*ro, &report);
  EXPECT_EQ(v.code(), Code::kCorruption) << v.ToString();
  EXPECT_NE(v.message().find("index_covers record is malformed"), std::string::npos)
      << v.ToString();
  EXPECT_EQ(report.events, kLogEvents);
}

TEST_F(StoreCorruptionTest, WritableOpenRefusesALogWhoseLastEventIsDamaged) {
  RawDb(dir.path()).put(keys::kLogFamily, RawDb::log_key(kLogEvents), "garbage");
  std::unique_ptr<EventStore> store;
  Status s = open_rocksdb_store(dir.path(), {}, &store);
  EXPECT_EQ(s.code(), Code::kCorruption) << s.ToString();
  EXPECT_EQ(s.seq(), kLogEvents);
  // Read-only still opens, so that verify can say what is wrong.
  auto ro = reopen();
  VerifyReport report;
  EXPECT_EQ(verify_log(*ro, &report).seq(), kLogEvents);
}

}  // namespace
}  // namespace runledger::testing
