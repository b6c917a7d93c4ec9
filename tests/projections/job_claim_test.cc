// Claim (docs/domain.md 1.2, 1.3): which job a worker gets, in which order, and
// what keeps a job from being handed out (its time, its kind, its target's
// lock, a blocking hold).
#include "tests/projections/job_testing.h"

#include "base/sha256.h"

namespace runledger::job_tests {
namespace {

using JobClaim = JobTest;
using runledger::testing::Given;

TEST_F(JobClaim, HigherPriorityFirstThenEnqueueOrder) {
  enqueue("low", "t1");
  jobs::Enqueue high = job("high", "t2");
  high.priority = 5;
  enqueue(high);
  enqueue("low2", "t3");
  jobs::Enqueue high2 = job("high2", "t4");
  high2.priority = 5;
  enqueue(high2);
  EXPECT_EQ(claim(), "high");
  EXPECT_EQ(claim(), "high2");
  EXPECT_EQ(claim(), "low");
  EXPECT_EQ(claim(), "low2");
  EXPECT_EQ(claim(), "");
}

TEST_F(JobClaim, NothingReadyAnswersWithNoEventsAndNoRefusal) {
  Decision d = g.run(jobs::Claim{"w1", {}, std::nullopt, fresh_token()});
  EXPECT_FALSE(d.rejection);
  EXPECT_TRUE(d.events.empty());
}

TEST_F(JobClaim, NotBeforeInTheFutureWaitsUntilItPasses) {
  jobs::Enqueue later = job("later");
  later.not_before_ms = g.now_ms + 60 * kMsPerS;
  enqueue(later);
  EXPECT_EQ(claim(), "");
  advance_s(59);
  EXPECT_EQ(claim(), "");
  advance_s(1);
  EXPECT_EQ(claim(), "later");
}

TEST_F(JobClaim, AWaitingJobDoesNotHoldBackAReadyOne) {
  jobs::Enqueue later = job("later", "t1");
  later.priority = 9;
  later.not_before_ms = g.now_ms + 60 * kMsPerS;
  enqueue(later);
  enqueue("now", "t2");
  EXPECT_EQ(claim(), "now");
}

TEST_F(JobClaim, KindsLimitWhatAWorkerGets) {
  jobs::Enqueue a = job("a", "t1");
  a.kind = "sync";
  enqueue(a);
  jobs::Enqueue b = job("b", "t2");
  b.kind = "retention";
  enqueue(b);
  EXPECT_EQ(claim("w1", {"retention", "harvest"}), "b");
  EXPECT_EQ(claim("w1", {"harvest"}), "");
  EXPECT_EQ(claim("w1", {}), "a");
}

TEST_F(JobClaim, ASecondJobOnATakenTargetStaysQueuedAndSaysWhatBlocksIt) {
  enqueue("first", "dataset/orders");
  enqueue("second", "dataset/orders");
  ASSERT_EQ(claim(), "first");
  EXPECT_EQ(claim(), "");
  EXPECT_EQ(state_of("second"), AttemptState::kQueued);
  EXPECT_EQ(view_of("second")["blocked_by"], nlohmann::json({{"job", "first"}}));
  EXPECT_TRUE(view_of("first")["blocked_by"].is_null());
}

TEST_F(JobClaim, TargetIsFreeAgainOnceTheHolderFinishes) {
  given_running("first", "t1");
  enqueue("second", "t1");
  EXPECT_EQ(claim(), "");
  run_steps("first");
  EXPECT_TRUE(view_of("second")["blocked_by"].is_null());
  EXPECT_EQ(claim(), "second");
}

TEST_F(JobClaim, DifferentTargetsRunInParallel) {
  enqueue("a", "t1");
  enqueue("b", "t2");
  EXPECT_EQ(claim("w1"), "a");
  EXPECT_EQ(claim("w2"), "b");
  EXPECT_EQ(g.state.jobs.holder.at("t1"), "a");
  EXPECT_EQ(g.state.jobs.holder.at("t2"), "b");
}

TEST_F(JobClaim, TheLockSkipsToTheNextFreeTarget) {
  given_running("busy", "t1");
  jobs::Enqueue urgent = job("urgent", "t1");
  urgent.priority = 10;
  enqueue(urgent);
  enqueue("other", "t2");
  EXPECT_EQ(claim(), "other");
}

TEST_F(JobClaim, AnExecutionStateUnknownHoldBlocksTheTarget) {
  enqueue("j1", "t1");
  expect_accepted(g.run(holds::Place{"h1", "t1", holds::kExecutionStateUnknown, "manual run", ""}));
  EXPECT_EQ(claim(), "");
  EXPECT_EQ(view_of("j1")["blocked_by"], nlohmann::json({{"hold", "h1"}}));
  expect_accepted(g.run(holds::ReleaseHold{"h1", "checked: stopped", true, std::nullopt}));
  EXPECT_EQ(claim(), "j1");
}

TEST_F(JobClaim, AResultUnknownHoldDoesNotBlock) {
  enqueue("j1", "t1");
  expect_accepted(g.run(holds::Place{"h1", "t1", holds::kResultUnknown, "partial output", ""}));
  EXPECT_TRUE(view_of("j1")["blocked_by"].is_null());
  EXPECT_EQ(claim(), "j1");
}

TEST_F(JobClaim, LeaseDefaultsToThePolicyLength) {
  enqueue("j1");
  Decision d = g.run(jobs::Claim{"w1", {}, std::nullopt, "t0k"});
  ASSERT_EQ(Given::types(d), Types{"JobLeased"});
  const auto* leased = d.events[0].payload.AsJobLeased();
  EXPECT_EQ(leased->lease_s, g.policy.lease_default_s);
  EXPECT_EQ(leased->lease_expires_at_ms, g.now_ms + g.policy.lease_default_s * kMsPerS);
  EXPECT_EQ(leased->worker, "w1");
  EXPECT_EQ(job_of("j1").latest().lease_expires_at_ms, leased->lease_expires_at_ms);
}

TEST_F(JobClaim, LeaseLengthOutsideTheBoundsIsRefused) {
  enqueue("j1");
  for (int64_t bad : {g.policy.lease_min_s - 1, g.policy.lease_max_s + 1}) {
    Decision d = g.run(jobs::Claim{"w1", {}, bad, "t0k"});
    expect_refused(d, 422, "invalid_field");
    EXPECT_EQ(d.rejection->extra["field"], "lease_s");
  }
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
  EXPECT_EQ(claim("w1", {}, g.policy.lease_max_s), "j1");
}

TEST_F(JobClaim, TheLogHoldsOnlyTheTokensHash) {
  enqueue("j1");
  const std::string secret = "only-the-worker-knows-this";
  Decision d = g.run(jobs::Claim{"w1", {}, std::nullopt, secret});
  ASSERT_EQ(Given::types(d), Types{"JobLeased"});
  EXPECT_EQ(d.events[0].payload.AsJobLeased()->lease_token_sha256, sha256_hex(secret));
  for (const std::string& bytes : g.log()) {
    EXPECT_EQ(bytes.find(secret), std::string::npos) << "token in clear in the log";
  }
  EXPECT_EQ(view_of("j1").dump().find(sha256_hex(secret)), std::string::npos);
}

TEST_F(JobClaim, ClaimOrderSurvivesARelease) {
  enqueue("a", "t1");
  enqueue("b", "t2");
  ASSERT_EQ(claim(), "a");
  expect_accepted(release("a"));
  EXPECT_EQ(claim(), "a") << "a released job keeps its place in the queue";
}

}  // namespace
}  // namespace runledger::job_tests
