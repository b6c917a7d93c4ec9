// The start gate from holds alone (docs/domain.md section 3): open blocking holds
// say no, each named; RESULT_UNKNOWN holds do not block and are listed as
// needing recovery; holds elsewhere do not count. The attempt_active reason
// needs the job model: see hold_with_jobs_test.cc.
#include <gtest/gtest.h>

#include "tests/projections/hold_testing.h"

namespace runledger::testing {
namespace {

using holds::kExecutionStateUnknown;
using holds::kResultUnknown;
using Json = nlohmann::json;

TEST(Gate, TargetWithNothingOnItMayStart) {
  Given g;
  Json gate = holds::gate(g.state, "orders");
  EXPECT_EQ(gate, (Json{{"target", "orders"},
                        {"may_start", true},
                        {"reasons", Json::array()},
                        {"recovery_needed", Json::array()}}));
}

TEST(Gate, OpenBlockingHoldSaysNoAndNamesIt) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  Json gate = holds::gate(g.state, "orders");

  EXPECT_EQ(gate["may_start"], false);
  EXPECT_EQ(gate["reasons"],
            (Json::array({{{"code", "hold"}, {"hold", "h1"}, {"kind", kExecutionStateUnknown}}})));
  EXPECT_EQ(gate["recovery_needed"], Json::array());
}

TEST(Gate, ResultUnknownHoldDoesNotBlockButNeedsRecovery) {
  Given g;
  g.run(place_cmd("r1", "orders", kResultUnknown));
  Json gate = holds::gate(g.state, "orders");

  EXPECT_EQ(gate["may_start"], true);
  EXPECT_EQ(gate["reasons"], Json::array());
  EXPECT_EQ(gate["recovery_needed"], (Json::array({{{"hold", "r1"}, {"kind", kResultUnknown}}})));
}

TEST(Gate, EveryOpenBlockingHoldIsAReasonUntilAllAreReleased) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  g.run(place_cmd("h2", "orders", kExecutionStateUnknown));
  g.run(place_cmd("r1", "orders", kResultUnknown));
  EXPECT_EQ(holds::gate(g.state, "orders")["reasons"].size(), 2u);

  g.run(release_cmd("h1", "stopped", true));
  Json one_left = holds::gate(g.state, "orders");
  EXPECT_EQ(one_left["may_start"], false);
  ASSERT_EQ(one_left["reasons"].size(), 1u);
  EXPECT_EQ(one_left["reasons"][0]["hold"], "h2");

  g.run(release_cmd("h2", "stopped", true));
  Json none_left = holds::gate(g.state, "orders");
  EXPECT_EQ(none_left["may_start"], true);
  EXPECT_EQ(none_left["reasons"], Json::array());
  EXPECT_EQ(none_left["recovery_needed"].size(), 1u);
}

TEST(Gate, ReleasedResultUnknownHoldNoLongerNeedsRecovery) {
  Given g;
  g.run(place_cmd("r1", "orders", kResultUnknown));
  g.run(release_cmd("r1", "rows verified"));
  EXPECT_EQ(holds::gate(g.state, "orders")["recovery_needed"], Json::array());
}

TEST(Gate, HoldsOnOtherTargetsDoNotCount) {
  Given g;
  g.run(place_cmd("h1", "payments", kExecutionStateUnknown));
  g.run(place_cmd("r1", "payments", kResultUnknown));
  Json gate = holds::gate(g.state, "orders");
  EXPECT_EQ(gate["may_start"], true);
  EXPECT_EQ(gate["reasons"], Json::array());
  EXPECT_EQ(gate["recovery_needed"], Json::array());
}

TEST(Gate, TargetWithSlashesIsMatchedExactly) {
  Given g;
  g.run(place_cmd("h1", "shop-a/orders/2026-05-06", kExecutionStateUnknown));
  EXPECT_EQ(holds::gate(g.state, "shop-a/orders/2026-05-06")["may_start"], false);
  EXPECT_EQ(holds::gate(g.state, "shop-a/orders")["may_start"], true);
}

TEST(HoldBlocking, FirstOpenBlockingHoldOrNone) {
  Given g;
  EXPECT_EQ(holds::blocking_hold(g.state, "orders"), nullptr);
  g.run(place_cmd("r1", "orders", kResultUnknown));
  EXPECT_EQ(holds::blocking_hold(g.state, "orders"), nullptr);
  g.run(place_cmd("h2", "orders", kExecutionStateUnknown));
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  ASSERT_NE(holds::blocking_hold(g.state, "orders"), nullptr);
  EXPECT_EQ(holds::blocking_hold(g.state, "orders")->id, "h1");

  g.run(release_cmd("h1", "stopped", true));
  ASSERT_NE(holds::blocking_hold(g.state, "orders"), nullptr);
  EXPECT_EQ(holds::blocking_hold(g.state, "orders")->id, "h2");
  g.run(release_cmd("h2", "stopped", true));
  EXPECT_EQ(holds::blocking_hold(g.state, "orders"), nullptr);
}

}  // namespace
}  // namespace runledger::testing
