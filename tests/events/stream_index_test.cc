// The stream index as runs: versions indexed in memory and written to the
// family by checkpoints inside appends (rocksdb_store.h, keys.h). Whatever
// the place of the checkpoints, the moment of a crash or the format the
// store was written in, reading a stream gives each of its versions once,
// in order, and verify finds the index whole.
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "events/keys.h"
#include "events/log_verifier.h"
#include "events/rocksdb_store.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

using Code = Status::Code;

const std::vector<std::string> kStreams = {"job/a", "job/ab", "connector/c", "hold/h"};

StoreOptions checkpoint_every(size_t events) {
  StoreOptions o;
  o.index_checkpoint_events = events;
  return o;
}

// The seqs of each stream's versions, as the appends gave them.
using Expected = std::map<std::string, std::vector<uint64_t>>;

// Appends `batches` batches of `events` events over kStreams, noting in
// `expected` the seq of every version.
void append_batches(EventStore& store, LogBuilder& log, Expected* expected, int batches,
                    size_t events) {
  for (int i = 0; i < batches; ++i) {
    AppendBatch b = log.batch(kStreams, events);
    for (const auto& e : b.events) (*expected)[e.stream].push_back(e.seq);
    ASSERT_TRUE(store.append(b).ok());
  }
}

// Every stream reads back whole and in order, up to a seq too, and its
// latest version is its last one; the scan of the whole index visits each
// (stream, version) once, in key order.
void expect_index_whole(const EventStore& store, const Expected& expected) {
  for (const auto& [stream, seqs] : expected) {
    SCOPED_TRACE(stream);
    std::vector<uint64_t> read;
    Status s = store.read_stream(stream, 0, [&](const fb::Event& e, std::string_view) {
      EXPECT_EQ(e.stream_version(), read.size() + 1);
      read.push_back(e.seq());
      return true;
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(read, seqs);
    const uint64_t until = seqs[seqs.size() / 2];
    size_t below = 0;
    ASSERT_TRUE(store
                    .read_stream(stream, until,
                                 [&](const fb::Event& e, std::string_view) {
                                   EXPECT_LE(e.seq(), until);
                                   ++below;
                                   return true;
                                 })
                    .ok());
    EXPECT_EQ(below, seqs.size() / 2 + 1);
    uint32_t version = 0;
    ASSERT_TRUE(store.stream_version(stream, &version).ok());
    EXPECT_EQ(version, seqs.size());
  }
  Expected scanned;
  std::string previous_key;
  Status s = store.scan_stream_index([&](const StreamIndexEntry& e) {
    EXPECT_TRUE(e.well_formed);
    std::string key;
    keys::stream_index_key(e.stream, e.version, &key);
    EXPECT_LT(previous_key, key) << "out of key order at " << e.stream << " " << e.version;
    previous_key = key;
    auto& seqs = scanned[std::string(e.stream)];
    EXPECT_EQ(e.version, seqs.size() + 1) << e.stream;
    seqs.push_back(e.seq);
    return true;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(scanned, expected);
  VerifyReport report;
  Status v = verify_log(store, &report);
  EXPECT_TRUE(v.ok()) << v.ToString();
}

// The stored runs of a closed store's folder: key -> versions.
std::map<std::string, size_t> stored_runs(RawDb& raw) {
  std::map<std::string, size_t> runs;
  for (const auto& [key, value] : raw.entries(keys::kStreamIndexFamily)) {
    size_t versions = 0;
    EXPECT_TRUE(keys::parse_stream_index_run(value, &versions)) << key;
    runs[key] = versions;
  }
  return runs;
}

uint64_t stored_index_covers(RawDb& raw) {
  std::string v = raw.get(keys::kDefaultFamily, keys::kIndexCoversKey);
  EXPECT_EQ(v.size(), keys::kSeqBytes);
  return v.size() == keys::kSeqBytes ? keys::get_be64(v.data()) : 0;
}

TEST(StreamIndex, VersionsInRunsAndInMemoryReadAsOneStream) {
  TempDir dir;
  auto store = open_store(dir.path(), checkpoint_every(7));
  LogBuilder log;
  Expected expected;
  // Batches of 1 to 5 events: checkpoints land before, inside and after
  // the runs of every stream.
  for (size_t i = 0; i < 30; ++i) {
    ASSERT_NO_FATAL_FAILURE(append_batches(*store, log, &expected, 1, 1 + i % 5));
    if (i % 4 == 3) expect_index_whole(*store, expected);
  }
  expect_index_whole(*store, expected);
}

TEST(StreamIndex, ACheckpointWritesARunPerStreamAndACleanCloseLeavesNothingInMemory) {
  TempDir dir;
  LogBuilder log;
  Expected expected;
  {
    auto store = open_store(dir.path(), checkpoint_every(8));
    ASSERT_NO_FATAL_FAILURE(append_batches(*store, log, &expected, 3, 4));
    // 12 events: the third append found 8 in memory and carried their
    // checkpoint.
  }
  // Closed: the close wrote the rest. Each stream has a run of versions 1-2
  // (the checkpoint) and one of version 3 (the close).
  std::map<std::string, size_t> runs;
  {
    RawDb raw(dir.path());
    EXPECT_EQ(stored_index_covers(raw), 12u);
    runs = stored_runs(raw);
  }
  EXPECT_EQ(runs.size(), 2 * kStreams.size());
  for (const auto& stream : kStreams) {
    std::string first, second;
    keys::stream_index_key(stream, 1, &first);
    keys::stream_index_key(stream, 3, &second);
    EXPECT_EQ(runs[first], 2u) << stream;
    EXPECT_EQ(runs[second], 1u) << stream;
  }
  auto reopened = open_store(dir.path(), read_only_mode());
  expect_index_whole(*reopened, expected);
}

TEST(StreamIndex, AnOpenAfterACrashIndexesTheLogAfterTheLastCheckpoint) {
  TempDir dir, crashed;
  LogBuilder log;
  Expected expected;
  auto store = open_store(dir.path(), checkpoint_every(10));
  ASSERT_NO_FATAL_FAILURE(append_batches(*store, log, &expected, 6, 3));
  // What a crash leaves: the folder as it is while the store has it open
  // (every append synced, no close).
  std::filesystem::copy(dir.path(), crashed.path(), std::filesystem::copy_options::recursive);
  std::filesystem::remove(crashed.path() + "/LOCK");
  {
    auto reading = open_store(crashed.path(), read_only_mode());
    expect_index_whole(*reading, expected);
  }
  auto writable = open_store(crashed.path(), checkpoint_every(10));
  expect_index_whole(*writable, expected);
  // It goes on: versions continue where the log left them.
  ASSERT_NO_FATAL_FAILURE(append_batches(*writable, log, &expected, 1, 8));
  expect_index_whole(*writable, expected);
}

TEST(StreamIndex, ASecondaryFollowsThePrimaryAcrossItsCheckpoints) {
  TempDir dir, scratch;
  auto primary = open_store(dir.path(), checkpoint_every(5));
  LogBuilder log;
  Expected expected;
  ASSERT_NO_FATAL_FAILURE(append_batches(*primary, log, &expected, 1, 3));
  auto secondary = open_store(dir.path(), secondary_mode(scratch.path()));
  expect_index_whole(*secondary, expected);
  ASSERT_NO_FATAL_FAILURE(append_batches(*primary, log, &expected, 4, 3));
  ASSERT_TRUE(secondary->refresh().ok());
  EXPECT_EQ(secondary->last_seq(), 15u);
  expect_index_whole(*secondary, expected);
}

TEST(StreamIndex, AStoreOfTheFirstFormatIsReadAndThenUpgradedByAWritableOpen) {
  TempDir dir;
  LogBuilder log;
  Expected expected;
  {
    auto store = open_store(dir.path());
    ASSERT_NO_FATAL_FAILURE(append_batches(*store, log, &expected, 3, 5));
  }
  // Rewritten as the first format wrote it: an entry per event, no
  // index_covers, the old format name.
  {
    RawDb raw(dir.path());
    for (const auto& [key, versions] : stored_runs(raw)) {
      (void)versions;
      raw.remove(keys::kStreamIndexFamily, key);
    }
    for (const auto& [stream, seqs] : expected) {
      for (size_t i = 0; i < seqs.size(); ++i) {
        std::string key;
        keys::stream_index_key(stream, static_cast<uint32_t>(i + 1), &key);
        raw.put(keys::kStreamIndexFamily, key, RawDb::log_key(seqs[i]));
      }
    }
    raw.remove(keys::kDefaultFamily, keys::kIndexCoversKey);
    raw.put(keys::kDefaultFamily, keys::kFormatKey, keys::kFirstStoreFormat);
  }
  {
    auto reading = open_store(dir.path(), read_only_mode());
    expect_index_whole(*reading, expected);
  }
  EXPECT_EQ(RawDb(dir.path()).get(keys::kDefaultFamily, keys::kFormatKey), keys::kFirstStoreFormat)
      << "a reading open changed the folder";
  {
    auto writable = open_store(dir.path(), checkpoint_every(4));
    expect_index_whole(*writable, expected);
    ASSERT_NO_FATAL_FAILURE(append_batches(*writable, log, &expected, 2, 3));
    expect_index_whole(*writable, expected);
  }
  EXPECT_EQ(RawDb(dir.path()).get(keys::kDefaultFamily, keys::kFormatKey), keys::kStoreFormat);
  auto reopened = open_store(dir.path(), read_only_mode());
  expect_index_whole(*reopened, expected);
}

TEST(StreamIndex, AStreamNeverAppendedToHasNoVersionsAndReadsEmpty) {
  TempDir dir;
  auto store = open_store(dir.path(), checkpoint_every(3));
  LogBuilder log;
  ASSERT_TRUE(store->append(log.batch({"job/a", "job/c"}, 8)).ok());
  ASSERT_TRUE(store->append(log.batch({"job/a"}, 1)).ok());
  for (const char* stream : {"job/b", "job/", "job/a0", "job/cc"}) {
    uint32_t version = 99;
    ASSERT_TRUE(store->stream_version(stream, &version).ok()) << stream;
    EXPECT_EQ(version, 0u) << stream;
    int calls = 0;
    ASSERT_TRUE(store
                    ->read_stream(stream, 0,
                                  [&](const fb::Event&, std::string_view) {
                                    ++calls;
                                    return true;
                                  })
                    .ok());
    EXPECT_EQ(calls, 0) << stream;
  }
}

}  // namespace
}  // namespace runledger::testing
