// Reads from several threads while one thread appends: every reader sees a
// gapless prefix of the log that reaches at least the last_seq() it read
// first, and never a stream with a hole in its versions, also while the
// appends move the stream index from memory to the family (a checkpoint
// every few batches).
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "events/rocksdb_store.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

constexpr int kConcurrentBatches = 200;
constexpr size_t kConcurrentBatchEvents = 30;
constexpr int kReaders = 2;
constexpr size_t kIndexCheckpointEvents = 100;

// One pass of a reader; counts what it found wrong.
int read_once(const EventStore& store, uint64_t* last_seen) {
  int wrong = 0;
  const uint64_t last = store.last_seq();
  wrong += last < *last_seen ? 1 : 0;  // last_seq never goes back
  *last_seen = last;
  // until = 0 means "to the end", so an empty log has no prefix to bound.
  if (last > 0) {
    uint64_t n = 0;
    Status s = store.read_range(0, last, [&](const fb::Event& e, std::string_view) {
      wrong += e.seq() == ++n ? 0 : 1;
      return true;
    });
    wrong += s.ok() && n == last ? 0 : 1;  // all of it is readable once announced
  }
  uint32_t v = 0;
  Status rs = store.read_stream("job/1", 0, [&](const fb::Event& e, std::string_view) {
    wrong += e.stream_version() == ++v ? 0 : 1;
    return true;
  });
  wrong += rs.ok() ? 0 : 1;
  // Every third event is job/1's: none durable before the read may be missing.
  wrong += v >= last / 3 ? 0 : 1;
  uint32_t version = 0;
  wrong += store.stream_version("job/1", &version).ok() && version >= v ? 0 : 1;
  return wrong;
}

TEST(StoreConcurrency, ReadersSeeAGaplessPrefixWhileOneThreadAppends) {
  TempDir dir;
  StoreOptions options;
  options.index_checkpoint_events = kIndexCheckpointEvents;
  auto store = open_store(dir.path(), options);
  LogBuilder log;
  std::atomic<bool> appending{true};
  std::atomic<int> wrong{0};
  std::atomic<int> passes{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&] {
      uint64_t last_seen = 0;
      // At least one pass after the last append, whatever the scheduling.
      bool final_pass = false;
      while (!final_pass) {
        final_pass = !appending.load();
        wrong += read_once(*store, &last_seen);
        ++passes;
      }
    });
  }
  int appended = 0;
  for (; appended < kConcurrentBatches; ++appended) {
    if (!store->append(log.batch({"job/0", "job/1", "job/2"}, kConcurrentBatchEvents)).ok()) break;
  }
  appending = false;
  for (auto& t : readers) t.join();
  EXPECT_EQ(appended, kConcurrentBatches);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(passes.load(), kReaders);
  EXPECT_EQ(store->last_seq(), kConcurrentBatches * kConcurrentBatchEvents);
}

}  // namespace
}  // namespace runledger::testing
