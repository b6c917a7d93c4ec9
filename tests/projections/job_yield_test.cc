// Yield (docs/domain.md 1.9): a worker hands a RUNNING attempt back between steps.
// The attempt ends YIELDED, the next is QUEUED at once with every complete
// step reused, and it costs no attempt. Refused while a step runs, with a
// token that is not the lease's, and in every other state; a requested
// cancel ends the attempt CANCELLED instead.
#include "projections/snapshot.h"
#include "projections/transition_check.h"
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using runledger::testing::Given;

class JobYield : public JobTest {
 protected:
  // Given j1 RUNNING with FETCH done (its output an artifact).
  void given_fetched(const std::string& id = "j1", const std::string& target = "t1") {
    given_running(id, target);
    expect_accepted(step_start(id, "FETCH"));
    expect_accepted(step_done(id, "FETCH", R"({"artifact":"fetch-1"})"));
  }
};

// ---- allowed ----

TEST_F(JobYield, AYieldBetweenStepsEndsTheAttemptAndQueuesTheNextAtOnce) {
  given_fetched();
  Decision d = yield("j1", "worker redeploy");
  ASSERT_EQ(Given::types(d), (Types{"AttemptYielded"}));
  const auto* ev = d.events[0].payload.AsAttemptYielded();
  EXPECT_EQ(ev->attempt, 1);
  EXPECT_EQ(ev->next_attempt, 2);
  EXPECT_EQ(ev->reason, "worker redeploy");
  EXPECT_EQ(ev->reused_steps, std::vector<std::string>{"FETCH"});
  EXPECT_EQ(ev->last_completed_step, "FETCH");
  EXPECT_EQ(ev->worker, "w1");

  const jobs::Job& j = job_of("j1");
  ASSERT_EQ(j.attempts.size(), 2u);
  EXPECT_EQ(j.attempts[0].state, AttemptState::kYielded);
  EXPECT_EQ(j.attempts[0].finished_at_ms, g.now_ms);
  EXPECT_TRUE(j.attempts[0].lease_token_sha256.empty()) << "a yielded attempt holds no lease";
  EXPECT_EQ(j.latest().state, AttemptState::kQueued);
  EXPECT_EQ(j.latest().not_before_ms, 0) << "no backoff";
  EXPECT_EQ(view_of("j1")["attempts"][0]["state"], "YIELDED");
  EXPECT_EQ(view_of("j1")["state"], "QUEUED");
  EXPECT_EQ(claim("w2"), "j1") << "claimable at once, without waiting";
}

TEST_F(JobYield, TheNextAttemptReusesWhatIsDoneAndResumesAtTheFirstStepNotDone) {
  given_fetched();
  expect_accepted(yield("j1"));
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.steps[0].state, StepState::kReused);
  EXPECT_EQ(a.steps[0].reused_from, 1);
  EXPECT_EQ(a.steps[0].output, R"({"artifact":"fetch-1"})") << "the next worker needs it";
  EXPECT_EQ(a.steps[1].state, StepState::kPending);
  EXPECT_EQ(a.last_completed_step, "FETCH");

  ASSERT_EQ(claim("w2"), "j1");
  expect_accepted(start("j1"));
  expect_invalid_transition(step_start("j1", "FETCH"), AttemptState::kRunning);
  expect_accepted(step_start("j1", "VALIDATE"));
}

TEST_F(JobYield, ReusedFromNamesTheAttemptInWhichTheStepActuallyRan) {
  given_fetched();
  expect_accepted(yield("j1"));
  ASSERT_EQ(claim("w2"), "j1");
  expect_accepted(start("j1"));
  expect_accepted(step_start("j1", "VALIDATE"));
  expect_accepted(step_done("j1", "VALIDATE"));
  Decision d = yield("j1");
  ASSERT_EQ(Given::types(d), (Types{"AttemptYielded"}));
  EXPECT_EQ(d.events[0].payload.AsAttemptYielded()->reused_steps,
            (std::vector<std::string>{"FETCH", "VALIDATE"}))
      << "REUSED steps are reused again";
  const jobs::Job& j = job_of("j1");
  ASSERT_EQ(j.attempts.size(), 3u);
  EXPECT_EQ(j.latest().steps[0].state, StepState::kReused);
  EXPECT_EQ(j.latest().steps[0].reused_from, 1) << "FETCH ran in attempt 1, not 2";
  EXPECT_EQ(j.latest().steps[1].state, StepState::kReused);
  EXPECT_EQ(j.latest().steps[1].reused_from, 2);
  EXPECT_EQ(view_of("j1")["steps"][0]["reused_from"], 1);
}

TEST_F(JobYield, AYieldBeforeAnyStepReusesNothing) {
  given_running("j1");
  Decision d = yield("j1", "");
  ASSERT_EQ(Given::types(d), (Types{"AttemptYielded"}));
  EXPECT_TRUE(d.events[0].payload.AsAttemptYielded()->reused_steps.empty());
  for (const jobs::Step& st : job_of("j1").latest().steps) EXPECT_EQ(st.state, StepState::kPending);
}

TEST_F(JobYield, TheTargetIsFreeOnceTheYieldIsRecorded) {
  given_fetched("j1", "t1");
  enqueue("j2", "t1");
  EXPECT_EQ(view_of("j2")["blocked_by"], nlohmann::json({{"job", "j1"}}));
  expect_accepted(yield("j1"));
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
  EXPECT_TRUE(view_of("j2")["blocked_by"].is_null());
  EXPECT_TRUE(g.state.jobs.expiries.empty()) << "no lease left to expire";
}

TEST_F(JobYield, AYieldedAttemptDoesNotCountAgainstMaxAttempts) {
  jobs::Enqueue once = job("j1");
  once.max_attempts = 1;
  enqueue(once);
  given_running("j1");
  Decision d = yield("j1");
  ASSERT_EQ(Given::types(d), (Types{"AttemptYielded"}));
  EXPECT_EQ(job_of("j1").latest().number, 2);
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
  // Attempt 2 is the first that counts: a retryable failure has no attempt left.
  ASSERT_EQ(claim("w2"), "j1");
  expect_accepted(start("j1"));
  expect_accepted(step_start("j1", "FETCH"));
  EXPECT_EQ(Given::types(step_fail("j1", "FETCH", true)), (Types{"StepFailed", "AttemptFailed"}));
}

TEST_F(JobYield, ARetryAfterAYieldCountsOnlyTheAttemptsThatRan) {
  jobs::Enqueue twice = job("j1");
  twice.max_attempts = 2;
  enqueue(twice);
  given_running("j1");
  expect_accepted(yield("j1"));
  ASSERT_EQ(claim("w2"), "j1");
  expect_accepted(start("j1"));
  expect_accepted(step_start("j1", "FETCH"));
  Decision d = step_fail("j1", "FETCH", true);
  ASSERT_EQ(Given::types(d), (Types{"StepFailed", "AttemptFailed", "RetryScheduled"}));
  const auto* retry = d.events[2].payload.AsRetryScheduled();
  EXPECT_EQ(retry->attempt, 3);
  EXPECT_EQ(retry->not_before_ms, g.now_ms + g.policy.retry_backoff_s * kMsPerS)
      << "the first failure's backoff: the yield was no failure";
}

TEST_F(JobYield, TheYieldingWorkersTokenStopsWorking) {
  given_fetched();
  std::string old_token = token["j1"];
  expect_accepted(yield("j1"));
  expect_invalid_transition(g.run(jobs::Heartbeat{"j1", old_token, std::nullopt}),
                            AttemptState::kQueued);
  expect_invalid_transition(g.run(jobs::StepStart{"j1", "VALIDATE", old_token}),
                            AttemptState::kQueued);
}

TEST_F(JobYield, ACancelRequestedEndsTheAttemptCancelledInstead) {
  given_fetched();
  expect_accepted(cancel("j1", "wrong window"));
  Decision d = yield("j1");
  expect_accepted(d);
  ASSERT_EQ(Given::types(d), (Types{"AttemptCancelled"}));
  const auto* ev = d.events[0].payload.AsAttemptCancelled();
  EXPECT_EQ(ev->cause, "yield");
  EXPECT_EQ(ev->reason, "wrong window");
  EXPECT_EQ(ev->last_completed_step, "FETCH");
  EXPECT_TRUE(ev->cleanup_needed);
  EXPECT_EQ(ev->worker, "w1");
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
  EXPECT_EQ(job_of("j1").attempts.size(), 1u) << "no new attempt after a cancel";
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
}

TEST_F(JobYield, TheEventsReplayToTheSameJob) {
  given_fetched();
  expect_accepted(yield("j1"));
  State again = replay(g.log());
  EXPECT_EQ(jobs::to_json(again.jobs.by_id.at("j1")).dump(), snapshot_of("j1"));
  EXPECT_EQ(again.jobs.count_by_state, g.state.jobs.count_by_state);
  EXPECT_EQ(ready_ids(again.jobs), (std::vector<std::string>{"j1"}));
}

TEST_F(JobYield, AYieldedAttemptSurvivesTheStateSnapshot) {
  given_fetched();
  expect_accepted(yield("j1"));
  State restored;
  Status st = decode_snapshot(encode_snapshot(g.state), &restored);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(restored.jobs.by_id.count("j1"), 1u);
  EXPECT_EQ(restored.jobs.by_id.at("j1").attempts[0].state, AttemptState::kYielded);
  EXPECT_EQ(jobs::to_json(restored.jobs.by_id.at("j1")).dump(), snapshot_of("j1"));
  EXPECT_EQ(ready_ids(restored.jobs), (std::vector<std::string>{"j1"}));
}

TEST_F(JobYield, EveryEventOfAYieldPassesTheTransitionChecker) {
  given_fetched();
  State before = g.state;
  expect_accepted(yield("j1"));
  const fb::Event* e = nullptr;
  ASSERT_TRUE(decode_event(g.log().back(), &e).ok());
  Status st = check_transition(before, *e);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST_F(JobYield, YieldedIsAStateName) {
  EXPECT_EQ(std::string(jobs::to_string(AttemptState::kYielded)), "YIELDED");
  EXPECT_EQ(jobs::attempt_state_from("YIELDED"), AttemptState::kYielded);
  EXPECT_TRUE(jobs::is_terminal(AttemptState::kYielded));
  EXPECT_EQ(jobs::zero_counts_by_state().count("YIELDED"), 1u) << "metrics list every state";
}

// ---- refused ----

TEST_F(JobYield, AYieldWhileAStepIsRunningIsRefused) {
  given_running("j1");
  expect_accepted(step_start("j1", "FETCH"));
  std::string before = snapshot_of("j1");
  Decision d = yield("j1");
  expect_refused(d, 409, "step_running");
  EXPECT_EQ(d.rejection->extra.value("step", ""), "FETCH");
  EXPECT_NE(d.rejection->message.find("FETCH"), std::string::npos) << d.rejection->message;
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobYield, AYieldWithATokenThatIsNotTheLeasesIsRefused) {
  given_fetched();
  std::string before = snapshot_of("j1");
  expect_refused(g.run(jobs::Yield{"j1", "not-the-token", ""}), 409, "lease_mismatch");
  EXPECT_EQ(snapshot_of("j1"), before);
}

TEST_F(JobYield, AYieldIsRefusedInEveryOtherState) {
  given_stale("s", "t-s");
  expect_invalid_transition(yield("s"), AttemptState::kStale);

  given_succeeded("ok", "t-ok");
  expect_invalid_transition(yield("ok"), AttemptState::kSucceeded);

  given_failed("f", "t-f");
  expect_invalid_transition(yield("f"), AttemptState::kFailed);

  given_cancelled("c", "t-c");
  expect_invalid_transition(yield("c"), AttemptState::kCancelled);

  enqueue("l", "t-l");
  ASSERT_EQ(claim(), "l");
  expect_invalid_transition(yield("l"), AttemptState::kLeased);

  enqueue("q", "t-q");
  expect_invalid_transition(yield("q"), AttemptState::kQueued);

  expect_refused(yield("nobody"), 404, "not_found");
}

TEST_F(JobYield, RunningOffersYieldAmongItsCommands) {
  given_running("j1");
  Decision d = release("j1");
  expect_invalid_transition(d, AttemptState::kRunning);
  const auto& allowed = d.rejection->extra["allowed"];
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), "yield"), allowed.end()) << allowed.dump();
}

TEST_F(JobYield, AReasonLongerThanTheLimitIsRefused) {
  given_fetched();
  Decision d = yield("j1", std::string(jobs::kReasonBytesMax + 1, 'r'));
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "reason");
  expect_accepted(yield("j1", std::string(jobs::kReasonBytesMax, 'r')));
}

}  // namespace
}  // namespace runledger::job_tests
