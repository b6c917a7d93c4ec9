// The lease (docs/domain.md 1.2, 1.4): heartbeat, release, fencing by token, and
// the recovery table when a lease runs out, with time moved by the test.
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobLease = JobTest;
using runledger::testing::Given;

// ---- heartbeat ----

TEST_F(JobLease, HeartbeatExtendsTheLeaseByTheClaimsLength) {
  enqueue("j1");
  claim("w1", {}, 120);
  advance_s(100);
  Decision d = heartbeat("j1");
  ASSERT_EQ(Given::types(d), Types{"LeaseRenewed"});
  EXPECT_EQ(job_of("j1").latest().lease_expires_at_ms, g.now_ms + 120 * kMsPerS);
}

TEST_F(JobLease, HeartbeatWithALengthUsesItOnceThenTheClaimsAgain) {
  enqueue("j1");
  claim("w1", {}, 120);
  expect_accepted(heartbeat("j1", 600));
  EXPECT_EQ(job_of("j1").latest().lease_expires_at_ms, g.now_ms + 600 * kMsPerS);
  advance_s(10);
  expect_accepted(heartbeat("j1"));
  EXPECT_EQ(job_of("j1").latest().lease_expires_at_ms, g.now_ms + 120 * kMsPerS);
}

TEST_F(JobLease, HeartbeatLengthOutsideTheBoundsIsRefused) {
  enqueue("j1");
  claim();
  std::string before = snapshot_of("j1");
  Decision d = heartbeat("j1", 0);
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "lease_s");
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobLease, HeartbeatKeepsARunningAttemptAlivePastItsFirstExpiry) {
  given_running("j1");
  for (int i = 0; i < 5; ++i) {
    advance_s(g.policy.lease_default_s - 1);
    expect_accepted(heartbeat("j1"));
    EXPECT_TRUE(expire().events.empty());
  }
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
}

// ---- release ----

TEST_F(JobLease, ReleasedJobIsClaimableByAnotherWorkerAndTheOldTokenStopsWorking) {
  enqueue("j1");
  claim("w1");
  std::string old_token = token["j1"];
  expect_accepted(release("j1"));
  EXPECT_EQ(job_of("j1").latest().number, 1) << "a release keeps the attempt";
  ASSERT_EQ(claim("w2"), "j1");
  EXPECT_EQ(job_of("j1").latest().worker, "w2");
  expect_refused(g.run(jobs::Start{"j1", old_token, ""}), 409, "lease_mismatch");
}

TEST_F(JobLease, ReleaseFreesTheTarget) {
  enqueue("j1", "t1");
  claim();
  expect_accepted(release("j1"));
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
}

// ---- fencing: a wrong token changes nothing ----

TEST_F(JobLease, WrongTokenIsRefusedByEveryWorkerCommandAndChangesNothing) {
  given_running("j1");
  cancel("j1");
  std::string before = snapshot_of("j1");
  token["j1"] = "stolen-or-stale";
  expect_refused(heartbeat("j1"), 409, "lease_mismatch");
  expect_refused(step_start("j1", "FETCH"), 409, "lease_mismatch");
  expect_refused(step_done("j1", "FETCH"), 409, "lease_mismatch");
  expect_refused(step_fail("j1", "FETCH", true), 409, "lease_mismatch");
  expect_refused(cancel_ack("j1"), 409, "lease_mismatch");
  expect_refused(outcome_unknown("j1", holds::kExecutionStateUnknown), 409, "lease_mismatch");
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobLease, WrongTokenIsRefusedBeforeStartAndRelease) {
  enqueue("j1");
  claim();
  std::string before = snapshot_of("j1");
  token["j1"] = "guess";
  expect_refused(start("j1"), 409, "lease_mismatch");
  expect_refused(release("j1"), 409, "lease_mismatch");
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobLease, TokenOfAnExpiredLeaseDoesNotWorkOnTheNextOne) {
  enqueue("j1");
  claim("w1");
  std::string old_token = token["j1"];
  advance_s(g.policy.lease_default_s);
  expire();
  ASSERT_EQ(claim("w2"), "j1");
  expect_refused(g.run(jobs::Heartbeat{"j1", old_token, std::nullopt}), 409, "lease_mismatch");
  expect_accepted(heartbeat("j1"));
}

// ---- expiry (the 1.4 table) ----

TEST_F(JobLease, NothingExpiresBeforeTheLeaseRunsOut) {
  enqueue("j1");
  claim();
  advance_s(g.policy.lease_default_s);
  g.now_ms -= 1;
  EXPECT_TRUE(expire().events.empty());
  g.now_ms += 1;
  EXPECT_EQ(Given::types(expire()), Types{"LeaseExpired"});
}

TEST_F(JobLease, ExpiredLeasedAttemptGoesBackToQueuedAsTheSameAttempt) {
  enqueue("j1", "t1");
  claim("w1");
  advance_s(g.policy.lease_default_s);
  Decision d = expire();
  ASSERT_EQ(Given::types(d), Types{"LeaseExpired"});
  EXPECT_EQ(d.events[0].payload.AsLeaseExpired()->state, "LEASED");
  EXPECT_EQ(d.events[0].payload.AsLeaseExpired()->worker, "w1");
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
  EXPECT_EQ(job_of("j1").attempts.size(), 1u);
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
  EXPECT_EQ(claim("w2"), "j1");
}

TEST_F(JobLease, ExpiredLeasedAttemptWithACancelRequestIsCancelled) {
  enqueue("j1");
  claim();
  cancel("j1", "stop it");
  advance_s(g.policy.lease_default_s);
  Decision d = expire();
  ASSERT_EQ(Given::types(d), (Types{"LeaseExpired", "AttemptCancelled"}));
  EXPECT_EQ(d.events[1].payload.AsAttemptCancelled()->cause, "lease_expired");
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
  EXPECT_EQ(job_of("j1").latest().cancel_reason, "stop it");
  EXPECT_FALSE(job_of("j1").latest().cleanup_needed);
}

TEST_F(JobLease, ExpiredRunningAttemptGoesStaleWithABlockingHold) {
  given_running("j1", "t1");
  enqueue("j2", "t1");
  advance_s(g.policy.lease_default_s);
  Decision d = expire();
  ASSERT_EQ(Given::types(d), (Types{"LeaseExpired", "AttemptStale", "HoldPlaced"}));
  const auto* stale = d.events[1].payload.AsAttemptStale();
  EXPECT_EQ(stale->cause, "lease_expired");
  EXPECT_EQ(stale->hold_kind, holds::kExecutionStateUnknown);
  EXPECT_EQ(d.events[2].stream, "hold/" + stale->hold_id);
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
  EXPECT_EQ(job_of("j1").latest().stale_hold_id, stale->hold_id);

  const holds::Hold& h = hold(stale->hold_id);
  EXPECT_EQ(h.target, "t1");
  EXPECT_EQ(h.kind, holds::kExecutionStateUnknown);
  EXPECT_EQ(h.job, "j1");
  EXPECT_EQ(h.attempt, 1);
  EXPECT_FALSE(h.reason.empty());
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u) << "STALE does not hold the target itself";
  EXPECT_EQ(claim(), "") << "the hold blocks the target";
  EXPECT_EQ(view_of("j2")["blocked_by"], nlohmann::json({{"hold", stale->hold_id}}));
}

TEST_F(JobLease, ExpiredRunningAttemptWithACancelRequestGoesStaleToo) {
  given_running("j1");
  cancel("j1");
  advance_s(g.policy.lease_default_s);
  EXPECT_EQ(Given::types(expire()), (Types{"LeaseExpired", "AttemptStale", "HoldPlaced"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
}

TEST_F(JobLease, OneExpiryCommandHandlesEveryDueLeaseAndNoOther) {
  enqueue("a", "t1");
  enqueue("b", "t2");
  enqueue("c", "t3");
  claim("w1", {}, 10);
  claim("w1", {}, 20);
  claim("w1", {}, 60);
  advance_s(20);
  Decision d = expire();
  EXPECT_EQ(Given::types(d), (Types{"LeaseExpired", "LeaseExpired"}));
  EXPECT_EQ(state_of("a"), AttemptState::kQueued);
  EXPECT_EQ(state_of("b"), AttemptState::kQueued);
  EXPECT_EQ(state_of("c"), AttemptState::kLeased);
}

TEST_F(JobLease, NextDueIsTheEarliestOpenLease) {
  EXPECT_EQ(jobs::next_due_ms(g.state), 0);
  enqueue("a", "t1");
  enqueue("b", "t2");
  claim("w1", {}, 60);
  int64_t claimed_at = g.now_ms;
  claim("w1", {}, 10);
  EXPECT_EQ(jobs::next_due_ms(g.state), claimed_at + 10 * kMsPerS);
  expect_accepted(release("b"));
  EXPECT_EQ(jobs::next_due_ms(g.state), claimed_at + 60 * kMsPerS);
  expect_accepted(release("a"));
  EXPECT_EQ(jobs::next_due_ms(g.state), 0);
}

TEST_F(JobLease, AnExpiryCommandIsBoundedAndTheRestStaysDue) {
  const size_t leases = jobs::kExpiriesPerCommandMax + 3;
  for (size_t i = 0; i < leases; ++i) enqueue("j" + std::to_string(i), "t" + std::to_string(i));
  for (size_t i = 0; i < leases; ++i) ASSERT_FALSE(claim().empty());
  advance_s(g.policy.lease_default_s);
  EXPECT_EQ(expire().events.size(), jobs::kExpiriesPerCommandMax);
  EXPECT_LE(jobs::next_due_ms(g.state), g.now_ms) << "the rest is still due";
  EXPECT_EQ(expire().events.size(), 3u);
  EXPECT_EQ(jobs::next_due_ms(g.state), 0);
  EXPECT_EQ(g.state.jobs.count_by_state.at("QUEUED"), leases);
}

}  // namespace
}  // namespace runledger::job_tests
