// Work whose fate is uncertain (docs/domain.md 1.8): outcome-unknown reports of
// both kinds, reattach (running, exited, mismatch, busy target) and the
// resolution an operator's hold release records on the job.
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobRecovery = JobTest;
using runledger::testing::Given;

// ---- outcome unknown ----

TEST_F(JobRecovery, ExecutionStateUnknownGoesStaleAndBlocksTheTarget) {
  given_running("j1", "t1");
  enqueue("j2", "t1");
  Decision d = outcome_unknown("j1", holds::kExecutionStateUnknown);
  ASSERT_EQ(Given::types(d), (Types{"AttemptStale", "HoldPlaced"}));
  const auto* stale = d.events[0].payload.AsAttemptStale();
  EXPECT_EQ(stale->cause, "outcome_unknown");
  EXPECT_NE(stale->detail.find("submission reply lost"), std::string::npos);
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
  EXPECT_TRUE(view_of("j1")["lease"].is_null());
  const holds::Hold& h = hold(stale->hold_id);
  EXPECT_EQ(h.kind, holds::kExecutionStateUnknown);
  EXPECT_EQ(h.job, "j1");
  EXPECT_EQ(h.target, "t1");
  EXPECT_EQ(claim(), "");
  EXPECT_EQ(view_of("j2")["blocked_by"], nlohmann::json({{"hold", stale->hold_id}}));
}

TEST_F(JobRecovery, ResultUnknownGoesStaleWithAHoldThatDoesNotBlock) {
  given_running("j1", "t1");
  enqueue("j2", "t1");
  Decision d = outcome_unknown("j1", holds::kResultUnknown);
  ASSERT_EQ(Given::types(d), (Types{"AttemptStale", "HoldPlaced"}));
  EXPECT_EQ(hold(d.events[0].payload.AsAttemptStale()->hold_id).kind, holds::kResultUnknown);
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
  EXPECT_EQ(claim(), "j2") << "the work is known to have stopped";
}

TEST_F(JobRecovery, AnUnknownOutcomeKindIsRefused) {
  given_running("j1");
  Decision d = outcome_unknown("j1", "MAYBE");
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "kind");
}

TEST_F(JobRecovery, OutcomeUnknownNeedsARunningAttempt) {
  enqueue("j1");
  claim();
  expect_invalid_transition(outcome_unknown("j1", holds::kExecutionStateUnknown),
                            AttemptState::kLeased);
}

// ---- reattach, observed running ----

TEST_F(JobRecovery, ReattachToAStaleAttemptResumesItAndReleasesItsHold) {
  given_stale("j1", "t1");
  std::string hold_id = job_of("j1").latest().stale_hold_id;
  std::string old_token = token["j1"];
  Decision d = reattach_running("j1", "w2");
  ASSERT_EQ(Given::types(d), (Types{"ExecutionReattached", "HoldReleased"}));
  const auto* ev = d.events[0].payload.AsExecutionReattached();
  EXPECT_EQ(ev->previous_state, "STALE");
  EXPECT_EQ(ev->released_hold_id, hold_id);
  EXPECT_EQ(d.events[1].stream, "hold/" + hold_id);
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
  EXPECT_EQ(job_of("j1").latest().worker, "w2");
  EXPECT_EQ(job_of("j1").attempts.size(), 1u) << "the work is not launched again";

  const holds::Hold& h = hold(hold_id);
  EXPECT_TRUE(h.released);
  EXPECT_EQ(h.release_note, "reattached: execution observed running by worker w2");
  EXPECT_FALSE(h.execution_stopped);
  EXPECT_EQ(g.state.jobs.holder.at("t1"), "j1");

  expect_refused(g.run(jobs::Heartbeat{"j1", old_token, std::nullopt}), 409, "lease_mismatch");
  expect_accepted(heartbeat("j1"));
  expect_accepted(step_start("j1", "FETCH"));
}

TEST_F(JobRecovery, ReattachToARunningAttemptReplacesTheToken) {
  given_running("j1");
  std::string old_token = token["j1"];
  Decision d = reattach_running("j1", "w2");
  ASSERT_EQ(Given::types(d), Types{"ExecutionReattached"});
  EXPECT_EQ(d.events[0].payload.AsExecutionReattached()->previous_state, "RUNNING");
  EXPECT_EQ(job_of("j1").latest().lease_expires_at_ms,
            g.now_ms + g.policy.lease_default_s * kMsPerS);
  expect_refused(g.run(jobs::StepStart{"j1", "FETCH", old_token}), 409, "lease_mismatch");
  expect_accepted(step_start("j1", "FETCH"));
}

TEST_F(JobRecovery, AReattachedLeaseExpiresLikeAnyOther) {
  given_stale("j1");
  reattach_running("j1");
  advance_s(g.policy.lease_default_s);
  EXPECT_EQ(Given::types(expire()), (Types{"LeaseExpired", "AttemptStale", "HoldPlaced"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
}

TEST_F(JobRecovery, AHandleThatDoesNotMatchIsRefused) {
  given_stale("j1");
  std::string before = snapshot_of("j1");
  Decision d = g.run(jobs::Reattach{"j1", "w2", "some-other-task", "running", std::nullopt,
                                    std::nullopt, fresh_token()});
  expect_refused(d, 409, "handle_mismatch");
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobRecovery, ReattachToRunningWhileAnotherJobHoldsTheTargetIsRefused) {
  given_running("j1", "t1");
  outcome_unknown("j1", holds::kResultUnknown);
  enqueue("j2", "t1");
  ASSERT_EQ(claim(), "j2");
  Decision d = reattach_running("j1");
  expect_refused(d, 409, "target_busy");
  EXPECT_EQ(state_of("j1"), AttemptState::kStale);
  EXPECT_EQ(g.state.jobs.holder.at("t1"), "j2");
}

TEST_F(JobRecovery, ReattachInputIsChecked) {
  given_stale("j1");
  Decision no_code =
      g.run(jobs::Reattach{"j1", "w2", handle("j1"), "exited", std::nullopt, std::nullopt, ""});
  expect_refused(no_code, 422, "missing_field");
  EXPECT_EQ(no_code.rejection->extra["field"], "exit_code");
  Decision bad_observed =
      g.run(jobs::Reattach{"j1", "w2", handle("j1"), "vanished", 0, std::nullopt, ""});
  expect_refused(bad_observed, 422, "invalid_field");
  EXPECT_EQ(bad_observed.rejection->extra["field"], "observed");
  Decision bad_lease =
      g.run(jobs::Reattach{"j1", "w2", handle("j1"), "running", std::nullopt, 0, fresh_token()});
  expect_refused(bad_lease, 422, "invalid_field");
  EXPECT_EQ(bad_lease.rejection->extra["field"], "lease_s");
}

// ---- reattach, observed exited ----

TEST_F(JobRecovery, ExitZeroResolvesAStaleAttemptAsSucceededAndReleasesTheHold) {
  given_stale("j1", "t1");
  std::string hold_id = job_of("j1").latest().stale_hold_id;
  Decision d = reattach_exited("j1", 0);
  ASSERT_EQ(Given::types(d), (Types{"AttemptResolved", "HoldReleased"}));
  const auto* ev = d.events[0].payload.AsAttemptResolved();
  EXPECT_EQ(ev->outcome, "SUCCEEDED");
  EXPECT_EQ(ev->evidence, "exited");
  EXPECT_TRUE(ev->has_exit_code);
  EXPECT_EQ(ev->hold_id, hold_id);
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  const holds::Hold& h = hold(hold_id);
  EXPECT_TRUE(h.released);
  EXPECT_TRUE(h.execution_stopped);
  EXPECT_EQ(h.outcome, "SUCCEEDED");
  enqueue("j2", "t1");
  EXPECT_EQ(claim(), "j2") << "the target is free again";
}

TEST_F(JobRecovery, NonZeroExitResolvesAsFailedWithTheCode) {
  given_stale("j1");
  Decision d = reattach_exited("j1", 137);
  EXPECT_EQ(d.events[0].payload.AsAttemptResolved()->outcome, "FAILED");
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
  EXPECT_NE(job_of("j1").latest().error.find("137"), std::string::npos);
}

TEST_F(JobRecovery, ExitObservedOnARunningAttemptResolvesItWithoutAHold) {
  given_running("j1", "t1");
  Decision d = reattach_exited("j1", 0);
  ASSERT_EQ(Given::types(d), Types{"AttemptResolved"});
  EXPECT_EQ(d.events[0].payload.AsAttemptResolved()->hold_id, "");
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
  EXPECT_EQ(jobs::next_due_ms(g.state), 0);
}

// ---- resolution by an operator's hold release ----

TEST_F(JobRecovery, AHoldReleaseWithAnOutcomeResolvesTheStaleAttempt) {
  given_stale("j1");
  std::string hold_id = job_of("j1").latest().stale_hold_id;
  Decision d = g.run(holds::ReleaseHold{hold_id, "task stopped in console", true, "FAILED"});
  ASSERT_EQ(Given::types(d), (Types{"HoldReleased", "AttemptResolved"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
  EXPECT_FALSE(job_of("j1").latest().error.empty());
  expect_accepted(rerun("j1"));
}

TEST_F(JobRecovery, AHoldReleaseCanResolveAsSucceeded) {
  given_running("j1");
  Decision stale = outcome_unknown("j1", holds::kResultUnknown);
  std::string hold_id = stale.events[0].payload.AsAttemptStale()->hold_id;
  expect_accepted(g.run(holds::ReleaseHold{hold_id, "output verified", std::nullopt, "SUCCEEDED"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  EXPECT_TRUE(view_of("j1")["error"].is_null());
}

}  // namespace
}  // namespace runledger::job_tests
