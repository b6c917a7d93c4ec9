// Cancel (docs/domain.md 1.6): at once when QUEUED, else requested and honoured
// at the next boundary: start, step start, step done with steps left, the
// worker's ack, a release, or the expiry of a LEASED lease.
#include "http/rejection_status.h"
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobCancel = JobTest;
using runledger::testing::Given;

TEST_F(JobCancel, AQueuedAttemptIsCancelledAtOnce) {
  enqueue("j1", "t1");
  g.actor = "alice";
  Decision d = cancel("j1", "wrong window");
  ASSERT_EQ(Given::types(d), Types{"AttemptCancelled"});
  EXPECT_EQ(d.events[0].payload.AsAttemptCancelled()->cause, "queued");
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.state, AttemptState::kCancelled);
  EXPECT_TRUE(a.cancel_requested);
  EXPECT_EQ(a.cancel_reason, "wrong window");
  EXPECT_EQ(a.cancel_requested_by, "alice");
  EXPECT_FALSE(a.cleanup_needed);
  EXPECT_TRUE(g.state.jobs.ready.empty());
  EXPECT_EQ(claim(), "");
}

TEST_F(JobCancel, ALeasedAttemptOnlyRecordsTheRequest) {
  enqueue("j1");
  claim();
  g.actor = "bob";
  Decision d = cancel("j1", "duplicate");
  ASSERT_EQ(Given::types(d), Types{"CancelRequested"});
  EXPECT_EQ(state_of("j1"), AttemptState::kLeased);
  nlohmann::json v = view_of("j1");
  EXPECT_EQ(v["state"], "LEASED");
  EXPECT_EQ(v["cancel_requested"], true);
  EXPECT_EQ(v["cancel_reason"], "duplicate");
  EXPECT_EQ(job_of("j1").latest().cancel_requested_by, "bob");
  expect_accepted(heartbeat("j1"));  // the worker learns it from the heartbeat reply
}

TEST_F(JobCancel, AStartWithACancelPendingCancelsInsteadAndTellsTheWorker) {
  enqueue("j1", "t1");
  claim();
  cancel("j1");
  Decision d = start("j1");
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(http::http_status(d.rejection->code), 409);
  EXPECT_EQ(code_name(d.rejection->code), "cancelled");
  ASSERT_EQ(Given::types(d), Types{"AttemptCancelled"}) << "the cancellation is still recorded";
  EXPECT_EQ(d.events[0].payload.AsAttemptCancelled()->cause, "start");
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
  EXPECT_FALSE(job_of("j1").latest().cleanup_needed) << "nothing had started";
  EXPECT_EQ(g.state.jobs.holder.count("t1"), 0u);
}

// The refusal shows the reason as the job's view does: null when none was
// given, the text when one was.
TEST_F(JobCancel, TheCancelledRefusalCarriesTheReasonAsTheViewShowsIt) {
  enqueue("j1");
  claim();
  cancel("j1", "");
  Decision without = start("j1");
  ASSERT_TRUE(without.rejection);
  EXPECT_EQ(code_name(without.rejection->code), "cancelled");
  EXPECT_TRUE(without.rejection->extra["cancel_reason"].is_null())
      << without.rejection->extra.dump();
  EXPECT_TRUE(view_of("j1")["cancel_reason"].is_null());

  given_running("j2", "t2");
  cancel("j2", "wrong window");
  Decision with = step_start("j2", "FETCH");
  ASSERT_TRUE(with.rejection);
  EXPECT_EQ(code_name(with.rejection->code), "cancelled");
  EXPECT_EQ(with.rejection->extra["cancel_reason"], "wrong window");
  EXPECT_EQ(view_of("j2")["cancel_reason"], "wrong window");
}

TEST_F(JobCancel, AStepStartWithACancelPendingCancelsAtTheBoundary) {
  given_running("j1");
  step_start("j1", "FETCH");
  step_done("j1", "FETCH");
  cancel("j1");
  Decision d = step_start("j1", "VALIDATE");
  ASSERT_TRUE(d.rejection);
  EXPECT_EQ(code_name(d.rejection->code), "cancelled");
  ASSERT_EQ(Given::types(d), Types{"AttemptCancelled"});
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.state, AttemptState::kCancelled);
  EXPECT_EQ(a.last_completed_step, "FETCH");
  EXPECT_TRUE(a.cleanup_needed) << "FETCH may have left partial output";
  EXPECT_EQ(a.steps[1].state, StepState::kPending);
}

TEST_F(JobCancel, StepDoneWithStepsLeftCancelsRightThere) {
  given_running("j1");
  step_start("j1", "FETCH");
  cancel("j1");
  Decision d = step_done("j1", "FETCH");
  EXPECT_FALSE(d.rejection) << "the step's result is accepted";
  ASSERT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptCancelled"}));
  const auto* ev = d.events[1].payload.AsAttemptCancelled();
  EXPECT_EQ(ev->cause, "step_boundary");
  EXPECT_EQ(ev->last_completed_step, "FETCH");
  EXPECT_TRUE(ev->cleanup_needed);
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
  EXPECT_EQ(view_of("j1")["last_completed_step"], "FETCH");
}

TEST_F(JobCancel, TheLastStepDoneSucceedsEvenWithACancelPending) {
  given_running("j1");
  for (const char* step : {"FETCH", "VALIDATE", "LOAD"}) {
    step_start("j1", step);
    step_done("j1", step);
  }
  step_start("j1", "AGGREGATE");
  cancel("j1");
  Decision d = step_done("j1", "AGGREGATE");
  EXPECT_EQ(Given::types(d), (Types{"StepSucceeded", "AttemptSucceeded"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  EXPECT_TRUE(job_of("j1").latest().cancel_requested) << "requested is not cancelled";
}

TEST_F(JobCancel, CancelAckEndsARunningAttemptAndMarksTheInterruptedStep) {
  given_running("j1");
  step_start("j1", "FETCH");
  cancel("j1");
  Decision d = cancel_ack("j1");
  ASSERT_EQ(Given::types(d), Types{"AttemptCancelled"});
  EXPECT_EQ(d.events[0].payload.AsAttemptCancelled()->cause, "ack");
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.state, AttemptState::kCancelled);
  EXPECT_TRUE(a.cleanup_needed);
  EXPECT_EQ(a.last_completed_step, "");
  EXPECT_EQ(a.steps[0].state, StepState::kFailed);
  EXPECT_EQ(a.steps[0].error, "cancelled");
}

TEST_F(JobCancel, CancelAckWithoutARequestIsRefused) {
  given_running("j1");
  Decision d = cancel_ack("j1");
  expect_invalid_transition(d, AttemptState::kRunning);
  EXPECT_NE(d.rejection->message.find("no cancel was requested"), std::string::npos);
  EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
}

TEST_F(JobCancel, ReleaseWithACancelPendingCancels) {
  enqueue("j1");
  claim();
  cancel("j1");
  Decision d = release("j1");
  EXPECT_EQ(Given::types(d), (Types{"LeaseReleased", "AttemptCancelled"}));
  EXPECT_EQ(state_of("j1"), AttemptState::kCancelled);
  EXPECT_EQ(claim(), "");
}

TEST_F(JobCancel, ASecondRequestChangesNothing) {
  enqueue("j1");
  claim();
  cancel("j1", "first reason");
  Decision d = cancel("j1", "second reason");
  EXPECT_FALSE(d.rejection);
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(job_of("j1").latest().cancel_reason, "first reason");
}

TEST_F(JobCancel, AnOversizedReasonIsRefused) {
  enqueue("j1");
  Decision d = cancel("j1", std::string(jobs::kReasonBytesMax + 1, 'r'));
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "reason");
  EXPECT_EQ(state_of("j1"), AttemptState::kQueued);
}

TEST_F(JobCancel, ARetryableFailureWithACancelPendingIsNotRetried) {
  given_running("j1");
  step_start("j1", "FETCH");
  cancel("j1");
  Decision d = step_fail("j1", "FETCH", true);
  EXPECT_EQ(Given::types(d), (Types{"StepFailed", "AttemptFailed"}));
  EXPECT_EQ(job_of("j1").attempts.size(), 1u);
}

}  // namespace
}  // namespace runledger::job_tests
