// Pipeline steps (docs/domain.md 1.5): the plan is the order, the worker does
// not choose it; outputs and errors are recorded with the step.
#include "tests/projections/job_testing.h"

namespace runledger::job_tests {
namespace {

using JobSteps = JobTest;
using runledger::testing::Given;

TEST_F(JobSteps, StepsRunInPlanOrderAndTheLastOneSucceedsTheAttempt) {
  given_running("j1");
  const std::vector<std::string> plan = {"FETCH", "VALIDATE", "LOAD", "AGGREGATE"};
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(Given::types(step_start("j1", plan[i])), Types{"StepStarted"});
    Decision done = step_done("j1", plan[i]);
    if (i + 1 < plan.size()) {
      EXPECT_EQ(Given::types(done), Types{"StepSucceeded"});
      EXPECT_EQ(state_of("j1"), AttemptState::kRunning);
    } else {
      EXPECT_EQ(Given::types(done), (Types{"StepSucceeded", "AttemptSucceeded"}));
    }
  }
  EXPECT_EQ(state_of("j1"), AttemptState::kSucceeded);
  EXPECT_EQ(job_of("j1").latest().last_completed_step, "AGGREGATE");
}

TEST_F(JobSteps, StepTimesComeFromTheEventsRecordingThem) {
  given_running("j1");
  int64_t started = g.now_ms;
  step_start("j1", "FETCH");
  advance_s(7);
  step_done("j1", "FETCH");
  const jobs::Step& st = job_of("j1").latest().steps[0];
  EXPECT_EQ(st.state, StepState::kDone);
  EXPECT_EQ(st.started_at_ms, started);
  EXPECT_EQ(st.finished_at_ms, started + 7 * kMsPerS);
}

TEST_F(JobSteps, AStepCannotStartWhileAnotherRuns) {
  given_running("j1");
  step_start("j1", "FETCH");
  Decision d = step_start("j1", "VALIDATE");
  expect_invalid_transition(d, AttemptState::kRunning);
  EXPECT_NE(d.rejection->message.find("FETCH is RUNNING"), std::string::npos)
      << d.rejection->message;
}

TEST_F(JobSteps, AStepOutOfOrderIsRefusedAndNamesTheNextOne) {
  given_running("j1");
  Decision d = step_start("j1", "LOAD");
  expect_invalid_transition(d, AttemptState::kRunning);
  EXPECT_NE(d.rejection->message.find("the next step is FETCH"), std::string::npos)
      << d.rejection->message;
}

TEST_F(JobSteps, ADoneStepDoesNotRunTwice) {
  given_running("j1");
  step_start("j1", "FETCH");
  step_done("j1", "FETCH");
  expect_invalid_transition(step_start("j1", "FETCH"), AttemptState::kRunning);
  expect_invalid_transition(step_done("j1", "FETCH"), AttemptState::kRunning);
}

TEST_F(JobSteps, AStepMustRunBeforeItIsDoneOrFailed) {
  given_running("j1");
  expect_invalid_transition(step_done("j1", "FETCH"), AttemptState::kRunning);
  expect_invalid_transition(step_fail("j1", "FETCH", true), AttemptState::kRunning);
  EXPECT_EQ(job_of("j1").latest().steps[0].state, StepState::kPending);
}

TEST_F(JobSteps, AStepNotInThePlanIsNotFound) {
  given_running("j1");
  Decision d = step_start("j1", "DEPLOY");
  expect_refused(d, 404, "step_not_found");
  expect_refused(step_done("j1", "DEPLOY"), 404, "step_not_found");
  expect_refused(step_fail("j1", "DEPLOY", false), 404, "step_not_found");
}

TEST_F(JobSteps, StepOutputIsKeptAndShownAsJson) {
  given_running("j1");
  step_start("j1", "FETCH");
  step_done("j1", "FETCH", R"({"rows":1200,"artifact":"s3://bucket/x"})");
  nlohmann::json step = view_of("j1")["steps"][0];
  EXPECT_EQ(step["output"], nlohmann::json({{"rows", 1200}, {"artifact", "s3://bucket/x"}}));
  EXPECT_FALSE(step.contains("error"));
}

TEST_F(JobSteps, AnOversizedOutputIsRefused) {
  given_running("j1");
  step_start("j1", "FETCH");
  std::string big = "\"" + std::string(jobs::kOutputBytesMax, 'x') + "\"";
  Decision d = step_done("j1", "FETCH", big);
  expect_refused(d, 422, "invalid_field");
  EXPECT_EQ(d.rejection->extra["field"], "output");
  EXPECT_EQ(job_of("j1").latest().steps[0].state, StepState::kRunning);
}

TEST_F(JobSteps, AFailedStepStopsTheAttemptAndKeepsTheError) {
  given_running("j1");
  step_start("j1", "FETCH");
  step_done("j1", "FETCH");
  step_start("j1", "VALIDATE");
  step_fail("j1", "VALIDATE", false, "3 rows without a key");
  const jobs::Attempt& a = job_of("j1").latest();
  EXPECT_EQ(a.state, AttemptState::kFailed);
  EXPECT_EQ(a.steps[1].state, StepState::kFailed);
  EXPECT_EQ(a.steps[1].error, "3 rows without a key");
  EXPECT_EQ(a.steps[2].state, StepState::kPending);
  EXPECT_NE(a.error.find("3 rows without a key"), std::string::npos);
  EXPECT_EQ(a.last_completed_step, "FETCH");
  EXPECT_EQ(job_of("j1").attempts.size(), 1u) << "not retryable: no new attempt";
}

TEST_F(JobSteps, ALongErrorIsCutWithoutSplittingACharacter) {
  given_running("j1");
  step_start("j1", "FETCH");
  // Two-byte characters pushed across the limit by one leading byte.
  std::string error = "x";
  while (error.size() <= jobs::kErrorBytesMax + 8) error += "\xC3\xA9";  // é
  step_fail("j1", "FETCH", false, error);
  const std::string& kept = job_of("j1").latest().steps[0].error;
  EXPECT_LE(kept.size(), jobs::kErrorBytesMax);
  EXPECT_GE(kept.size(), jobs::kErrorBytesMax - 1);
  EXPECT_NE(static_cast<unsigned char>(kept.back()), 0xC3) << "cut inside a character";
  EXPECT_NO_THROW((void)nlohmann::json(kept).dump());
}

TEST_F(JobSteps, StartRecordsTheExecutionHandle) {
  given_running("j1");
  EXPECT_EQ(job_of("j1").latest().execution_handle, handle("j1"));
  EXPECT_EQ(view_of("j1")["execution_handle"], handle("j1"));
}

}  // namespace
}  // namespace runledger::job_tests
