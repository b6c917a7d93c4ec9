// The in-memory runs of the stream index: a version is added only where it
// continues its stream's run, a checkpoint starts the runs over after what
// it wrote, idle entries go, and the streams come out in key order.
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

TEST(OpenStreamIndex, ACheckpointStartsTheRunsOverAndIdleEntriesGoAtTheNext) {
  OpenStreamIndex index;
  OpenStream* a = index.insert("job/a", 7);  // versions 1-7 in the family
  EXPECT_EQ(index.find("job/a")->last_version(), 7u);
  EXPECT_TRUE(index.empty());
  index.publish(a, 100);
  index.publish(a, 101);
  ASSERT_TRUE(index.add("job/b", 1, 102));
  EXPECT_EQ(index.events(), 3u);
  EXPECT_EQ(index.find("job/a")->first_version, 8u);
  EXPECT_EQ(index.find("job/a")->last_version(), 9u);
  OpenStreamIndex copy = index.copy_runs();
  EXPECT_EQ(copy.events(), 3u);
  EXPECT_EQ(copy.find("job/a")->seqs, (std::vector<uint64_t>{100, 101}));

  index.checkpointed();
  EXPECT_TRUE(index.empty());
  // The entries stay, knowing their latest version, with empty runs.
  EXPECT_EQ(index.find("job/a")->first_version, 10u);
  EXPECT_EQ(index.find("job/a")->last_version(), 9u);
  EXPECT_EQ(index.find("job/b")->last_version(), 1u);
  EXPECT_TRUE(index.copy_runs().empty());
  ASSERT_TRUE(index.add("job/a", 10, 103));
  EXPECT_FALSE(index.add("job/b", 1, 104)) << "version 1 of job/b is in the family";

  index.evict_idle();
  EXPECT_NE(index.find("job/a"), nullptr);
  EXPECT_EQ(index.find("job/b"), nullptr) << "nothing since the checkpoint";
}

TEST(OpenStreamIndex, SortedGivesTheOrderOfTheFamilysKeys) {
  OpenStreamIndex index;
  const char* names[] = {"job/ab", "job/a", "connector/c", "job/a/b", "hold/z"};
  uint64_t seq = 0;
  for (const char* n : names) ASSERT_TRUE(index.add(n, 1, ++seq));
  auto sorted = index.sorted_runs();
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
