// Retry (docs/domain.md 1.5) and rerun (1.7): new attempts that reuse what
// already succeeded, with a backoff for retries and none for reruns.
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobRerun = JobTest;
using runledger::testing::Given;

class JobRetry : public JobTest {
 protected:
  // Given j1 RUNNING with FETCH done, when VALIDATE fails as `retryable`.
  Decision fail_at_validate(bool retryable = true) {
    given_running("j1");
    expect_accepted(step_start("j1", "FETCH"));
    expect_accepted(step_done("j1", "FETCH", R"({"artifact":"fetch-1"})"));
    expect_accepted(step_start("j1", "VALIDATE"));
    return step_fail("j1", "VALIDATE", retryable);
  }
};

TEST_F(JobRetry, ARetryableFailureSchedulesANewAttemptAfterABackoff) {
  Decision d = fail_at_validate();
  ASSERT_EQ(Given::types(d), (Types{"StepFailed", "AttemptFailed", "RetryScheduled"}));
  const auto* retry = d.events[2].payload.AsRetryScheduled();
  EXPECT_EQ(retry->attempt, 2);
  EXPECT_EQ(retry->previous_attempt, 1);
  EXPECT_EQ(retry->not_before_ms, g.now_ms + g.policy.retry_backoff_s * kMsPerS);
  EXPECT_EQ(retry->reused_steps, std::vector<std::string>{"FETCH"});
  const jobs::Job& j = job_of("j1");
  ASSERT_EQ(j.attempts.size(), 2u);
  EXPECT_EQ(j.attempts[0].state, AttemptState::kFailed) << "the old attempt stays readable";
  EXPECT_EQ(j.latest().state, AttemptState::kQueued);
}

TEST_F(JobRetry, TheRetryReusesWhatSucceededAndResumesAtTheFailedStep) {
  Decision d = fail_at_validate();
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.steps[0].state, StepState::kReused);
  EXPECT_EQ(a.steps[0].reused_from, 1);
  EXPECT_EQ(a.steps[0].output, R"({"artifact":"fetch-1"})") << "the worker needs its artifact";
  EXPECT_EQ(a.steps[1].state, StepState::kPending);
  EXPECT_EQ(a.last_completed_step, "FETCH");

  advance_s(g.policy.retry_backoff_s);
  ASSERT_EQ(claim("w2"), "j1");
  expect_accepted(start("j1"));
  expect_invalid_transition(step_start("j1", "FETCH"), AttemptState::kRunning);
  expect_accepted(step_start("j1", "VALIDATE"));
}

TEST_F(JobRetry, TheRetryIsNotClaimableBeforeItsBackoff) {
  g.policy.retry_backoff_s = 30;
  Decision d = fail_at_validate();
  advance_s(29);
  EXPECT_EQ(claim(), "");
  EXPECT_EQ(view_of("j1")["blocked_by"], nullptr) << "waiting for time is not being blocked";
  advance_s(1);
  EXPECT_EQ(claim(), "j1");
}

TEST_F(JobRetry, TheBackoffDoublesPerAttemptUpToItsCap) {
  g.policy.retry_backoff_s = 10;
  g.policy.retry_backoff_max_s = 25;
  jobs::Enqueue c = job("j1");
  c.max_attempts = 4;
  enqueue(c);
  std::vector<int64_t> backoffs_s;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    advance_s(100);
    ASSERT_EQ(claim(), "j1");
    start("j1");
    step_start("j1", "FETCH");
    Decision d = step_fail("j1", "FETCH", true);
    ASSERT_EQ(Given::types(d).back(), "RetryScheduled");
    backoffs_s.push_back((d.events.back().payload.AsRetryScheduled()->not_before_ms - g.now_ms) /
                         kMsPerS);
  }
  EXPECT_EQ(backoffs_s, (std::vector<int64_t>{10, 20, 25}));
}

TEST_F(JobRetry, ReusedStepsPointAtTheAttemptWhereTheyRan) {
  jobs::Enqueue c = job("j1");
  c.max_attempts = 3;
  enqueue(c);
  Decision d = fail_at_validate();
  advance_s(g.policy.retry_backoff_max_s);
  ASSERT_EQ(claim(), "j1");
  start("j1");
  step_start("j1", "VALIDATE");
  step_done("j1", "VALIDATE");
  step_start("j1", "LOAD");
  d = step_fail("j1", "LOAD", true);
  ASSERT_EQ(Given::types(d).back(), "RetryScheduled");
  const jobs::Attempt& a3 = job_of("j1").latest();
  EXPECT_EQ(a3.number, 3);
  EXPECT_EQ(a3.steps[0].state, StepState::kReused);
  EXPECT_EQ(a3.steps[0].reused_from, 1);
  EXPECT_EQ(a3.steps[1].state, StepState::kReused);
  EXPECT_EQ(a3.steps[1].reused_from, 2);
  EXPECT_EQ(a3.steps[2].state, StepState::kPending);
  nlohmann::json steps = view_of("j1")["steps"];
  EXPECT_EQ(steps[0]["reused_from"], 1);
  EXPECT_EQ(steps[1]["reused_from"], 2);
  EXPECT_FALSE(steps[2].contains("reused_from"));
}

TEST_F(JobRetry, NoRetryOnceMaxAttemptsAreUsed) {
  jobs::Enqueue c = job("j1");
  c.max_attempts = 2;
  enqueue(c);
  Decision d = fail_at_validate();
  advance_s(g.policy.retry_backoff_max_s);
  ASSERT_EQ(claim(), "j1");
  start("j1");
  step_start("j1", "VALIDATE");
  d = step_fail("j1", "VALIDATE", true);
  EXPECT_EQ(Given::types(d), (Types{"StepFailed", "AttemptFailed"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kFailed);
  EXPECT_EQ(job_of("j1").attempts.size(), 2u);
  EXPECT_FALSE(view_of("j1")["error"].is_null());
}

TEST_F(JobRetry, ANonRetryableFailureIsFinal) {
  Decision d = fail_at_validate(/*retryable=*/false);
  EXPECT_EQ(Given::types(d), (Types{"StepFailed", "AttemptFailed"}));
  EXPECT_TRUE(jobs::finished(job_of("j1")));
}

// ---- rerun ----

TEST_F(JobRerun, ARerunOfASucceededJobReusesTheListedStepsAndRunsAtOnce) {
  given_succeeded("j1");
  Decision d = rerun("j1");
  ASSERT_EQ(Given::types(d), Types{"RerunRequested"});
  const auto* ev = d.events[0].payload.AsRerunRequested();
  EXPECT_EQ(ev->attempt, 2);
  EXPECT_EQ(ev->reused_steps, std::vector<std::string>{"FETCH"});
  EXPECT_EQ(ev->reason, "backfill fix");
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.state, AttemptState::kQueued);
  EXPECT_EQ(a.steps[0].state, StepState::kReused);
  for (size_t i = 1; i < a.steps.size(); ++i) EXPECT_EQ(a.steps[i].state, StepState::kPending);
  EXPECT_EQ(claim(), "j1") << "no backoff";
}

TEST_F(JobRerun, ARerunOfAFailedJobReusesOnlyListedStepsThatSucceeded) {
  jobs::Enqueue c = job("j1");
  c.reuse_on_rerun = {"FETCH", "VALIDATE"};
  enqueue(c);
  given_running("j1");
  step_start("j1", "FETCH");
  step_done("j1", "FETCH");
  step_start("j1", "VALIDATE");
  step_fail("j1", "VALIDATE", false);
  Decision d = rerun("j1");
  EXPECT_EQ(d.events[0].payload.AsRerunRequested()->reused_steps,
            std::vector<std::string>{"FETCH"});
}

TEST_F(JobRerun, ARerunOfACancelledJobWithNoStepDoneReusesNothing) {
  given_cancelled("j1");
  Decision d = rerun("j1");
  EXPECT_TRUE(d.events[0].payload.AsRerunRequested()->reused_steps.empty());
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
}

TEST_F(JobRerun, IsRefusedWhileWorkMayStillRun) {
  enqueue("j1");
  expect_invalid_transition(rerun("j1"), AttemptState::kQueued);
  claim();
  expect_invalid_transition(rerun("j1"), AttemptState::kLeased);
  start("j1");
  expect_invalid_transition(rerun("j1"), AttemptState::kRunning);
  advance_s(g.policy.lease_default_s);
  expire();
  expect_invalid_transition(rerun("j1"), AttemptState::kStale);
  EXPECT_EQ(job_of("j1").attempts.size(), 1u);
}

TEST_F(JobRerun, ARerunThatReusesEveryStepCompletesAtStart) {
  jobs::Enqueue c = job("j1");
  c.reuse_on_rerun = c.plan;
  enqueue(c);
  given_succeeded("j1");
  rerun("j1");
  ASSERT_EQ(claim(), "j1");
  Decision d = start("j1");
  EXPECT_EQ(Given::types(d), (Types{"JobStarted", "AttemptSucceeded"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
}

TEST_F(JobRerun, TheHistoryOfEveryAttemptStaysInTheView) {
  given_failed("j1");
  rerun("j1");
  nlohmann::json attempts = view_of("j1")["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["attempt"], 1);
  EXPECT_EQ(attempts[0]["state"], "FAILED");
  EXPECT_TRUE(attempts[0].contains("error"));
  EXPECT_EQ(attempts[1]["state"], "QUEUED");
  EXPECT_EQ(view_of("j1")["attempt"], 2);
  EXPECT_EQ(view_of("j1")["client_token"], "j1-a2");
}

}  // namespace
}  // namespace runledger::job_tests
