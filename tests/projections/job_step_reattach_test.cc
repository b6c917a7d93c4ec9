// An observed exit of one step (docs/domain.md 1.8): a reattach with observed
// "exited", a step and its exit code, for a RUNNING or STALE attempt whose
// handle matches and whose step is RUNNING. Exit 0 finishes the step (and the
// attempt after the last step, or at a requested cancel), else the attempt
// runs on under a new lease; another code fails the step and the attempt,
// with a retry by 1.5's rule. A staleness hold is released with the evidence.
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using runledger::testing::Given;

class JobStepReattach : public JobTest {
 protected:
  // Given j1 RUNNING with FETCH done and VALIDATE RUNNING.
  void given_validating(const std::string& id = "j1", const std::string& target = "t1") {
    given_running(id, target);
    expect_accepted(step_start(id, "FETCH"));
    expect_accepted(step_done(id, "FETCH", R"({"rows":1})"));
    expect_accepted(step_start(id, "VALIDATE"));
  }
  // Given j1's lease ran out while VALIDATE was RUNNING: STALE, with a hold.
  void given_stale_validating(const std::string& id = "j1", const std::string& target = "t1") {
    given_validating(id, target);
    advance_s(g.policy.lease_default_s);
    expect_accepted(expire());
    ASSERT_EQ(state_of(id), AttemptState::kStale);
  }
  // Given j1 RUNNING with every step before AGGREGATE done, AGGREGATE RUNNING.
  void given_at_last_step(const std::string& id = "j1") {
    given_running(id);
    for (const char* step : {"FETCH", "VALIDATE", "LOAD"}) {
      expect_accepted(step_start(id, step));
      expect_accepted(step_done(id, step));
    }
    expect_accepted(step_start(id, "AGGREGATE"));
  }
  const jobs::Step& step_of(const std::string& id, size_t index) {
    return job_of(id).latest().steps.at(index);
  }
};

// ---- exit 0 ----

TEST_F(JobStepReattach, ExitZeroOfAMiddleStepRunsTheAttemptOnUnderANewLease) {
  given_validating();
  std::string old_token = token["j1"];
  jobs::Reattach c = step_exit("j1", "VALIDATE", 0);
  c.output = R"({"valid":true})";
  Decision d = reattach_step(c);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "ExecutionReattached"}));
  const auto* done = d.events[0].payload.AsStepSucceeded();
  EXPECT_EQ(done->step, "VALIDATE");
  EXPECT_EQ(done->worker, "w2");
  EXPECT_EQ(done->output, R"({"valid":true})");
  const auto* lease = d.events[1].payload.AsExecutionReattached();
  EXPECT_EQ(lease->previous_state, "RUNNING");
  EXPECT_EQ(lease->worker, "w2");
  EXPECT_TRUE(lease->released_hold_id.empty());

  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
  EXPECT_EQ(step_of("j1", 1).state, StepState::kDone);
  EXPECT_EQ(step_of("j1", 1).output, R"({"valid":true})");
  EXPECT_EQ(job_of("j1").latest().last_completed_step, "VALIDATE");
  EXPECT_EQ(job_of("j1").latest().worker, "w2");
  EXPECT_EQ(job_of("j1").attempts.size(), 1u) << "the work is not launched again";
  EXPECT_EQ(g.state.jobs.holder.at("t1"), "j1");

  // The old token is fenced off; the new one carries on with the next step.
  expect_refused(g.run(jobs::StepStart{"j1", "LOAD", old_token}), 409, "lease_mismatch");
  expect_refused(g.run(jobs::Heartbeat{"j1", old_token, std::nullopt}), 409, "lease_mismatch");
  expect_accepted(heartbeat("j1"));
  expect_accepted(step_start("j1", "LOAD"));
}

TEST_F(JobStepReattach, ExitZeroOfAStaleAttemptsStepReleasesTheHoldAndResumesIt) {
  given_stale_validating();
  const std::string hold_id = job_of("j1").latest().stale_hold_id;
  ASSERT_FALSE(hold_id.empty());
  Decision d = reattach_step("j1", "VALIDATE", 0);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "ExecutionReattached", "HoldReleased"}));
  EXPECT_EQ(d.events[1].payload.AsExecutionReattached()->previous_state, "STALE");
  EXPECT_EQ(d.events[1].payload.AsExecutionReattached()->released_hold_id, hold_id);
  EXPECT_EQ(d.events[2].stream, "hold/" + hold_id);
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
  EXPECT_EQ(g.state.jobs.holder.at("t1"), "j1");

  const holds::Hold& h = hold(hold_id);
  EXPECT_TRUE(h.released);
  EXPECT_EQ(h.release_note, "reattached: step VALIDATE observed exited with code 0 by worker w2");
  EXPECT_FALSE(h.execution_stopped) << "the attempt runs on";
  EXPECT_EQ(h.outcome, "");
  EXPECT_TRUE(g.state.holds.blocking_by_target["t1"].empty());
  expect_accepted(step_start("j1", "LOAD"));
}

TEST_F(JobStepReattach, ExitZeroOfTheLastStepSucceedsTheAttempt) {
  given_at_last_step();
  Decision d = reattach_step("j1", "AGGREGATE", 0);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptResolved"}));
  const auto* r = d.events[1].payload.AsAttemptResolved();
  EXPECT_EQ(r->outcome, "SUCCEEDED");
  EXPECT_EQ(r->step, "AGGREGATE");
  EXPECT_TRUE(r->has_exit_code);
  EXPECT_EQ(r->evidence, "exited");
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  EXPECT_EQ(step_of("j1", 3).state, StepState::kDone);
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
  EXPECT_TRUE(job_of("j1").latest().lease_token_sha256.empty()) << "no lease after the end";
}

TEST_F(JobStepReattach, ExitZeroOfAStaleAttemptsLastStepSucceedsAndReleasesTheHold) {
  given_running("j1");
  for (const char* step : {"FETCH", "VALIDATE", "LOAD"}) {
    expect_accepted(step_start("j1", step));
    expect_accepted(step_done("j1", step));
  }
  expect_accepted(step_start("j1", "AGGREGATE"));
  expect_accepted(outcome_unknown("j1", holds::kExecutionStateUnknown));
  const std::string hold_id = job_of("j1").latest().stale_hold_id;
  Decision d = reattach_step("j1", "AGGREGATE", 0);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptResolved", "HoldReleased"}));
  EXPECT_EQ(d.events[1].payload.AsAttemptResolved()->hold_id, hold_id);
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  EXPECT_TRUE(hold(hold_id).released);
  EXPECT_TRUE(hold(hold_id).execution_stopped);
  EXPECT_EQ(hold(hold_id).outcome, "SUCCEEDED");
}

TEST_F(JobStepReattach, ACancelRequestedMeanwhileEndsTheAttemptAtThisBoundary) {
  given_validating();
  expect_accepted(cancel("j1", "wrong window"));
  Decision d = reattach_step("j1", "VALIDATE", 0);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptCancelled"}));
  const auto* ev = d.events[1].payload.AsAttemptCancelled();
  EXPECT_EQ(ev->cause, "step_boundary");
  EXPECT_EQ(ev->last_completed_step, "VALIDATE");
  EXPECT_TRUE(ev->cleanup_needed);
  EXPECT_EQ(ev->worker, "w2");
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
}

TEST_F(JobStepReattach, ACancelRequestedBeforeTheLeaseRanOutEndsTheStaleAttemptCancelled) {
  given_validating();
  expect_accepted(cancel("j1", "wrong window"));
  advance_s(g.policy.lease_default_s);
  expect_accepted(expire());
  ASSERT_EQ(state_of("j1"), AttemptState::kStale);
  const std::string hold_id = job_of("j1").latest().stale_hold_id;
  Decision d = reattach_step("j1", "VALIDATE", 0);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptCancelled", "HoldReleased"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled) << "STALE -> CANCELLED (docs/domain.md 1.1)";
  EXPECT_TRUE(hold(hold_id).released);
  EXPECT_TRUE(hold(hold_id).execution_stopped);
}

TEST_F(JobStepReattach, ACancelRequestedDoesNotUndoTheLastStepsSuccess) {
  given_at_last_step();
  expect_accepted(cancel("j1"));
  Decision d = reattach_step("j1", "AGGREGATE", 0);
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptResolved"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
}

// ---- another exit code ----

TEST_F(JobStepReattach, ANonZeroExitFailsTheStepAndTheAttempt) {
  given_validating();
  Decision d = reattach_step("j1", "VALIDATE", 3);
  ASSERT_EQ(Given::types(d), (Types{"StepFailed", "AttemptResolved"}));
  const auto* failed = d.events[0].payload.AsStepFailed();
  EXPECT_EQ(failed->error, "exited with code 3");
  EXPECT_FALSE(failed->retryable);
  EXPECT_EQ(failed->worker, "w2");
  const auto* r = d.events[1].payload.AsAttemptResolved();
  EXPECT_EQ(r->outcome, "FAILED");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
  EXPECT_EQ(step_of("j1", 1).state, StepState::kFailed);
  EXPECT_EQ(step_of("j1", 1).error, "exited with code 3");
  EXPECT_EQ(job_of("j1").latest().error, "step VALIDATE exited with code 3");
  EXPECT_EQ(job_of("j1").attempts.size(), 1u) << "not retryable: no retry";
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
}

TEST_F(JobStepReattach, ARetryableNonZeroExitIsRetriedByTheRule) {
  given_validating();
  jobs::Reattach c = step_exit("j1", "VALIDATE", 1);
  c.retryable = true;
  Decision d = reattach_step(c);
  ASSERT_EQ(Given::types(d), (Types{"StepFailed", "AttemptResolved", "RetryScheduled"}));
  const auto* retry = d.events[2].payload.AsRetryScheduled();
  EXPECT_EQ(retry->attempt, 2);
  EXPECT_EQ(retry->not_before_ms, g.now_ms + g.policy.retry_backoff_s * kMsPerS);
  EXPECT_EQ(retry->reused_steps, std::vector<std::string>{"FETCH"});
  EXPECT_EQ(retry->worker, "w2");
  const jobs::Job& j = job_of("j1");
  EXPECT_EQ(j.attempts[0].state, AttemptState::kFailed);
  EXPECT_EQ(j.latest().state, AttemptState::kQueued);
  EXPECT_EQ(j.latest().steps[0].state, StepState::kReused);
  EXPECT_EQ(j.latest().steps[1].state, StepState::kPending) << "resumes at the failed step";
}

TEST_F(JobStepReattach, ARetryableExitWithNoAttemptLeftIsNotRetried) {
  jobs::Enqueue once = job("j1");
  once.max_attempts = 1;
  enqueue(once);
  given_validating();
  jobs::Reattach c = step_exit("j1", "VALIDATE", 1);
  c.retryable = true;
  EXPECT_EQ(Given::types(reattach_step(c)), (Types{"StepFailed", "AttemptResolved"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
}

TEST_F(JobStepReattach, ANonZeroExitOfAStaleAttemptsStepReleasesTheHoldAsFailed) {
  given_stale_validating();
  const std::string hold_id = job_of("j1").latest().stale_hold_id;
  jobs::Reattach c = step_exit("j1", "VALIDATE", 2);
  c.retryable = true;
  Decision d = reattach_step(c);
  ASSERT_EQ(Given::types(d),
            (Types{"StepFailed", "AttemptResolved", "RetryScheduled", "HoldReleased"}));
  EXPECT_EQ(job_of("j1").attempts[0].state, AttemptState::kFailed);
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
  EXPECT_TRUE(hold(hold_id).released);
  EXPECT_TRUE(hold(hold_id).execution_stopped);
  EXPECT_EQ(hold(hold_id).outcome, "FAILED");
  EXPECT_EQ(hold(hold_id).release_note,
            "reattached: step VALIDATE observed exited with code 2 by worker w2");
}

TEST_F(JobStepReattach, TheEventsReplayToTheSameJob) {
  given_stale_validating();
  expect_accepted(reattach_step("j1", "VALIDATE", 0));
  expect_accepted(step_start("j1", "LOAD"));
  expect_accepted(reattach_step("j1", "LOAD", 7));
  State again = replay(g.log());
  EXPECT_EQ(jobs::to_json(again.jobs.by_id.at("j1")).dump(), snapshot_of("j1"));
  EXPECT_EQ(again.jobs.count_by_state, g.state.jobs.count_by_state);
}

// ---- refused ----

TEST_F(JobStepReattach, AStepNotInThePlanIsNotFound) {
  given_validating();
  std::string before = snapshot_of("j1");
  Decision d = reattach_step("j1", "PUBLISH", 0);
  expect_refused(d, 404, "step_not_found");
  EXPECT_EQ(d.rejection->extra["step"], "PUBLISH");
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobStepReattach, AStepThatIsNotRunningIsRefused) {
  given_validating();
  std::string before = snapshot_of("j1");
  expect_invalid_transition(reattach_step("j1", "FETCH", 0), AttemptState::kRunning);  // DONE
  expect_invalid_transition(reattach_step("j1", "LOAD", 0), AttemptState::kRunning);   // PENDING
  Decision d = reattach_step("j1", "LOAD", 1);
  expect_invalid_transition(d, AttemptState::kRunning);
  EXPECT_NE(d.rejection->message.find("step LOAD is PENDING"), std::string::npos)
      << d.rejection->message;
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobStepReattach, AnExitCodeIsRequired) {
  given_validating();
  jobs::Reattach c = step_exit("j1", "VALIDATE", 0);
  c.exit_code = std::nullopt;
  Decision d = reattach_step(c);
  expect_refused(d, 422, "missing_field");
  EXPECT_EQ(d.rejection->extra["field"], "exit_code");
}

TEST_F(JobStepReattach, AStepGoesWithAnObservedExitOnly) {
  given_validating();
  jobs::Reattach c = step_exit("j1", "VALIDATE", 0);
  c.observed = "running";
  c.exit_code = std::nullopt;
  Decision d = reattach_step(c);
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "step");
}

TEST_F(JobStepReattach, AHandleThatDoesNotMatchIsRefused) {
  given_validating();
  jobs::Reattach c = step_exit("j1", "VALIDATE", 0);
  c.execution_handle = "ecs-task-other";
  expect_refused(reattach_step(c), 409, "handle_mismatch");
}

TEST_F(JobStepReattach, AnOutputLargerThanTheLimitIsRefused) {
  given_validating();
  jobs::Reattach c = step_exit("j1", "VALIDATE", 0);
  c.output = "\"" + std::string(jobs::kOutputBytesMax, 'x') + "\"";
  Decision d = reattach_step(c);
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "output");
}

TEST_F(JobStepReattach, RunningOnWhileAnotherAttemptHoldsTheTargetIsRefused) {
  // RESULT_UNKNOWN does not block the target: another job takes it meanwhile.
  given_validating("j1", "t1");
  expect_accepted(outcome_unknown("j1", holds::kResultUnknown));
  enqueue("j2", "t1");
  ASSERT_EQ(claim(), "j2");
  std::string before = snapshot_of("j1");
  Decision d = reattach_step("j1", "VALIDATE", 0);
  expect_refused(d, 409, "target_busy");
  EXPECT_EQ(snapshot_of("j1"), before);
  // An exit that ends the attempt takes no target: it is recorded.
  Decision failed = reattach_step("j1", "VALIDATE", 1);
  ASSERT_EQ(Given::types(failed), (Types{"StepFailed", "AttemptResolved", "HoldReleased"}));
  EXPECT_EQ(g.state.jobs.holder.at("t1"), "j2");
}

TEST_F(JobStepReattach, AStepExitIsRefusedInEveryOtherState) {
  given_succeeded("ok", "t-ok");
  expect_invalid_transition(reattach_step("ok", "FETCH", 0), AttemptState::kSucceeded);
  given_failed("f", "t-f");
  expect_invalid_transition(reattach_step("f", "FETCH", 1), AttemptState::kFailed);
  enqueue("l", "t-l");
  ASSERT_EQ(claim(), "l");
  expect_invalid_transition(reattach_step("l", "FETCH", 0), AttemptState::kLeased);
  enqueue("q", "t-q");
  expect_invalid_transition(reattach_step("q", "FETCH", 0), AttemptState::kQueued);
  expect_refused(reattach_step("nobody", "FETCH", 0), 404, "not_found");
}

// ---- execution_handle (start and reattach) ----

TEST_F(JobStepReattach, AnExecutionHandleIsOneTo256PrintableAsciiCharacters) {
  EXPECT_TRUE(jobs::valid_execution_handle("x"));
  EXPECT_TRUE(jobs::valid_execution_handle("arn:aws:ecs:eu-west-1:1:task/c 9"));
  EXPECT_TRUE(jobs::valid_execution_handle(std::string(jobs::kExecutionHandleCharsMax, '~')));
  EXPECT_FALSE(jobs::valid_execution_handle(""));
  EXPECT_FALSE(jobs::valid_execution_handle(std::string(jobs::kExecutionHandleCharsMax + 1, 'a')));
  EXPECT_FALSE(jobs::valid_execution_handle("tab\there"));
  EXPECT_FALSE(jobs::valid_execution_handle("del\x7f"));
  EXPECT_FALSE(jobs::valid_execution_handle("caf\xc3\xa9"));
}

TEST_F(JobStepReattach, StartAndReattachRefuseAnExecutionHandleOutsideTheBounds) {
  enqueue("j1");
  ASSERT_EQ(claim(), "j1");
  Decision d = g.run(jobs::Start{"j1", token["j1"], std::string(257, 'a')});
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "execution_handle");
  expect_refused(g.run(jobs::Start{"j1", token["j1"], "line\nbreak"}), 422, "invalid_field");
  expect_accepted(g.run(jobs::Start{"j1", token["j1"], std::string(256, 'a')}));

  jobs::Reattach c{"j1", "w2", "bad\x01handle", "running", std::nullopt, std::nullopt, "tok"};
  Decision r = g.run(c);
  expect_refused(r, 422, "invalid_field");
  EXPECT_EQ(r.rejection->extra["field"], "execution_handle");
}

}  // namespace
}  // namespace runledger::job_tests
