// The counts of stored finished jobs through the group commit
// (engine/finished_count_stages.h): what is decided is not stored until its
// batch is durable, a failed write leaves the stored counts as they were,
// and a reset puts every stage back to the store's.
#include "engine/finished_count_stages.h"

#include <gtest/gtest.h>

namespace runledger {
namespace {

using Counts = FinishedCountStages::Counts;

Counts counts(int64_t first) {
  Counts c{};
  c[0] = first;
  return c;
}

TEST(FinishedCountStages, DecidedCountsBecomeStoredOnlyWhenTheirBatchIsDurable) {
  FinishedCountStages f;
  f.reset(counts(5));
  EXPECT_EQ(f.decided(), counts(5));
  f.decided()[0] += 2;
  f.hand_over(f.decided());
  EXPECT_EQ(f.stored(), counts(5)) << "the batch is with the writer";
  f.decided()[0] += 1;  // the next batch is decided meanwhile
  f.writer_succeeded();
  EXPECT_EQ(f.stored(), counts(7)) << "as of the batch written, not of the one decided since";
  EXPECT_EQ(f.decided(), counts(8));
}

TEST(FinishedCountStages, ABatchThatChangedNoCountLeavesTheStoredOnes) {
  FinishedCountStages f;
  f.reset(counts(3));
  f.hand_over(std::nullopt);
  f.writer_succeeded();
  EXPECT_EQ(f.stored(), counts(3));
}

TEST(FinishedCountStages, AFailedWriteDropsItsCountsAndAResetStartsOverFromTheStore) {
  FinishedCountStages f;
  f.reset(counts(3));
  f.decided()[0] = 9;
  f.hand_over(f.decided());
  f.writer_failed();
  f.writer_succeeded();  // nothing is with the writer any more
  EXPECT_EQ(f.stored(), counts(3));
  f.reset(counts(4));  // the rebuild read the store
  EXPECT_EQ(f.decided(), counts(4));
  EXPECT_EQ(f.stored(), counts(4));
}

}  // namespace
}  // namespace runledger
