// Holds together with the job model, from commands to folded state: the
// hold placed when a running attempt goes STALE, its release resolving that
// attempt, and the gate's attempt_active reason while an attempt holds the
// target.
#include <gtest/gtest.h>

#include "tests/projections/hold_testing.h"

namespace runledger::testing {
namespace {

using holds::kExecutionStateUnknown;
using holds::kResultUnknown;
using Json = nlohmann::json;

const std::string kToken(jobs::kLeaseTokenChars, 'a');

jobs::Enqueue enqueue_cmd(const std::string& id, const std::string& target) {
  jobs::Enqueue e;
  e.id = id;
  e.kind = "load";
  e.target = target;
  return e;
}

void given_leased(Given& g, const std::string& job, const std::string& target) {
  Decision enq = g.run(enqueue_cmd(job, target));
  ASSERT_FALSE(enq.rejection) << enq.rejection->message;
  jobs::Claim claim;
  claim.worker = "w1";
  claim.lease_s = 30;
  claim.lease_token = kToken;
  Decision c = g.run(claim);
  ASSERT_FALSE(c.rejection) << c.rejection->message;
  ASSERT_EQ(g.state.jobs.by_id.at(job).latest().state, jobs::AttemptState::kLeased);
}

void given_running(Given& g, const std::string& job, const std::string& target) {
  given_leased(g, job, target);
  Decision s = g.run(jobs::Start{job, kToken, "ecs-task-1"});
  ASSERT_FALSE(s.rejection) << s.rejection->message;
}

// Given a running attempt whose lease ran out: STALE, with the hold placed
// at staleness. Returns that hold's id.
std::string given_stale_by_lease_expiry(Given& g, const std::string& job,
                                        const std::string& target) {
  given_running(g, job, target);
  g.now_ms += 31'000;
  Decision d = g.run(jobs::ExpireLeases{});
  EXPECT_FALSE(d.rejection);
  const jobs::Attempt& a = g.state.jobs.by_id.at(job).latest();
  EXPECT_EQ(a.state, jobs::AttemptState::kStale);
  EXPECT_FALSE(a.stale_hold_id.empty());
  return a.stale_hold_id;
}

TEST(HoldWithJobs, PlacingOnAnEnqueuedJobRecordsItsFirstAttempt) {
  Given g;
  g.run(enqueue_cmd("j1", "orders"));
  Decision d = g.run(place_cmd("h1", "orders", kResultUnknown, "suspicious", "j1"));
  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(g.state.holds.by_id.at("h1").attempt, 1);
}

TEST(HoldWithJobs, LeaseExpiryOfARunningAttemptPlacesABlockingHold) {
  Given g;
  std::string hold = given_stale_by_lease_expiry(g, "j1", "orders");
  const holds::Hold& h = g.state.holds.by_id.at(hold);
  EXPECT_EQ(h.kind, kExecutionStateUnknown);
  EXPECT_EQ(h.target, "orders");
  EXPECT_EQ(h.job, "j1");
  EXPECT_EQ(h.attempt, 1);
  EXPECT_EQ(holds::gate(g.state, "orders")["may_start"], false);
}

TEST(HoldWithJobs, ReleaseOfTheStaleHoldWithoutOutcomeChangesNothing) {
  Given g;
  std::string hold = given_stale_by_lease_expiry(g, "j1", "orders");
  const size_t events_before = g.log().size();
  Decision d = g.run(release_cmd(hold, "task STOPPED", true));

  expect_refused_naming_field(d, 422, "missing_field", "outcome");
  EXPECT_EQ(g.log().size(), events_before);
  EXPECT_EQ(g.state.jobs.by_id.at("j1").latest().state, jobs::AttemptState::kStale);
  EXPECT_FALSE(g.state.holds.by_id.at(hold).released);
}

TEST(HoldWithJobs, ReleaseOfTheStaleHoldWithOutcomeResolvesTheAttempt) {
  Given g;
  std::string hold = given_stale_by_lease_expiry(g, "j1", "orders");
  Decision d = g.run(release_cmd(hold, "task STOPPED, exit 0", true, "SUCCEEDED"));

  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(Given::types(d), (std::vector<std::string>{"HoldReleased", "AttemptResolved"}));
  EXPECT_EQ(g.state.jobs.by_id.at("j1").latest().state, jobs::AttemptState::kSucceeded);
  EXPECT_EQ(g.state.holds.by_id.at(hold).outcome, "SUCCEEDED");
  Json gate = holds::gate(g.state, "orders");
  EXPECT_EQ(gate["may_start"], true);
  EXPECT_EQ(gate["reasons"], Json::array());
}

TEST(HoldWithJobs, ResultUnknownReportReleasedWithOutcomeFailsTheAttempt) {
  Given g;
  given_running(g, "j1", "orders");
  Decision report = g.run(jobs::OutcomeUnknown{"j1", kToken, kResultUnknown, "exit code lost"});
  ASSERT_FALSE(report.rejection) << report.rejection->message;
  const std::string hold = g.state.jobs.by_id.at("j1").latest().stale_hold_id;
  ASSERT_FALSE(hold.empty());
  EXPECT_EQ(holds::gate(g.state, "orders")["may_start"], true);
  EXPECT_EQ(holds::gate(g.state, "orders")["recovery_needed"].size(), 1u);

  Decision d = g.run(release_cmd(hold, "output incomplete", std::nullopt, "FAILED"));
  ASSERT_FALSE(d.rejection) << d.rejection->message;
  EXPECT_EQ(g.state.jobs.by_id.at("j1").latest().state, jobs::AttemptState::kFailed);
  EXPECT_EQ(holds::gate(g.state, "orders")["recovery_needed"], Json::array());
}

TEST(HoldWithJobs, FoldFromStoredBytesEqualsLiveState) {
  Given g;
  std::string hold = given_stale_by_lease_expiry(g, "j1", "orders");
  g.run(place_cmd("op", "payments", kResultUnknown));
  g.run(release_cmd(hold, "task STOPPED", true, "FAILED"));
  State replayed = replay(g.log());
  EXPECT_EQ(replayed.holds, g.state.holds);
  EXPECT_EQ(jobs::view(replayed, replayed.jobs.by_id.at("j1")),
            jobs::view(g.state, g.state.jobs.by_id.at("j1")));
}

TEST(GateWithJobs, LeasedAttemptIsAnActiveAttemptReason) {
  Given g;
  given_leased(g, "j1", "orders");
  Json gate = holds::gate(g.state, "orders");
  EXPECT_EQ(gate["may_start"], false);
  EXPECT_EQ(gate["reasons"],
            (Json::array({{{"code", "attempt_active"}, {"job", "j1"}, {"state", "LEASED"}}})));
}

TEST(GateWithJobs, RunningAttemptIsAnActiveAttemptReason) {
  Given g;
  given_running(g, "j1", "orders");
  Json gate = holds::gate(g.state, "orders");
  EXPECT_EQ(gate["may_start"], false);
  EXPECT_EQ(gate["reasons"],
            (Json::array({{{"code", "attempt_active"}, {"job", "j1"}, {"state", "RUNNING"}}})));
  EXPECT_EQ(holds::gate(g.state, "payments")["may_start"], true);
}

TEST(GateWithJobs, BlockingHoldAndActiveAttemptAreBothListed) {
  Given g;
  given_running(g, "j1", "orders");
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  Json gate = holds::gate(g.state, "orders");
  EXPECT_EQ(gate["may_start"], false);
  ASSERT_EQ(gate["reasons"].size(), 2u);
  EXPECT_EQ(gate["reasons"][0]["code"], "hold");
  EXPECT_EQ(gate["reasons"][1]["code"], "attempt_active");
}

}  // namespace
}  // namespace runledger::testing
