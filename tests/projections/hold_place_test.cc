// Placing a hold (docs/domain.md section 3; docs/api.md POST /v1/holds): both
// kinds, what each blocks, and every refusal. The job a hold concerns is
// given as state (a Job in memory) so these tests need only the hold model.
#include <gtest/gtest.h>

#include "events/event_json.h"
#include "tests/projections/hold_testing.h"

namespace runledger::testing {
namespace {

using holds::kExecutionStateUnknown;
using holds::kResultUnknown;

TEST(HoldPlace, ExecutionStateUnknownHoldIsRecordedAndBlocksItsTarget) {
  Given g;
  g.actor = "ops-alice";
  Decision d = g.run(place_cmd("h1", "orders/2026-05-06", kExecutionStateUnknown, "lost reply"));

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(Given::types(d), std::vector<std::string>{"HoldPlaced"});
  EXPECT_EQ(d.events[0].stream, "hold/h1");
  const holds::Hold& h = g.state.holds.by_id.at("h1");
  EXPECT_EQ(h.target, "orders/2026-05-06");
  EXPECT_EQ(h.kind, kExecutionStateUnknown);
  EXPECT_EQ(h.reason, "lost reply");
  EXPECT_EQ(h.placed_by, "ops-alice");
  EXPECT_EQ(h.placed_at_ms, g.now_ms);
  EXPECT_FALSE(h.released);
  EXPECT_EQ(h.version, 1u);
  ASSERT_NE(holds::blocking_hold(g.state, "orders/2026-05-06"), nullptr);
  EXPECT_EQ(holds::blocking_hold(g.state, "orders/2026-05-06")->id, "h1");
  EXPECT_EQ(g.state.holds.open_by_kind.at(kExecutionStateUnknown), 1u);
}

TEST(HoldPlace, ResultUnknownHoldIsRecordedButDoesNotBlock) {
  Given g;
  Decision d = g.run(place_cmd("h1", "orders", kResultUnknown));

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(g.state.holds.by_id.at("h1").kind, kResultUnknown);
  EXPECT_EQ(holds::blocking_hold(g.state, "orders"), nullptr);
  EXPECT_TRUE(g.state.holds.blocking_by_target.empty());
  EXPECT_EQ(g.state.holds.recovery_by_target.at("orders"), std::set<std::string>{"h1"});
  EXPECT_EQ(g.state.holds.open_by_kind.at(kResultUnknown), 1u);
}

TEST(HoldPlace, EventDataCarriesTargetKindJobAttemptAndReason) {
  Given g;
  given_job(g, "j1", "orders", 2);
  g.run(place_cmd("h1", "orders", kResultUnknown, "output unchecked", "j1"));

  nlohmann::json e = last_event_json(g);
  EXPECT_EQ(e["type"], "HoldPlaced");
  EXPECT_EQ(e["stream"], "hold/h1");
  EXPECT_EQ(e["data"]["target"], "orders");
  EXPECT_EQ(e["data"]["kind"], kResultUnknown);
  EXPECT_EQ(e["data"]["job"], "j1");
  EXPECT_EQ(e["data"]["attempt"], 2);
  EXPECT_EQ(e["data"]["reason"], "output unchecked");
}

TEST(HoldPlace, HoldOnAJobRecordsTheJobsLatestAttempt) {
  Given g;
  given_job(g, "j1", "orders", 3);
  Decision d = g.run(place_cmd("h1", "orders", kExecutionStateUnknown, "why", "j1"));

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(g.state.holds.by_id.at("h1").job, "j1");
  EXPECT_EQ(g.state.holds.by_id.at("h1").attempt, 3);
}

TEST(HoldPlace, HoldWithoutAJobRecordsNoAttempt) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  EXPECT_EQ(g.state.holds.by_id.at("h1").job, "");
  EXPECT_EQ(g.state.holds.by_id.at("h1").attempt, 0);
}

TEST(HoldPlace, UnknownKindIsRefusedNamingTheField) {
  for (const char* kind : {"", "UNKNOWN", "execution_state_unknown", "ECS_STATE_UNKNOWN"}) {
    SCOPED_TRACE(kind);
    Given g;
    Decision d = g.run(place_cmd("h1", "orders", kind));
    expect_refused_naming_field(d, 422, "invalid_field", "kind");
    EXPECT_TRUE(g.state.holds.by_id.empty());
  }
}

TEST(HoldPlace, MissingReasonIsRefused) {
  Given g;
  Decision d = g.run(place_cmd("h1", "orders", kExecutionStateUnknown, ""));
  expect_refused_naming_field(d, 422, "missing_field", "reason");
  EXPECT_TRUE(g.state.holds.by_id.empty());
}

TEST(HoldPlace, ReasonBeyondItsLimitIsRefused) {
  Given g;
  std::string at_limit(holds::kReasonBytesMax, 'r');
  Decision over = g.run(place_cmd("h1", "orders", kResultUnknown, at_limit + "r"));
  expect_refused_naming_field(over, 422, "invalid_field", "reason");

  Decision at = g.run(place_cmd("h1", "orders", kResultUnknown, at_limit));
  EXPECT_FALSE(at.rejection);
}

TEST(HoldPlace, MissingTargetIsRefused) {
  Given g;
  Decision d = g.run(place_cmd("h1", "", kExecutionStateUnknown));
  expect_refused_naming_field(d, 422, "missing_field", "target");
}

TEST(HoldPlace, ExistingIdIsRefusedAsDuplicateAndTheHoldIsUnchanged) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown, "first"));
  Decision d = g.run(place_cmd("h1", "payments", kResultUnknown, "second"));

  expect_refused(d, 409, "duplicate_id");
  EXPECT_EQ(g.state.holds.by_id.at("h1").reason, "first");
  EXPECT_EQ(g.state.holds.by_id.at("h1").version, 1u);
}

TEST(HoldPlace, IdOfAReleasedHoldStaysTaken) {
  Given g;
  g.run(place_cmd("h1", "orders", kResultUnknown));
  g.run(release_cmd("h1", "checked output"));
  Decision d = g.run(place_cmd("h1", "orders", kResultUnknown));
  expect_refused(d, 409, "duplicate_id");
}

TEST(HoldPlace, UnknownJobIsNotFound) {
  Given g;
  Decision d = g.run(place_cmd("h1", "orders", kExecutionStateUnknown, "why", "ghost"));
  expect_refused(d, 404, "not_found");
  EXPECT_TRUE(g.state.holds.by_id.empty());
}

TEST(HoldPlace, JobOfAnotherTargetIsRefusedNamingTheJob) {
  Given g;
  given_job(g, "j1", "payments", 1);
  Decision d = g.run(place_cmd("h1", "orders", kExecutionStateUnknown, "why", "j1"));
  expect_refused_naming_field(d, 422, "invalid_field", "job");
}

}  // namespace
}  // namespace runledger::testing
