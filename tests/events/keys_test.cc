// The key grammar: byte order is numeric order, and one stream's index keys
// never mix with another's.
#include "events/keys.h"

#include <gtest/gtest.h>

namespace runledger::keys {
namespace {

TEST(Keys, LogKeysSortLikeTheirSeqs) {
  char a[kSeqBytes], b[kSeqBytes];
  const uint64_t pairs[][2] = {
      {1, 2}, {255, 256}, {65'535, 65'536}, {1ull << 40, (1ull << 40) + 1}};
  for (const auto& p : pairs) {
    EXPECT_LT(std::string(log_key(p[0], a)), std::string(log_key(p[1], b))) << p[0];
  }
  uint64_t seq = 0;
  ASSERT_TRUE(parse_log_key(log_key(0x0102030405060708ull, a), &seq));
  EXPECT_EQ(seq, 0x0102030405060708ull);
  EXPECT_FALSE(parse_log_key("short", &seq));
}

TEST(Keys, StreamIndexKeyRoundTripsAndSortsByVersion) {
  std::string k1, k2;
  stream_index_key("job/a", 255, &k1);
  stream_index_key("job/a", 256, &k2);
  EXPECT_LT(k1, k2);
  std::string_view stream;
  uint32_t version = 0;
  ASSERT_TRUE(parse_stream_index_key(k2, &stream, &version));
  EXPECT_EQ(stream, "job/a");
  EXPECT_EQ(version, 256u);
  EXPECT_FALSE(parse_stream_index_key("job/a", &stream, &version));
}

TEST(Keys, AStreamIndexRunHoldsWholeSeqsInOrder) {
  const uint64_t seqs[] = {1, 256, 1ull << 40};
  std::string value;
  append_stream_index_run(seqs, 3, &value);
  EXPECT_EQ(value.size(), 3 * kSeqBytes);
  size_t versions = 0;
  ASSERT_TRUE(parse_stream_index_run(value, &versions));
  ASSERT_EQ(versions, 3u);
  for (size_t i = 0; i < versions; ++i) EXPECT_EQ(stream_index_run_seq(value, i), seqs[i]);
  // A value of the first store format is a run of one.
  char one[kSeqBytes];
  ASSERT_TRUE(parse_stream_index_run(log_key(7, one), &versions));
  EXPECT_EQ(versions, 1u);
  EXPECT_FALSE(parse_stream_index_run("", &versions));
  EXPECT_FALSE(parse_stream_index_run(value.substr(0, 12), &versions));
}

TEST(Keys, OneStreamsBoundsExcludeStreamsItPrefixes) {
  std::string lower, upper, other;
  stream_index_bounds("job/a", &lower, &upper);
  stream_index_key("job/ab", 1, &other);
  EXPECT_FALSE(other >= lower && other < upper);
  std::string own_first, own_last;
  stream_index_key("job/a", 1, &own_first);
  stream_index_key("job/a", UINT32_MAX, &own_last);
  EXPECT_TRUE(own_first >= lower && own_last < upper);
}

TEST(Keys, StreamNamesWithTheSeparatorOrTooLongAreRejected) {
  EXPECT_TRUE(valid_stream_name("job/a"));
  EXPECT_FALSE(valid_stream_name(""));
  EXPECT_FALSE(valid_stream_name(std::string("job/\0a", 6)));
  EXPECT_FALSE(valid_stream_name(std::string(kStreamBytesMax + 1, 'a')));
  EXPECT_TRUE(valid_stream_name(std::string(kStreamBytesMax, 'a')));
}

TEST(Keys, IdempotencyRecordedAtIsTheFirstEightBytes) {
  std::string v(kRecordedAtBytes, '\0');
  put_be64(1'700'000'000'123ull, v.data());
  v += "reply";
  int64_t ms = 0;
  ASSERT_TRUE(idempotency_recorded_at_ms(v, &ms));
  EXPECT_EQ(ms, 1'700'000'000'123);
  EXPECT_FALSE(idempotency_recorded_at_ms("1234567", &ms));
}

}  // namespace
}  // namespace runledger::keys
