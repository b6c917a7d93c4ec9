// RL_ASSERT (base/assert.h): on in every build, it stops the process with
// where and why when an invariant is broken, and costs nothing otherwise.
#include "base/assert.h"

#include <gtest/gtest.h>

namespace runledger::testing {
namespace {

TEST(Assert, AHeldInvariantGoesOn) {
  int checked = 0;
  RL_ASSERT(++checked == 1, "the condition is evaluated once");
  EXPECT_EQ(checked, 1);
}

TEST(AssertDeathTest, ABrokenInvariantStopsTheProcessSayingWhereAndWhy) {
  EXPECT_DEATH(RL_ASSERT(1 + 1 == 3, "arithmetic holds"),
               "assert_test.cc:[0-9]+: invariant broken: arithmetic holds \\(1 \\+ 1 == 3\\)");
}

}  // namespace
}  // namespace runledger::testing
