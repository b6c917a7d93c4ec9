// The in-memory runs of the stream index: a version is added only where it
// continues its stream's run, and the streams come out in key order.
#include "events/open_stream_index.h"

#include <gtest/gtest.h>

#include "events/keys.h"

namespace runledger {
namespace {

TEST(OpenStreamIndex, AddsVersionsThatContinueARunAndRefusesTheRest) {
  OpenStreamIndex index;
  EXPECT_TRUE(index.empty());
  EXPECT_TRUE(index.add("job/a", 4, 10));  // a run may start at any version
  EXPECT_TRUE(index.add("job/a", 5, 12));
  EXPECT_FALSE(index.add("job/a", 7, 13)) << "a gap";
  EXPECT_FALSE(index.add("job/a", 5, 13)) << "a repeat";
  EXPECT_TRUE(index.add("job/b", 1, 11));
  const StreamRun* a = index.find("job/a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->first_version, 4u);
  EXPECT_EQ(a->last_version(), 5u);
  EXPECT_EQ(a->seqs, (std::vector<uint64_t>{10, 12}));
  EXPECT_EQ(index.find("job/c"), nullptr);
  EXPECT_EQ(index.events(), 3u);
  index.clear();
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.events(), 0u);
  EXPECT_EQ(index.find("job/a"), nullptr);
}

TEST(OpenStreamIndex, SortedGivesTheOrderOfTheFamilysKeys) {
  OpenStreamIndex index;
  const char* names[] = {"job/ab", "job/a", "connector/c", "job/a/b", "hold/z"};
  uint64_t seq = 0;
  for (const char* n : names) ASSERT_TRUE(index.add(n, 1, ++seq));
  auto sorted = index.sorted();
  ASSERT_EQ(sorted.size(), 5u);
  for (size_t i = 1; i < sorted.size(); ++i) {
    std::string before, after;
    keys::stream_index_key(sorted[i - 1].first, 1, &before);
    keys::stream_index_key(sorted[i].first, 1, &after);
    EXPECT_LT(before, after) << sorted[i - 1].first << " then " << sorted[i].first;
  }
}

}  // namespace
}  // namespace runledger
