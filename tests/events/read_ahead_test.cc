// read_range_ahead: the same events, bytes and order as read_range, each with
// its SHA-256, over ranges of many hand-over chunks; early stops, damage and
// exceptions from the visitor end the reading thread cleanly.
#include "events/read_ahead.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "base/sha256.h"
#include "events/keys.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

using Code = Status::Code;

// Enough events for several 1 MiB chunks (each event is ~100-200 bytes).
constexpr uint64_t kReadAheadEvents = 30'000;
constexpr size_t kEventsPerAppend = 1'000;

class ReadAheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = open_store(dir.path());
    while (log.seq() < kReadAheadEvents) {
      AppendBatch b = log.batch({"job/a", "job/b", "hold/h", "connector/c"}, kEventsPerAppend);
      for (auto& e : b.events) events.push_back(e.bytes);
      ASSERT_TRUE(store->append(b).ok());
    }
  }

  TempDir dir;
  LogBuilder log;
  std::vector<std::string> events;  // events[i] has seq i + 1
};

TEST_F(ReadAheadTest, GivesEveryEventOfTheRangeInOrderWithItsHash) {
  auto store = open_store(dir.path(), read_only_mode());
  for (auto [after, until] : {std::pair<uint64_t, uint64_t>{0, 0},
                              {0, kReadAheadEvents},
                              {12'345, 23'456},
                              {kReadAheadEvents - 1, 0},
                              {kReadAheadEvents, 0},
                              {7, 7}}) {
    SCOPED_TRACE("after " + std::to_string(after) + " until " + std::to_string(until));
    uint64_t next = after + 1;
    size_t hash_mismatches = 0;
    size_t byte_mismatches = 0;
    Status st = read_range_ahead(*store, after, until,
                                 [&](const fb::Event& e, std::string_view bytes, const Hash& h) {
                                   EXPECT_EQ(e.seq(), next);
                                   if (bytes != events.at(e.seq() - 1)) ++byte_mismatches;
                                   if (h != sha256(bytes)) ++hash_mismatches;
                                   ++next;
                                   return true;
                                 });
    ASSERT_TRUE(st.ok()) << st.ToString();
    uint64_t last = until == 0 ? kReadAheadEvents : std::max(until, after);
    EXPECT_EQ(next, last + 1);
    EXPECT_EQ(byte_mismatches, 0u);
    EXPECT_EQ(hash_mismatches, 0u);
  }
}

TEST_F(ReadAheadTest, StopsWhereTheVisitorSaysAndReturnsOk) {
  auto store = open_store(dir.path(), read_only_mode());
  for (uint64_t stop_at : {uint64_t{1}, uint64_t{5'000}, kReadAheadEvents - 1}) {
    uint64_t visited = 0;
    Status st =
        read_range_ahead(*store, 0, 0, [&](const fb::Event& e, std::string_view, const Hash&) {
          ++visited;
          return e.seq() < stop_at;
        });
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(visited, stop_at);
  }
}

TEST_F(ReadAheadTest, AnExceptionFromTheVisitorReachesTheCallerAndTheReaderEnds) {
  auto store = open_store(dir.path(), read_only_mode());
  uint64_t visited = 0;
  EXPECT_THROW(
      (void)read_range_ahead(*store, 0, 0,
                             [&](const fb::Event& e, std::string_view, const Hash&) -> bool {
                               ++visited;
                               if (e.seq() == 20'000) throw std::runtime_error("fold failed");
                               return true;
                             }),
      std::runtime_error);
  EXPECT_EQ(visited, 20'000u);
  // The store is still usable: the reader released it.
  uint64_t again = 0;
  ASSERT_TRUE(
      read_range_ahead(*store, 0, 100, [&](const fb::Event&, std::string_view, const Hash&) {
        return ++again > 0;
      }).ok());
  EXPECT_EQ(again, 100u);
}

TEST_F(ReadAheadTest, DamageIsReportedAfterEveryEventBeforeIt) {
  constexpr uint64_t kMissing = 17'777;
  RawDb(dir.path()).remove(keys::kLogFamily, RawDb::log_key(kMissing));
  auto store = open_store(dir.path(), read_only_mode());
  uint64_t last = 0;
  Status st =
      read_range_ahead(*store, 0, 0, [&](const fb::Event& e, std::string_view, const Hash&) {
        last = e.seq();
        return true;
      });
  EXPECT_EQ(st.code(), Code::kCorruption) << st.ToString();
  EXPECT_EQ(st.seq(), kMissing);
  EXPECT_EQ(last, kMissing - 1);
  // The same outcome as the store's own scan.
  Status direct = store->read_range(0, 0, [](const fb::Event&, std::string_view) { return true; });
  EXPECT_EQ(direct.ToString(), st.ToString());
}

}  // namespace
}  // namespace runledger::testing
